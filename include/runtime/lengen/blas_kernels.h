#pragma once
// OpenBLAS picks its kernels for the CPU once, when it loads. The OpenBLAS of Debian 12
// (0.3.21) does not know some newer CPUs (seen: an Emerald Rapids Xeon, family 6 model 207) and falls back to
// its generic SSE3 "Prescott" kernels, which make a quick config's training step 2x slower (BENCHMARKS.md).
// OpenBLAS's own OPENBLAS_CORETYPE variable asks for the kernels by name.
#include <string>

namespace lengen {

struct CpuVectorUnits {
  bool avx2_fma = false;
  bool avx512 = false;  // F, CD, BW, DQ and VL: what OpenBLAS's SkylakeX kernels use
};

CpuVectorUnits cpu_vector_units();

// The name of the kernels OpenBLAS loaded with (e.g. "Haswell"), "" when no OpenBLAS answers.
std::string openblas_core();

// The OPENBLAS_CORETYPE to ask for: "SkylakeX" or "Haswell" when OpenBLAS fell back to its
// Prescott kernels on a CPU with those units; "" when OpenBLAS's own choice stands.
std::string better_openblas_core(const std::string& loaded_core, const CpuVectorUnits& units);

// Called first in main. When better_openblas_core names kernels and the user has not set
// OPENBLAS_CORETYPE, sets it (and kOpenblasFallbackVariable to what OpenBLAS had picked) and
// re-executes this program, so that OpenBLAS loads again with them. Otherwise, or when the
// re-execution fails, returns and the program goes on as it is.
void use_best_blas_kernels(char** argv);

// Set by use_best_blas_kernels for `lengen info`: the kernels OpenBLAS picked by itself.
inline constexpr const char* kOpenblasFallbackVariable = "LENGEN_OPENBLAS_OWN_CORE";

}  // namespace lengen
