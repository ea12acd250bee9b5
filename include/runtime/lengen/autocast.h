#pragma once
// bf16 mixed precision through LibTorch's autocast: matrix products run in bfloat16, weights,
// optimizer state, attention scores and normalizers stay float32.
#include <c10/core/DeviceType.h>

namespace lengen {

// Sets autocast on `device` for the scope's lifetime; an enabled outermost scope drops the cache
// of bf16 weight copies on exit, since the optimizer changes the weights after it.
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
