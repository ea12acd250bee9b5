// reverse: the target is the source read backwards.
#include "task_factories.h"
#include "uniform_source_task.h"

namespace lengen {

namespace {

class ReverseTask : public UniformSourceTask {
 public:
  explicit ReverseTask(const CheckedParams& params) : UniformSourceTask("reverse", params) {}

 protected:
  Symbols target_for(const Symbols& src) const override { return Symbols(src.rbegin(), src.rend()); }

 public:
  // Target symbol j is source symbol |src| - 1 - j.
  std::optional<AnswerSources> answer_sources(const Sample& sample) const override {
    // A target symbol past the source's length (a reference file's target longer than its
    // source) has no answering key.
    AnswerSources sources(sample.trg.size());
    for (size_t j = 0; j < sources.size() && j < sample.src.size(); ++j)
      sources[j] = {static_cast<int64_t>(sample.src.size() - 1 - j)};
    return sources;
  }
};

}  // namespace

TaskDefinition reverse_task() {
  return {"reverse", uniform_source_parameters(),
          [](const CheckedParams& params, uint64_t) -> std::unique_ptr<Task> {
            return std::make_unique<ReverseTask>(params);
          }};
}

}  // namespace lengen
