#pragma once
// The framing parameter of the tasks that label every source position (n-back, local count): by
// default a label is predicted in place at each source symbol, as the reference trains them; with
// labels_after_source = 1 the labels are generated after the source like any other target, which
// makes label t a symbol L + 1 tokens back: a delayed copy, a different task.
#include "lengen/task.h"
#include "lengen/task_parameters.h"
#include "task_params.h"

namespace lengen {

TaskParameter labels_after_source_parameter();

// The framing `params` (checked against a list holding labels_after_source_parameter()) asks for.
Framing label_framing(const CheckedParams& params);

}  // namespace lengen
