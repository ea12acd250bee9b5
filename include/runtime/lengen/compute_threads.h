#pragma once

namespace lengen {

// Gives LibTorch's own work and the matrix products `threads` threads each: LibTorch's intra-op
// threads and, when LibTorch's BLAS is OpenBLAS (pthread build), OpenBLAS's own pool, which
// LibTorch does not size. At one thread neither pool runs. At more, the two pools share the
// cores, and must sleep when idle (lengen/thread_waits.h: the commands call
// sleep_idle_threads_for first).
// Throws UserError when the process cannot hold LibTorch's pools of that many threads (a memory
// or process limit), where LibTorch itself would wait forever for a thread that never started.
void set_compute_threads(int threads);

}  // namespace lengen
