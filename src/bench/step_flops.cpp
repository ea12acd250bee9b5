// The matrix-product FLOPs of one training step (step_flops.h).
#include "lengen/step_flops.h"

namespace lengen {

double training_step_flops(const ModelConfig& model, int64_t batch, int64_t length, int64_t vocab,
                           int64_t output_positions) {
  const double tokens = static_cast<double>(batch) * static_cast<double>(length);
  const double d_model = static_cast<double>(model.d_model);
  const double inner = static_cast<double>(model.heads) * static_cast<double>(model.d_head);
  const double projections = 2.0 * tokens * (4.0 * d_model * inner + 3.0 * d_model * static_cast<double>(model.d_mlp));
  // q.k^T and p.v: each 2 x length x length x d_head per head and sequence.
  const double attention = 2.0 * 2.0 * tokens * static_cast<double>(length) * inner;
  const double head = 2.0 * static_cast<double>(output_positions) * d_model * static_cast<double>(vocab);
  const double forward = static_cast<double>(model.layers) * (projections + attention) + head;
  return 3.0 * forward;  // forward, and a backward of twice as much
}

}  // namespace lengen
