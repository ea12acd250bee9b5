#pragma once
// Where a run asks its tensors to live (train.device); the runtime resolves it to a device.
#include <vector>

#include "lengen/named_values.h"

namespace lengen {

enum class DeviceChoice { kCpu, kCuda, kAuto };  // auto: cuda when LibTorch has it

LENGEN_NAMED_VALUES(DeviceChoice, {"cpu", DeviceChoice::kCpu}, {"cuda", DeviceChoice::kCuda},
                    {"auto", DeviceChoice::kAuto})

}  // namespace lengen
