// copy, reverse and sort: a source of L symbols uniform over `vocab`; they differ only in how the
// target, and the source positions answering each target symbol, follow from the source.
#include <algorithm>
#include <map>

#include "task_factories.h"

namespace lengen {

namespace {

struct Rule {
  const char* name;
  Symbols (*target)(const Symbols& src);
  // Source index answering target symbol j; a target past the source's end (a reference file's
  // target longer than its source) has none.
  int64_t (*answer)(size_t j, size_t src_size);
};

class UniformSourceTask : public Task {
 public:
  UniformSourceTask(const Rule& rule, const CheckedParams& params)
      : rule_(rule), params_(params.values()), vocab_(params.integer("vocab")) {}

  std::string name() const override { return rule_.name; }
  int64_t num_symbols() const override { return vocab_; }
  TaskParams params() const override { return params_; }

  Sample sample(Rng& rng, int64_t length) const override {
    Symbols src = uniform_symbols(rng, length, 0, static_cast<int32_t>(vocab_ - 1));
    Symbols trg = rule_.target(src);
    return {std::move(src), std::move(trg)};
  }

  std::optional<AnswerSources> answer_sources(const Sample& sample) const override {
    AnswerSources sources(sample.trg.size());
    if (rule_.answer == nullptr) {  // sort: every source position holding the symbol output
      std::map<int32_t, std::vector<int64_t>> positions;
      for (size_t i = 0; i < sample.src.size(); ++i)
        positions[sample.src[i]].push_back(static_cast<int64_t>(i));
      for (size_t j = 0; j < sources.size(); ++j) sources[j] = positions[sample.trg[j]];
      return sources;
    }
    for (size_t j = 0; j < sources.size() && j < sample.src.size(); ++j)
      sources[j] = {rule_.answer(j, sample.src.size())};
    return sources;
  }

 private:
  const Rule& rule_;
  TaskParams params_;
  int64_t vocab_;
};

const Rule kRules[] = {
    {"copy", [](const Symbols& src) { return src; },
     [](size_t j, size_t) { return static_cast<int64_t>(j); }},
    {"reverse", [](const Symbols& src) { return Symbols(src.rbegin(), src.rend()); },
     [](size_t j, size_t size) { return static_cast<int64_t>(size - 1 - j); }},
    {"sort",
     [](const Symbols& src) {
       Symbols sorted = src;
       std::sort(sorted.begin(), sorted.end());
       return sorted;
     },
     nullptr},
};

template <int kRule>
TaskDefinition definition() {
  return {kRules[kRule].name,
          {{"vocab", 32, 2, kMaxTaskSymbols, true, "source symbols, drawn uniformly"}},
          [](const CheckedParams& params, uint64_t) -> std::unique_ptr<Task> {
            return std::make_unique<UniformSourceTask>(kRules[kRule], params);
          }};
}

}  // namespace

TaskDefinition copy_task() { return definition<0>(); }
TaskDefinition reverse_task() { return definition<1>(); }
TaskDefinition sort_task() { return definition<2>(); }

}  // namespace lengen
