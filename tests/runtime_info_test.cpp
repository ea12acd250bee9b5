#include "lengen/runtime_info.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "lengen/blas_kernels.h"
#include "lengen/row_kernels.h"

namespace lengen {
namespace {

// Debian's LibTorch falls back to reference BLAS (~15x slower matmuls) unless
// libopenblas0-pthread provides libblas.so.3; scripts/setup.sh installs it.
TEST(RuntimeInfo, MatmulsRunOnOpenBlas) {
  torch::mm(torch::ones({4, 4}), torch::ones({4, 4}));  // makes sure BLAS is loaded
  RuntimeInfo info = runtime_info();
  EXPECT_NE(info.blas_library.find("openblas"), std::string::npos) << info.blas_library;
  EXPECT_FALSE(openblas_core().empty());
  EXPECT_FALSE(info.torch_version.empty());
  EXPECT_GE(info.intra_op_threads, 1);
  EXPECT_GE(info.cpu_cores, 1u);
}

TEST(BlasKernels, OnlyOpenblasFallbackIsReplacedByWhatTheCpuCanRun) {
  const CpuVectorUnits none{}, avx2{true, false}, avx512{true, true};
  EXPECT_EQ(better_openblas_core("Prescott", avx512), "SkylakeX");
  EXPECT_EQ(better_openblas_core("PRESCOTT", avx512), "SkylakeX");
  EXPECT_EQ(better_openblas_core("Prescott", avx2), "Haswell");
  EXPECT_EQ(better_openblas_core("Prescott", none), "");
  EXPECT_EQ(better_openblas_core("Haswell", avx512), "");
  EXPECT_EQ(better_openblas_core("Zen", avx2), "");
  EXPECT_EQ(better_openblas_core("", avx512), "");
}

std::string command_output(const std::string& command) {
  std::string output;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return output;
  std::array<char, 256> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) output += buffer.data();
  return output;
}

std::string info_line(const std::string& output, const std::string& label) {
  const size_t start = output.find(label);
  if (start == std::string::npos) return "";
  return output.substr(start, output.find('\n', start) - start);
}

// The whole mechanism, through the CLI: on a CPU with AVX2 the lengen command never runs on
// OpenBLAS's Prescott kernels (which Debian 12's OpenBLAS picks on an Emerald Rapids Xeon,
// at half the training speed), and a user's OPENBLAS_CORETYPE is kept.
TEST(BlasKernels, TheCommandRunsOnKernelsTheCpuSupports) {
  if (!cpu_vector_units().avx2_fma) GTEST_SKIP() << "no AVX2: Prescott may be the right choice";
  const std::string cli = std::string(LENGEN_CLI_PATH) + " info";
  const std::string own = info_line(command_output("env -u OPENBLAS_CORETYPE " + cli), "blas kernels:");
  ASSERT_FALSE(own.empty());
  EXPECT_EQ(own.find("blas kernels:  Prescott"), std::string::npos) << own;

  const std::string chosen =
      info_line(command_output("env OPENBLAS_CORETYPE=Haswell " + cli), "blas kernels:");
  EXPECT_EQ(chosen, "blas kernels:  Haswell (OPENBLAS_CORETYPE)");
}

// `lengen info` names the copy of the fused kernels' loops the loader chose for this CPU.
TEST(RowKernels, InfoNamesTheCopyThatRuns) {
  const std::string line = info_line(command_output(std::string(LENGEN_CLI_PATH) + " info"), "row kernels:");
  ASSERT_FALSE(line.empty());
#if defined(LENGEN_ROW_CLONES_X86_64_V3)
  const char* expected = cpu_vector_units().avx2_fma ? "row kernels:   x86-64-v3 (AVX2)" : "row kernels:   baseline x86-64";
  EXPECT_EQ(line.rfind(expected, 0), 0u) << line;
#endif
}

}  // namespace
}  // namespace lengen
