#pragma once

namespace lengen {

// Sets LibTorch's intra-op threads and, when LibTorch's BLAS is OpenBLAS, OpenBLAS's own
// thread pool too: OpenBLAS (pthread build) otherwise starts one spinning thread per core for
// every small matrix product, which doubled the CPU time of a one-thread training run and
// slows parallel sweep jobs that were meant to get one core each.
void set_compute_threads(int threads);

}  // namespace lengen
