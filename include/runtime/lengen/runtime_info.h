#pragma once
// Facts about the LibTorch this build runs on, for `lengen info` and run logs.
#include <string>

namespace lengen {

struct RuntimeInfo {
  std::string torch_version;
  std::string blas_library;  // the shared object that provides sgemm_, e.g. .../openblas-pthread/libblas.so.3
  std::string blas_kernels;  // OpenBLAS's kernels, e.g. "Haswell", and who chose them
  int intra_op_threads = 0;
  unsigned cpu_cores = 0;  // logical cores the OS reports (0 when it cannot tell)
  bool cuda_available = false;
  int cuda_devices = 0;
  bool gloo_available = false;
  bool nccl_available = false;  // compiled with ProcessGroupNCCL (CUDA ranks)
};

RuntimeInfo runtime_info();

}  // namespace lengen
