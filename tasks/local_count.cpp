// local count: runs of one symbol, no two adjacent runs alike; the target at each position
// is its 0-based index within its run. Run lengths are uniform in [2, max_reps].
//
// Sources have exactly L symbols, so the runs are fitted to L: the last run is cut to what is
// left, and a run that would leave a single symbol behind is made one longer (or, at max_reps,
// one shorter). Only with max_reps = 2 and odd L does that leave one run of length 1.
// Sources and targets share the symbol range [0, max(vocab, max_reps)). The labels are predicted
// in place (label_framing.h). The reference draws floor(L / ((max_reps + 2) / 2)) runs instead, so
// its sources only average about L symbols; files from it are read whatever their lengths.
#include <algorithm>
#include <limits>

#include "label_framing.h"
#include "task_factories.h"

namespace lengen {

namespace {

constexpr int64_t kMinRun = 2;

class LocalCountTask : public LabelTask {
 public:
  explicit LocalCountTask(const CheckedParams& params)
      : LabelTask("local_count", params),
        vocab_(params.integer("vocab")),
        max_reps_(params.integer("max_reps")) {}

  int64_t num_symbols() const override { return std::max(vocab_, max_reps_); }
  int64_t min_length() const override { return kMinRun; }
  std::optional<int64_t> source_length(int64_t) const override { return std::nullopt; }

  Sample sample(Rng& rng, int64_t length) const override {
    Sample sample;
    sample.framing = framing();
    sample.src.reserve(static_cast<size_t>(length));
    sample.trg.reserve(static_cast<size_t>(length));
    int32_t previous = -1;
    for (int64_t left = length; left > 0;) {
      int64_t run = std::min(uniform_int(rng, kMinRun, max_reps_), left);
      if (left - run == 1) run += run < max_reps_ ? 1 : -1;
      // Uniform over the vocab minus the previous run's symbol.
      int32_t symbol = static_cast<int32_t>(uniform_int(rng, 0, vocab_ - (previous < 0 ? 1 : 2)));
      if (previous >= 0 && symbol >= previous) ++symbol;
      for (int32_t index = 0; index < run; ++index) {
        sample.src.push_back(symbol);
        sample.trg.push_back(index);
      }
      previous = symbol;
      left -= run;
    }
    return sample;
  }

 private:
  int64_t vocab_;
  int64_t max_reps_;
};

}  // namespace

TaskDefinition local_count_task() {
  constexpr double kMax = std::numeric_limits<int32_t>::max();
  return {"local_count",
          {{"vocab", 16, 2, kMaxTaskSymbols, true, "source symbols; adjacent runs differ"},
           {"max_reps", 8, kMinRun, kMax, true, "longest run; run lengths are uniform in [2, max_reps]"},
           labels_after_source_parameter()},
          make_from_params<LocalCountTask>};
}

}  // namespace lengen
