#pragma once

namespace lengen {

// Sets LibTorch's intra-op threads, and keeps OpenBLAS's own thread pool (when LibTorch's BLAS is
// OpenBLAS, pthread build) at one thread whatever `threads` is. That pool's idle threads spin
// between matrix products and take the cores from LibTorch's threads: at two threads each, a
// training step of the `lengen bench step` model ran 2x slower than at one thread, and the fused
// evaluation's attention lost 10-15% (BENCHMARKS.md, "Threads"). lengen's matrix products are
// small (d_model <= a few hundred), so running them on the calling thread costs little.
// Throws UserError when the process cannot hold LibTorch's pools of that many threads (a memory
// or process limit), where LibTorch itself would wait forever for a thread that never started.
void set_compute_threads(int threads);

}  // namespace lengen
