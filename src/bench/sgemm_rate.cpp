// The matrix-product rate the benches measure against (sgemm_rate.h).
#include "lengen/sgemm_rate.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "bench_output.h"
#include "lengen/compute_threads.h"

namespace lengen {

double sgemm_flops_per_second(int threads) {
  constexpr int64_t kSize = 512;
  // One thread's rate: a larger BLAS pool would spread the product's CPU time over its threads.
  set_compute_threads(1);
  const auto a = torch::randn({kSize, kSize});
  const auto b = torch::randn({kSize, kSize});
  auto c = torch::empty({kSize, kSize});
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 12; ++i) {
    const double start = bench_now_seconds(true);
    torch::mm_out(c, a, b);
    best = std::min(best, bench_now_seconds(true) - start);
  }
  set_compute_threads(threads);
  return 2.0 * kSize * kSize * kSize / best * threads;
}

}  // namespace lengen
