#pragma once
// The report's section on training: each run's training loss and validation exact match against
// the step, from its log.jsonl, as mean ± std over the runs of each method.
#include <string>
#include <vector>

#include "lengen/report.h"

namespace lengen {

// Tables at a few steps and plots (training_loss, validation_exact_match .{csv,dat,gp,png,svg}
// in `out_dir`) of the steps every run of a method logged. "" when no run has a log.jsonl.
// `style`: the report's title and colours (plots against the step mark no training length).
std::string training_section(const std::vector<RunResults>& runs, const std::string& out_dir,
                             const std::string& gnuplot, const PlotAxes& style);

}  // namespace lengen
