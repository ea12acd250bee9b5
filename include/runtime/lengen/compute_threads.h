#pragma once

namespace lengen {

// Gives LibTorch's intra-op pool and OpenBLAS's pool `threads` threads each. UserError when the
// process cannot start that many, where LibTorch would wait forever.
void set_compute_threads(int threads);

}  // namespace lengen
