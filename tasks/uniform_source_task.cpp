#include "uniform_source_task.h"

#include "sampling.h"

namespace lengen {

std::vector<TaskParameter> uniform_source_parameters() {
  return {{"vocab", 32, 2, kMaxTaskSymbols, true, "source symbols, drawn uniformly"}};
}

UniformSourceTask::UniformSourceTask(std::string name, const CheckedParams& params)
    : name_(std::move(name)), params_(params.values()), vocab_(params.integer("vocab")) {}

Sample UniformSourceTask::sample(Rng& rng, int64_t length) const {
  Symbols src = uniform_symbols(rng, length, 0, static_cast<int32_t>(vocab_ - 1));
  Symbols trg = target_for(src);
  return {std::move(src), std::move(trg)};
}

}  // namespace lengen
