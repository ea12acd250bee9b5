#pragma once
// Learning rate at a step: linear warmup from 0 to lr over `warmup` steps, then cosine,
// linear or constant decay towards lr * min_lr_ratio at the last step.
#include <cstdint>

#include "lengen/config.h"

namespace lengen {

double learning_rate(const TrainConfig& config, int64_t step);

}  // namespace lengen
