#pragma once
// Where the tensors of a run live.
#include <torch/types.h>

#include <string>

namespace lengen {

// The device named by train.device ("auto": cuda when LibTorch has it).
torch::Device resolve_device(const std::string& name);

}  // namespace lengen
