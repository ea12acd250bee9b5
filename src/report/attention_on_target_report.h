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
// the measurement.
std::string attention_on_target_section(const std::vector<RunResults>& runs, const std::string& decode,
                                        const std::string& out_dir, const std::string& gnuplot,
                                        int64_t train_len_max);

}  // namespace lengen
