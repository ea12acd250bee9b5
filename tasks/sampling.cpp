#include "sampling.h"

#include <unordered_map>

namespace lengen {

Symbols uniform_symbols(Rng& rng, int64_t length, int32_t low, int32_t high) {
  Symbols symbols(static_cast<size_t>(length));
  for (auto& symbol : symbols) symbol = static_cast<int32_t>(uniform_int(rng, low, high));
  return symbols;
}

std::vector<int64_t> distinct_indices(Rng& rng, int64_t n, int64_t count) {
  std::unordered_map<int64_t, int64_t> swapped;
  auto at = [&](int64_t i) {
    auto it = swapped.find(i);
    return it == swapped.end() ? i : it->second;
  };
  std::vector<int64_t> chosen;
  chosen.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t j = uniform_int(rng, i, n - 1);
    int64_t picked = at(j);
    int64_t displaced = at(i);
    swapped[j] = displaced;
    chosen.push_back(picked);
  }
  return chosen;
}

}  // namespace lengen
