#pragma once
// How idle compute threads wait. OpenMP's and OpenBLAS's pools both spin by default, each holding
// the cores the other waits for; both read their wait policy from the environment at load.

namespace lengen {

// Keeps the program's arguments for sleep_idle_threads_for; the CLI's main calls it. Without it
// (tests, other programs) sleep_idle_threads_for does nothing.
void keep_program_arguments(char** argv);

// For `threads` > 1 and no OMP_WAIT_POLICY / OPENBLAS_THREAD_TIMEOUT set: sets them to sleep and
// re-executes the program. Returns when nothing is to be done, or the re-execution failed.
void sleep_idle_threads_for(int threads);

}  // namespace lengen
