#pragma once
// The machine's matrix-product speed, the yardstick of the benches' `floor_ratio`: a measured time
// against the time its FLOPs would take at this rate.

namespace lengen {

// FLOP/s of a 512^3 fp32 matrix product on one thread (in thread CPU time, which neighbours
// disturb least) times `threads`.
double sgemm_flops_per_second(int threads);

}  // namespace lengen
