#include "uniform_source_task.h"

#include <limits>

#include "sampling.h"
#include "task_params.h"

namespace lengen {

namespace {

constexpr int64_t kDefaultVocab = 32;

}  // namespace

UniformSourceTask::UniformSourceTask(std::string name, const TaskParams& params) : name_(std::move(name)) {
  ParamReader reader(name_, params, {{"vocab", kDefaultVocab}});
  vocab_ = reader.integer("vocab", 2, std::numeric_limits<int32_t>::max());
}

Sample UniformSourceTask::sample(Rng& rng, int64_t length) const {
  Symbols src = uniform_symbols(rng, length, 0, static_cast<int32_t>(vocab_ - 1));
  Symbols trg = target_for(src);
  return {std::move(src), std::move(trg)};
}

}  // namespace lengen
