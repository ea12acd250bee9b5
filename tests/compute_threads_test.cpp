// set_compute_threads sets LibTorch's threads and keeps OpenBLAS's own pool (which LibTorch leaves
// alone) at one thread, so that its spinning threads never compete with LibTorch's.
#include "lengen/compute_threads.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace lengen {
namespace {

TEST(ComputeThreads, SetsLibTorchThreadsAndKeepsOpenBlasAtOne) {
  using GetThreads = int (*)();
  auto get_openblas = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  set_compute_threads(2);
  EXPECT_EQ(torch::get_num_threads(), 2);
  const int openblas_at_two = get_openblas != nullptr ? get_openblas() : 1;
  set_compute_threads(1);
  EXPECT_EQ(torch::get_num_threads(), 1);
  if (get_openblas == nullptr) GTEST_SKIP() << "LibTorch's BLAS is not OpenBLAS";
  EXPECT_EQ(openblas_at_two, 1);
  EXPECT_EQ(get_openblas(), 1);
}

}  // namespace
}  // namespace lengen
