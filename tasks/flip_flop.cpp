// flip-flop: a tape of (command, bit) pairs; the target is the bit of the last write.
//
// Format, as in the reference generator: for length L there are n = L/2 pairs (L odd rounds
// down). The first command is always write, the last is read and its bit is dropped, so the
// source has 2n - 1 symbols: L - 1 for even L, L - 2 for odd L. Symbols: bits 0 and 1, then
// the commands write = 2, ignore = 3, read = 4. Like every task the sequence is BOS src SEP trg
// EOS: we keep the SEP (the reference has none) so all tasks decode the same way.
#include "task_factories.h"

namespace lengen {

namespace {

constexpr int32_t kWrite = 2;
constexpr int32_t kIgnore = 3;
constexpr int32_t kRead = 4;

class FlipFlopTask : public Task {
 public:
  explicit FlipFlopTask(const CheckedParams& params)
      : params_(params.values()), write_prob_(params.real("write_prob")) {}

  std::string name() const override { return "flip_flop"; }
  int64_t num_symbols() const override { return kRead + 1; }
  // Room for the first write and the final read.
  int64_t min_length() const override { return 4; }
  std::optional<int64_t> source_length(int64_t length) const override { return 2 * (length / 2) - 1; }
  TaskParams params() const override { return params_; }

  Sample sample(Rng& rng, int64_t length) const override {
    const int64_t pairs = length / 2;
    Symbols src;
    src.reserve(static_cast<size_t>(2 * pairs - 1));
    int32_t written = 0;
    for (int64_t i = 0; i + 1 < pairs; ++i) {
      int32_t command = i == 0 || bernoulli(rng, write_prob_) ? kWrite : kIgnore;
      int32_t bit = static_cast<int32_t>(uniform_int(rng, 0, 1));
      if (command == kWrite) written = bit;
      src.push_back(command);
      src.push_back(bit);
    }
    src.push_back(kRead);
    return {std::move(src), {written}};
  }

  // The bit of the last write (a write command at an even index, its bit after it).
  std::optional<AnswerSources> answer_sources(const Sample& sample) const override {
    int64_t bit = -1;
    for (size_t i = 0; i + 1 < sample.src.size(); i += 2) {
      if (sample.src[i] == kWrite) bit = static_cast<int64_t>(i + 1);
    }
    if (bit < 0) return std::nullopt;
    return AnswerSources{{bit}};
  }

 private:
  TaskParams params_;
  double write_prob_;
};

}  // namespace

TaskDefinition flip_flop_task() {
  return {"flip_flop",
          {{"write_prob", 0.1, 0.0, 1.0, false,
            "probability that a command after the first is a write (else ignore); 0.1 as the reference's "
            "experiments"}},
          make_from_params<FlipFlopTask>};
}

}  // namespace lengen
