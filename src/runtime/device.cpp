#include "lengen/device.h"

#include <torch/cuda.h>

#include "lengen/errors.h"

namespace lengen {

torch::Device resolve_device(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  if (name == "cuda" || name == "auto") {
    if (torch::cuda::is_available()) return torch::kCUDA;
    if (name == "cuda") throw UserError("train.device is 'cuda' but this LibTorch has no CUDA device");
    return torch::kCPU;
  }
  throw UserError("unknown train.device '" + name + "' (expected cpu, cuda or auto)");
}

}  // namespace lengen
