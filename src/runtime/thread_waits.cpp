#include "lengen/thread_waits.h"

#include <unistd.h>

#include <cstdlib>
#include <utility>

namespace lengen {

namespace {

char** program_arguments = nullptr;

}  // namespace

void keep_program_arguments(char** argv) { program_arguments = argv; }

void sleep_idle_threads_for(int threads) {
  if (threads <= 1 || program_arguments == nullptr) return;
  bool changed = false;
  // OpenMP threads sleep when idle; OpenBLAS's sleep after 2^4 cycles without work. A value the
  // user set is theirs.
  for (const auto& [name, value] : {std::pair{"OMP_WAIT_POLICY", "PASSIVE"}, std::pair{"OPENBLAS_THREAD_TIMEOUT", "4"}}) {
    if (std::getenv(name) != nullptr) continue;
    setenv(name, value, 1);
    changed = true;
  }
  if (changed) execv("/proc/self/exe", program_arguments);
}

}  // namespace lengen
