// reverse: the target is the source read backwards.
#include "task_factories.h"
#include "uniform_source_task.h"

namespace lengen {

namespace {

class ReverseTask : public UniformSourceTask {
 public:
  explicit ReverseTask(const TaskParams& params) : UniformSourceTask("reverse", params) {}

 protected:
  Symbols target_for(const Symbols& src) const override { return Symbols(src.rbegin(), src.rend()); }
};

}  // namespace

std::unique_ptr<Task> make_reverse_task(const TaskParams& params, uint64_t) {
  return std::make_unique<ReverseTask>(params);
}

}  // namespace lengen
