#include "lengen/autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace lengen {

namespace {

// LibTorch 2.4 replaced the per-device functions (set_enabled for CUDA, set_cpu_enabled, ...)
// with ones that take the device type; 1.13 (Debian) has only the old ones.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool is_enabled_on(c10::DeviceType device) { return at::autocast::is_autocast_enabled(device); }
void set_enabled_on(c10::DeviceType device, bool enabled) {
  at::autocast::set_autocast_dtype(device, at::kBFloat16);
  at::autocast::set_autocast_enabled(device, enabled);
}
#else
bool is_enabled_on(c10::DeviceType device) {
  return device == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
void set_enabled_on(c10::DeviceType device, bool enabled) {
  if (device == c10::DeviceType::CUDA) {
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(enabled);
  }
}
#endif

}  // namespace

// The state is set and restored only when the scope changes it: the attention's fp32 scope runs
// on every call, and mostly finds autocast already off.
AutocastScope::AutocastScope(c10::DeviceType device, bool enabled)
    : device_(device), enabled_(enabled), was_enabled_(is_enabled_on(device)) {
  if (enabled_ != was_enabled_) set_enabled_on(device_, enabled_);
  if (enabled_) at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (enabled_ && at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  if (enabled_ != was_enabled_) set_enabled_on(device_, was_enabled_);
}

bool autocast_enabled(c10::DeviceType device) { return is_enabled_on(device); }

}  // namespace lengen
