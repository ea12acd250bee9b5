#pragma once
// The forward row kernels of the normalizers, for callers that hold their scores in a plain
// buffer rather than a tensor (the fused evaluation attention). Each normalizes rows
// [begin, end) of the row-major [rows, n] block z into p; rows whose tail is -inf (a causal
// mask's) are handled up to their last finite entry, and a fully masked row gives zeros.
#include <cstdint>

#include "normalizers/row_kernels.h"

namespace lengen::detail {

void sparsemax_rows(const float* z, float* p, int64_t n, int64_t begin, int64_t end);
void sparsemax_rows(const double* z, double* p, int64_t n, int64_t begin, int64_t end);
void entmax15_rows(const float* z, float* p, int64_t n, int64_t begin, int64_t end);
void entmax15_rows(const double* z, double* p, int64_t n, int64_t begin, int64_t end);
void entmax_rows(const float* z, float* p, int64_t n, RowAlpha alphas, int64_t begin, int64_t end);
void entmax_rows(const double* z, double* p, int64_t n, RowAlpha alphas, int64_t begin, int64_t end);

// Softmax of each row together with what the attention statistics need, in the same passes:
// the row's entropy (nats) and how many of its weights are nonzero (exp underflows to 0 far
// below the max, as in LibTorch's softmax).
struct RowSummary {
  double entropy = 0;
  int64_t nonzero = 0;
};
void softmax_rows_summarized(const float* z, float* p, int64_t n, int64_t begin, int64_t end,
                             RowSummary* summaries);

}  // namespace lengen::detail
