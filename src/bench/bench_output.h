#pragma once
// The clock benchmarks read: thread CPU time when single-threaded (robust on a shared machine,
// where wall time mostly measures the neighbours and process time counts idle pool threads
// spinning), else wall-clock time.
#include <chrono>
#include <ctime>

namespace lengen {

inline double bench_now_seconds(bool single_threaded) {
  if (single_threaded) {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace lengen
