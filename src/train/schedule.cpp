#include "lengen/schedule.h"

#include <algorithm>
#include <cmath>

namespace lengen {

double learning_rate(const TrainConfig& config, int64_t step) {
  if (step < config.warmup)
    return config.lr * static_cast<double>(step + 1) / static_cast<double>(config.warmup);
  const double floor = config.lr * config.min_lr_ratio;
  const int64_t decay_steps = std::max<int64_t>(1, config.steps - config.warmup);
  const double progress =
      std::min(1.0, static_cast<double>(step - config.warmup) / static_cast<double>(decay_steps));
  switch (config.schedule) {
    case LrSchedule::kConstant:
      return config.lr;
    case LrSchedule::kLinear:
      return floor + (config.lr - floor) * (1.0 - progress);
    case LrSchedule::kCosine:
      return floor + (config.lr - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
  }
  return config.lr;
}

}  // namespace lengen
