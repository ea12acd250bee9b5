#pragma once
// bf16 mixed precision (train.dtype "bfloat16") through LibTorch's autocast: inside an enabled
// scope, matrix products on the given device run in bfloat16 while weights, optimizer state, the
// attention scores and the normalizers stay float32.
#include <c10/core/DeviceType.h>

namespace lengen {

// Sets autocast on `device` to `enabled` for the scope's lifetime (thread-local, as autocast
// is) and restores the previous state after. An enabled outermost scope also drops autocast's
// cache of bf16 weight copies on exit, since the optimizer changes the weights after it.
class AutocastScope {
 public:
  AutocastScope(c10::DeviceType device, bool enabled);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool enabled_;
  bool was_enabled_;
};

// Whether autocast is on for `device` in this thread.
bool autocast_enabled(c10::DeviceType device);

}  // namespace lengen
