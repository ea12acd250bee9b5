// n-back: a "nothing" symbol 0 and then L symbols; the label of each source position is the
// symbol n positions earlier (0 where there is none), as the reference writes it. Sources use
// 1..vocab-1, so 0 only ever means "nothing that far back". The labels are predicted in place
// (label_framing.h).
#include <limits>

#include "label_framing.h"
#include "task_factories.h"

namespace lengen {

namespace {

constexpr int32_t kNothing = 0;

class NBackTask : public LabelTask {
 public:
  explicit NBackTask(const CheckedParams& params)
      : LabelTask("n_back", params), vocab_(params.integer("vocab")), n_(params.integer("n")) {}

  int64_t num_symbols() const override { return vocab_; }
  // At least one position has a symbol n back.
  int64_t min_length() const override { return n_ + 1; }
  // The leading "nothing" and the L symbols.
  std::optional<int64_t> source_length(int64_t length) const override { return length + 1; }

  Sample sample(Rng& rng, int64_t length) const override {
    Sample sample;
    sample.framing = framing();
    sample.src.push_back(kNothing);
    const Symbols drawn = uniform_symbols(rng, length, kNothing + 1, static_cast<int32_t>(vocab_ - 1));
    sample.src.insert(sample.src.end(), drawn.begin(), drawn.end());
    sample.trg.assign(sample.src.size(), kNothing);
    for (size_t i = static_cast<size_t>(n_); i < sample.src.size(); ++i) sample.trg[i] = sample.src[i - n_];
    return sample;
  }

  // Label t is the source symbol n back, where there is one.
  std::optional<AnswerSources> answer_sources(const Sample& sample) const override {
    AnswerSources sources(sample.trg.size());
    for (size_t i = static_cast<size_t>(n_); i < sources.size(); ++i) {
      sources[i].push_back(static_cast<int64_t>(i) - n_);
    }
    return sources;
  }

 private:
  int64_t vocab_;
  int64_t n_;
};

}  // namespace

TaskDefinition n_back_task() {
  constexpr double kMax = std::numeric_limits<int32_t>::max();
  return {"n_back",
          {{"vocab", 16, 2, kMaxTaskSymbols, true,
            "symbols, 0 standing for nothing n back; sources use 1..vocab-1"},
           {"n", 2, 1, kMax, true, "how far back the label looks"},
           labels_after_source_parameter()},
          make_from_params<NBackTask>};
}

}  // namespace lengen
