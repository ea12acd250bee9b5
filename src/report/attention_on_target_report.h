#pragma once
// The report's section on attention on the target (results.json's `attention_on_target`).
#include <cstdint>
#include <string>
#include <vector>

#include "lengen/report.h"

namespace lengen {

// Per layer, tables and plots against length of the best head's and the mean over heads' weight on
// the answering keys, written as ATTENTION_ON_TARGET_LAYER<l>_{BEST,MEAN}.{csv,dat,gp,png,svg} in
// `out_dir`. Runs of tasks without a known answering key are named as such. "" when no run has
// the measurement. `style`: the report's plot style; its train_length (0 when the runs' differ)
// also gives the tables their multiples.
std::string attention_on_target_section(const std::vector<RunResults>& runs, const std::string& decode,
                                        const std::string& out_dir, const std::string& gnuplot,
                                        const PlotAxes& style);

}  // namespace lengen
