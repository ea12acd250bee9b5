// `lengen info`: what this build of lengen runs on (LibTorch version, BLAS, threads, device).
#include <iostream>
#include <string>

#include "commands.h"
#include "lengen/build_info.h"
#include "lengen/row_kernels.h"
#include "lengen/runtime_info.h"

namespace lengen::cli {

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Print LibTorch version, BLAS library, threads and devices");
  cmd->callback([] {
    RuntimeInfo info = runtime_info();
    std::cout << "build:         " << build_and_machine() << "\n"
              << "libtorch:      " << info.torch_version << "\n"
              << "blas:          " << info.blas_library << "\n"
              << "blas kernels:  " << info.blas_kernels << "\n"
              << "row kernels:   " << lengen::detail::row_kernel_clone() << " copy of the fused attention's loops\n"
              // Runs and benchmarks set their own thread count; LibTorch's default is only what a
              // command without one would get, so say both.
              << "threads:       a run uses train.threads (default 1); LibTorch's default here is "
              << info.intra_op_threads << " of " << info.cpu_cores << " cores\n"
              << "cuda:          " << (info.cuda_available ? "available (" + std::to_string(info.cuda_devices) + " devices)" : "not available") << "\n"
              << "data-parallel: "
              << (!info.gloo_available ? "not built (no gloo headers)"
                  : info.nccl_available ? "c10d with Gloo (CPU) and NCCL (CUDA)"
                                        : "c10d with Gloo")
              << "\n";
  });
}

}  // namespace lengen::cli
