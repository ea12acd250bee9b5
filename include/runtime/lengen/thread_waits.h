#pragma once
// How idle compute threads wait. With N > 1 threads a process holds two pools: LibTorch's OpenMP
// team (element-wise ops, the normalizers) and OpenBLAS's own threads (the matrix products), N - 1
// threads each. By default both spin after their work (libgomp up to GOMP_SPINCOUNT, OpenBLAS
// ~2^28 cycles), so each pool's idle threads hold the cores the other pool's threads wait for.
// Both libraries read how to wait from the environment once, when they load: a process that
// wants N > 1 threads sets it and starts itself again.

namespace lengen {

// Keeps the program's arguments for sleep_idle_threads_for; the CLI's main calls it. Without it
// (tests, other programs) sleep_idle_threads_for does nothing.
void keep_program_arguments(char** argv);

// For `threads` > 1: when the environment does not say how idle threads wait (OMP_WAIT_POLICY,
// OPENBLAS_THREAD_TIMEOUT), sets them to sleep and re-executes the program, which then runs
// with them. Called before the command has done anything, so the second start repeats nothing
// but loading. Returns when nothing is to be done, or the re-execution failed.
void sleep_idle_threads_for(int threads);

}  // namespace lengen
