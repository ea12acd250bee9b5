#pragma once
// Draws shared by several tasks, built only on lengen/rng.h so data is identical everywhere.
#include <cstdint>
#include <vector>

#include "lengen/rng.h"
#include "lengen/task.h"

namespace lengen {

// `length` symbols, each uniform in [low, high].
Symbols uniform_symbols(Rng& rng, int64_t length, int32_t low, int32_t high);

// `count` distinct integers from [0, n), in random order. Costs O(count), not O(n): a partial
// Fisher-Yates shuffle that remembers only the positions it has swapped.
std::vector<int64_t> distinct_indices(Rng& rng, int64_t n, int64_t count);

}  // namespace lengen
