// parity: L random bits; the target is one symbol, 1 when the number of ones is even, else 0
// (the reference's convention).
#include <algorithm>

#include "task_factories.h"

namespace lengen {

namespace {

class ParityTask : public Task {
 public:
  std::string name() const override { return "parity"; }
  int64_t num_symbols() const override { return 2; }
  TaskParams params() const override { return {}; }

  Sample sample(Rng& rng, int64_t length) const override {
    Symbols src = uniform_symbols(rng, length, 0, 1);
    int64_t ones = std::count(src.begin(), src.end(), 1);
    return {std::move(src), {ones % 2 == 0 ? 1 : 0}};
  }
};

}  // namespace

TaskDefinition parity_task() {
  return {"parity", {}, [](const CheckedParams&, uint64_t) -> std::unique_ptr<Task> {
            return std::make_unique<ParityTask>();
          }};
}

}  // namespace lengen
