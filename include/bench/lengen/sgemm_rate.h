#pragma once
// The machine's matrix-product speed, the yardstick of the benches' `floor_ratio`: a measured time
// against the time its FLOPs would take at this rate.

namespace lengen {

// FLOP/s of a 512 x 512 x 512 fp32 matrix product on one thread (the fastest of a few, in thread
// CPU time) times `threads`: the rate of `threads` threads if each ran matrix products at full
// speed. One thread's CPU time is what a shared VM's other tenants disturb least.
double sgemm_flops_per_second(int threads);

}  // namespace lengen
