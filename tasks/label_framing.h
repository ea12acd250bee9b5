#pragma once
// The tasks that label every source position (n-back, local count): by default a label is
// predicted in place at each source symbol, as the reference trains them; with
// labels_after_source = 1 the labels are generated after the source like any other target, which
// makes label t a symbol L + 1 tokens back: a delayed copy, a different task.
#include <string>

#include "lengen/task.h"
#include "lengen/task_parameters.h"
#include "task_params.h"

namespace lengen {

TaskParameter labels_after_source_parameter();

// What such a task shares: its name, its parameters (a list holding labels_after_source_parameter())
// and the framing they ask for, which every sample it makes carries.
class LabelTask : public Task {
 public:
  LabelTask(std::string name, const CheckedParams& params);
  std::string name() const override { return name_; }
  Framing framing() const override { return framing_; }
  TaskParams params() const override { return params_; }

 private:
  std::string name_;
  TaskParams params_;
  Framing framing_;
};

}  // namespace lengen
