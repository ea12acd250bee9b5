#include "lengen/blas_kernels.h"

#include <dlfcn.h>
#include <strings.h>
#include <unistd.h>

#include <cstdlib>

namespace lengen {

CpuVectorUnits cpu_vector_units() {
  // __builtin_cpu_supports also checks that the OS saves the vector registers (XCR0).
  CpuVectorUnits units;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  units.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  units.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                 __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                 __builtin_cpu_supports("avx512vl");
#endif
  return units;
}

std::string openblas_core() {
  // Looked up at run time, as in compute_threads.cpp: LibTorch may use another BLAS.
  using CoreName = char* (*)();
  auto core_name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = core_name != nullptr ? core_name() : nullptr;
  return name != nullptr ? name : "";
}

std::string better_openblas_core(const std::string& loaded_core, const CpuVectorUnits& units) {
  // Only OpenBLAS's fallback is second-guessed: a core it chose by itself stays.
  if (strcasecmp(loaded_core.c_str(), "prescott") != 0) return "";
  if (units.avx512 && units.avx2_fma) return "SkylakeX";
  if (units.avx2_fma) return "Haswell";
  return "";
}

void use_best_blas_kernels(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;  // the user's choice, or already re-executed
  const std::string loaded = openblas_core();
  const std::string better = better_openblas_core(loaded, cpu_vector_units());
  if (better.empty()) return;
  setenv("OPENBLAS_CORETYPE", better.c_str(), 1);
  setenv(kOpenblasFallbackVariable, loaded.c_str(), 1);
  execv("/proc/self/exe", argv);
  // Still here: the program goes on with the kernels it has.
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(kOpenblasFallbackVariable);
}

}  // namespace lengen
