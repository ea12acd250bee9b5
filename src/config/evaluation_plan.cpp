#include "lengen/evaluation_plan.h"

#include <algorithm>

namespace lengen {

std::vector<int64_t> evaluation_lengths(const Config& config) {
  if (!config.eval.lengths.empty()) {
    // Each length once, in the order given: a repeat would only evaluate the same samples again.
    std::vector<int64_t> lengths;
    for (int64_t length : config.eval.lengths) {
      if (std::find(lengths.begin(), lengths.end(), length) == lengths.end()) lengths.push_back(length);
    }
    return lengths;
  }
  const int64_t base = config.task.len_max;
  return {base, 2 * base, 4 * base, 8 * base};
}

int64_t samples_at_length(const EvalConfig& eval, int64_t length) {
  return eval.long_from > 0 && length >= eval.long_from ? eval.long_samples : eval.samples;
}

}  // namespace lengen
