// set_compute_threads gives LibTorch's threads and OpenBLAS's own pool (which LibTorch leaves
// alone) the same count: the matrix products use the threads a run asks for, and at one thread
// OpenBLAS runs them on the calling thread, with no second core spinning.
#include "lengen/compute_threads.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <string>
#include <thread>

#include "cli_folder_test.h"

namespace lengen {
namespace {

TEST(ComputeThreads, SetsLibTorchAndOpenBlasThreadsAlike) {
  using GetThreads = int (*)();
  auto get_openblas = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  set_compute_threads(2);
  EXPECT_EQ(torch::get_num_threads(), 2);
  const int openblas_at_two = get_openblas != nullptr ? get_openblas() : 2;
  set_compute_threads(1);
  EXPECT_EQ(torch::get_num_threads(), 1);
  if (get_openblas == nullptr) GTEST_SKIP() << "LibTorch's BLAS is not OpenBLAS";
  EXPECT_EQ(openblas_at_two, 2);
  EXPECT_EQ(get_openblas(), 1);
}

}  // namespace
}  // namespace lengen

namespace lengen {
namespace {

class TwoThreadRun : public testing::CliFolderTest {
 protected:
  TwoThreadRun() : CliFolderTest("lengen_two_threads") {}
};

// A run of two threads starts itself once more with idle threads set to sleep
// (sleep_idle_threads_for), then trains as any other: it ends, with its checkpoint and results.
TEST_F(TwoThreadRun, TrainsAfterStartingItselfAgain) {
  const CliResult result =
      lengen("train " + base() + " --out " + at("run") + " --set train.threads=2",
             "env -u OMP_WAIT_POLICY -u OPENBLAS_THREAD_TIMEOUT");
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_TRUE(std::filesystem::exists(root_ / "run" / "results.json"));
}

// More threads than the machine has cores (a config from a larger machine) train, with one warning.
TEST_F(TwoThreadRun, MoreThreadsThanCoresTrainWithAWarning) {
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores == 0) GTEST_SKIP() << "the core count is unknown";
  const std::string threads = std::to_string(cores + 1);
  const CliResult result = lengen("train " + base() + " --out " + at("run") + " --set train.threads=" + threads);
  ASSERT_EQ(result.code, 0) << result.err;
  const std::string said = result.out + result.err;
  EXPECT_NE(said.find(threads + " compute threads on " + std::to_string(cores) + " cores"), std::string::npos) << said;
}

}  // namespace
}  // namespace lengen
