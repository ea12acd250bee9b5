#pragma once
// What an evaluation of a config measures, from the config alone: which lengths, and how many
// samples at each. `lengen eval` runs it; a sweep checks a finished run's results against it.
#include <cstdint>
#include <vector>

#include "lengen/config.h"

namespace lengen {

// The lengths to evaluate: eval.lengths (each once, in its order), or 1x, 2x, 4x, 8x task.len_max
// when it is empty.
std::vector<int64_t> evaluation_lengths(const Config& config);

// Samples evaluated at `length`: eval.long_samples from eval.long_from on, else eval.samples.
int64_t samples_at_length(const EvalConfig& eval, int64_t length);

}  // namespace lengen
