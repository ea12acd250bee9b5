#pragma once
// The forward row kernels of the normalizers, for callers that hold their scores in a plain
// buffer rather than a tensor (the fused evaluation attention). Each normalizes rows
// [begin, end) of the row-major [rows, n] block z into p; rows whose tail is -inf (a causal
// mask's) are handled up to their last finite entry, and a fully masked row gives zeros.
#include <cstdint>

#include "lengen/row_kernels.h"

namespace lengen::detail {

void sparsemax_rows(const float* z, float* p, int64_t n, int64_t begin, int64_t end);
void sparsemax_rows(const double* z, double* p, int64_t n, int64_t begin, int64_t end);
void entmax15_rows(const float* z, float* p, int64_t n, int64_t begin, int64_t end);
void entmax15_rows(const double* z, double* p, int64_t n, int64_t begin, int64_t end);
void entmax_rows(const float* z, float* p, int64_t n, RowAlpha alphas, int64_t begin, int64_t end);
void entmax_rows(const double* z, double* p, int64_t n, RowAlpha alphas, int64_t begin, int64_t end);

// The unnormalized softmax of one row, e_i = exp(z_i - max) for i < end (max the row's max, -inf
// for a fully masked row, which gives zeros), with what the attention statistics need in the
// same pass: the sum of the e_i, the row's entropy (nats) and how many e_i are nonzero (exp
// underflows to 0 far below the max, as in LibTorch's softmax). e may be z: each e_i is written
// after z_i is read, and z is not read again.
struct ExpSums {
  double sum = 0;
  double entropy = 0;
  int64_t nonzero = 0;
};
ExpSums softmax_exponentials(const float* z, float* e, int64_t end, float max);

// The thresholds of the sparse normalizers over a row's candidates (Candidates::collect):
// sparsemax's from the entries within 1 of the max (candidates z - max), 1.5-entmax's from those
// with X = (z - max)/2 > -1 (candidates X). The weights are [c - tau]_+ and [X - tau]_+^2.
// `lower` is a lower bound on the threshold (-1 always is one); the candidates must include
// every entry above it.
double sparsemax_threshold(const Candidates& candidates, double lower = -1);
double entmax15_threshold(const Candidates& candidates, double lower = -1);

}  // namespace lengen::detail
