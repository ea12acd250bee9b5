// n-back: L symbols; the target at each position is the symbol n positions earlier.
// Symbol 0 stands for "nothing that far back", so sources use 1..vocab-1 (as the reference).
#include <limits>

#include "sampling.h"
#include "task_factories.h"

namespace lengen {

namespace {

constexpr int32_t kNothing = 0;

class NBackTask : public Task {
 public:
  explicit NBackTask(const CheckedParams& params)
      : params_(params.values()), vocab_(params.integer("vocab")), n_(params.integer("n")) {}

  std::string name() const override { return "n_back"; }
  int64_t num_symbols() const override { return vocab_; }
  // At least one position has a symbol n back.
  int64_t min_length() const override { return n_ + 1; }
  TaskParams params() const override { return params_; }

  Sample sample(Rng& rng, int64_t length) const override {
    Symbols src = uniform_symbols(rng, length, kNothing + 1, static_cast<int32_t>(vocab_ - 1));
    Symbols trg(src.size(), kNothing);
    for (size_t i = static_cast<size_t>(n_); i < src.size(); ++i) trg[i] = src[i - n_];
    return {std::move(src), std::move(trg)};
  }

 private:
  TaskParams params_;
  int64_t vocab_;
  int64_t n_;
};

}  // namespace

TaskDefinition n_back_task() {
  constexpr double kMax = std::numeric_limits<int32_t>::max();
  return {"n_back",
          {{"vocab", 32, 2, kMax, true, "symbols, 0 standing for nothing n back; sources use 1..vocab-1"},
           {"n", 2, 1, kMax, true, "how far back the target looks"}},
          [](const CheckedParams& params, uint64_t) -> std::unique_ptr<Task> {
            return std::make_unique<NBackTask>(params);
          }};
}

}  // namespace lengen
