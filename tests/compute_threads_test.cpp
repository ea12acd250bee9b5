// set_compute_threads reaches both LibTorch and OpenBLAS's own pool (which LibTorch leaves alone).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "lengen/compute_threads.h"

namespace lengen {
namespace {

TEST(ComputeThreads, SetsLibTorchAndOpenBlasThreads) {
  set_compute_threads(1);
  EXPECT_EQ(torch::get_num_threads(), 1);
  using GetThreads = int (*)();
  auto get_openblas = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (get_openblas == nullptr) GTEST_SKIP() << "LibTorch's BLAS is not OpenBLAS";
  EXPECT_EQ(get_openblas(), 1);
  set_compute_threads(2);
  EXPECT_EQ(get_openblas(), 2);
  set_compute_threads(1);
}

}  // namespace
}  // namespace lengen
