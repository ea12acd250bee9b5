#include "lengen/runtime_info.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace lengen {
namespace {

// Debian's LibTorch falls back to reference BLAS (~15x slower matmuls) unless
// libopenblas0-pthread provides libblas.so.3; scripts/setup.sh installs it.
TEST(RuntimeInfo, MatmulsRunOnOpenBlas) {
  torch::mm(torch::ones({4, 4}), torch::ones({4, 4}));  // makes sure BLAS is loaded
  RuntimeInfo info = runtime_info();
  EXPECT_NE(info.blas_library.find("openblas"), std::string::npos) << info.blas_library;
  EXPECT_FALSE(info.torch_version.empty());
  EXPECT_GE(info.intra_op_threads, 1);
}

}  // namespace
}  // namespace lengen
