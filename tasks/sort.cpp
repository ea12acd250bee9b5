// sort: the target is the source sorted ascending (duplicates kept).
#include <algorithm>
#include <map>

#include "task_factories.h"
#include "uniform_source_task.h"

namespace lengen {

namespace {

class SortTask : public UniformSourceTask {
 public:
  explicit SortTask(const CheckedParams& params) : UniformSourceTask("sort", params) {}

 protected:
  Symbols target_for(const Symbols& src) const override {
    Symbols sorted = src;
    std::sort(sorted.begin(), sorted.end());
    return sorted;
  }

 public:
  // Every source position holding the symbol being output: equal symbols are interchangeable.
  std::optional<AnswerSources> answer_sources(const Sample& sample) const override {
    std::map<int32_t, std::vector<int64_t>> positions;
    for (size_t i = 0; i < sample.src.size(); ++i)
      positions[sample.src[i]].push_back(static_cast<int64_t>(i));
    AnswerSources sources;
    for (int32_t symbol : sample.trg) sources.push_back(positions[symbol]);
    return sources;
  }
};

}  // namespace

TaskDefinition sort_task() {
  return {"sort", uniform_source_parameters(),
          [](const CheckedParams& params, uint64_t) -> std::unique_ptr<Task> {
            return std::make_unique<SortTask>(params);
          }};
}

}  // namespace lengen
