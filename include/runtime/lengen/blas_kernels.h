#pragma once
// Debian 12's OpenBLAS falls back to its generic "Prescott" kernels on some newer CPUs, making a
// training step 2x slower (BENCHMARKS.md); OPENBLAS_CORETYPE asks for kernels by name.
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

// Called first in main: when better_openblas_core names kernels and OPENBLAS_CORETYPE is unset,
// sets it and re-executes the program; otherwise (or on failure) returns.
void use_best_blas_kernels(char** argv);

// Set by use_best_blas_kernels for `lengen info`: the kernels OpenBLAS picked by itself.
inline constexpr const char* kOpenblasFallbackVariable = "LENGEN_OPENBLAS_OWN_CORE";

}  // namespace lengen
