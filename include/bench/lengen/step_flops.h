#pragma once
// The matrix-product FLOPs of one training step: what `lengen bench step` sets against the
// machine's sgemm rate (sgemm_rate.h) to say how far a step is from the speed of its products.
#include <cstdint>

#include "lengen/config.h"

namespace lengen {

// FLOPs of the forward and backward matrix products of one step on `batch` sequences of
// `length` tokens, 2 m n k per product: per layer the q, k, v and output projections, the
// attention's full length x length q.k^T and p.v per head (the training kernel computes the
// whole square, masked), the MLP's gate, up and down; then the output layer to `vocab` at the
// `output_positions` positions whose loss the step takes (the trainer's forward_selected). Backward
// is twice forward (a gradient for each operand). Everything else in a step (norms, the
// normalizer, AdamW, the embedding lookup, the scaling projections) is left out: it is not a
// matrix product the BLAS runs at its rate.
double training_step_flops(const ModelConfig& model, int64_t batch, int64_t length, int64_t vocab,
                           int64_t output_positions);

}  // namespace lengen
