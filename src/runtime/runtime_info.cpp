#include "lengen/runtime_info.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <torch/cuda.h>
#include <torch/version.h>
#include <cstdlib>
#include <thread>

#include "lengen/blas_kernels.h"

namespace lengen {

namespace {

// LibTorch from Debian calls the system BLAS; which library answers sgemm_ decides
// whether matmuls run on OpenBLAS or on the ~15x slower reference BLAS.
std::string blas_library_path() {
  void* symbol = dlsym(RTLD_DEFAULT, "sgemm_");
  if (symbol == nullptr) return "unknown (no sgemm_ symbol; LibTorch may bundle MKL)";
  Dl_info info{};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "unknown";
  char resolved[4096];
  if (realpath(info.dli_fname, resolved) != nullptr) return resolved;
  return info.dli_fname;
}

std::string blas_kernels() {
  const std::string core = openblas_core();
  if (core.empty()) return "unknown (not OpenBLAS)";
  if (const char* own = std::getenv(kOpenblasFallbackVariable)) {
    return core + " (chosen by lengen: OpenBLAS fell back to " + own + " on this CPU)";
  }
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return core + " (OPENBLAS_CORETYPE)";
  return core + " (chosen by OpenBLAS)";
}

}  // namespace

RuntimeInfo runtime_info() {
  RuntimeInfo info;
  info.torch_version = TORCH_VERSION;
  info.blas_library = blas_library_path();
  info.blas_kernels = blas_kernels();
  info.intra_op_threads = at::get_num_threads();
  info.cpu_cores = std::thread::hardware_concurrency();
  info.cuda_available = torch::cuda::is_available();
  info.cuda_devices = info.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
#ifdef LENGEN_HAVE_GLOO
  info.gloo_available = true;
#endif
#ifdef USE_C10D_NCCL
  info.nccl_available = true;
#endif
  return info;
}

}  // namespace lengen
