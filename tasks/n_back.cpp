// n-back: L symbols; the target at each position is the symbol n positions earlier.
// Symbol 0 stands for "nothing that far back", so sources use 1..vocab-1 (as the reference).
#include <limits>

#include "sampling.h"
#include "task_factories.h"
#include "task_params.h"

namespace lengen {

namespace {

constexpr int64_t kDefaultVocab = 32;
constexpr int64_t kDefaultN = 2;
constexpr int32_t kNothing = 0;

class NBackTask : public Task {
 public:
  NBackTask(int64_t vocab, int64_t n) : vocab_(vocab), n_(n) {}

  std::string name() const override { return "n_back"; }
  int64_t num_symbols() const override { return vocab_; }
  // At least one position has a symbol n back.
  int64_t min_length() const override { return n_ + 1; }
  TaskParams params() const override {
    return {{"vocab", static_cast<double>(vocab_)}, {"n", static_cast<double>(n_)}};
  }

  Sample sample(Rng& rng, int64_t length) const override {
    Symbols src = uniform_symbols(rng, length, kNothing + 1, static_cast<int32_t>(vocab_ - 1));
    Symbols trg(src.size(), kNothing);
    for (size_t i = static_cast<size_t>(n_); i < src.size(); ++i) trg[i] = src[i - n_];
    return {std::move(src), std::move(trg)};
  }

 private:
  int64_t vocab_;
  int64_t n_;
};

}  // namespace

std::unique_ptr<Task> make_n_back_task(const TaskParams& params, uint64_t) {
  ParamReader reader("n_back", params, {{"vocab", kDefaultVocab}, {"n", kDefaultN}});
  return std::make_unique<NBackTask>(reader.integer("vocab", 2, std::numeric_limits<int32_t>::max()),
                                     reader.integer("n", 1, std::numeric_limits<int32_t>::max()));
}

}  // namespace lengen
