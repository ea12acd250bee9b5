#include "lengen/device.h"

#include <torch/cuda.h>

#include "lengen/errors.h"

namespace lengen {

torch::Device resolve_device(DeviceChoice choice) {
  switch (choice) {
    case DeviceChoice::kCpu:
      return torch::kCPU;
    case DeviceChoice::kCuda:
      if (!torch::cuda::is_available()) {
        throw UserError("train.device is 'cuda' but this LibTorch has no CUDA device");
      }
      return torch::kCUDA;
    case DeviceChoice::kAuto:
      return torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  }
  return torch::kCPU;
}

}  // namespace lengen
