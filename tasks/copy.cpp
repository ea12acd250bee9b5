// copy: the target is the source itself.
#include "task_factories.h"
#include "uniform_source_task.h"

namespace lengen {

namespace {

class CopyTask : public UniformSourceTask {
 public:
  explicit CopyTask(const CheckedParams& params) : UniformSourceTask("copy", params) {}

 protected:
  Symbols target_for(const Symbols& src) const override { return src; }

 public:
  // Target symbol j is source symbol j.
  std::optional<AnswerSources> answer_sources(const Sample& sample) const override {
    // A target symbol past the source's end (a reference file's target longer than its source)
    // has no answering key.
    AnswerSources sources(sample.trg.size());
    for (size_t j = 0; j < sources.size() && j < sample.src.size(); ++j) sources[j] = {static_cast<int64_t>(j)};
    return sources;
  }
};

}  // namespace

TaskDefinition copy_task() {
  return {"copy", uniform_source_parameters(),
          [](const CheckedParams& params, uint64_t) -> std::unique_ptr<Task> {
            return std::make_unique<CopyTask>(params);
          }};
}

}  // namespace lengen
