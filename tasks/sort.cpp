// sort: the target is the source sorted ascending (duplicates kept).
#include <algorithm>

#include "task_factories.h"
#include "uniform_source_task.h"

namespace lengen {

namespace {

class SortTask : public UniformSourceTask {
 public:
  explicit SortTask(const TaskParams& params) : UniformSourceTask("sort", params) {}

 protected:
  Symbols target_for(const Symbols& src) const override {
    Symbols sorted = src;
    std::sort(sorted.begin(), sorted.end());
    return sorted;
  }
};

}  // namespace

std::unique_ptr<Task> make_sort_task(const TaskParams& params, uint64_t) {
  return std::make_unique<SortTask>(params);
}

}  // namespace lengen
