#pragma once
// Where the tensors of a run live.
#include <torch/types.h>

#include "lengen/device_choice.h"

namespace lengen {

// The device train.device asks for (auto: cuda when LibTorch has it); UserError for cuda without
// a CUDA device.
torch::Device resolve_device(DeviceChoice choice);

}  // namespace lengen
