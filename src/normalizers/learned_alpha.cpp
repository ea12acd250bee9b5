#include "lengen/learned_alpha.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "lengen/errors.h"

namespace lengen {

namespace {
// Largest sigmoid value an initial alpha of 2 starts from.
constexpr double kMaxInitialSigmoid = 0.99;
}  // namespace

LearnedAlphaImpl::LearnedAlphaImpl(int64_t heads, double initial_alpha) {
  if (!(initial_alpha > 1.0 && initial_alpha <= kMaxAlpha)) {
    throw UserError("learned alpha: the initial alpha must be in (1, 2], got " +
                    std::to_string(initial_alpha));
  }
  const double s = std::clamp(initial_alpha - 1.0, kMinAlpha - 1.0, kMaxInitialSigmoid);
  logit_ = register_parameter("logit", torch::full({heads}, std::log(s / (1.0 - s))));
}

torch::Tensor LearnedAlphaImpl::forward() const {
  return (1 + torch::sigmoid(logit_)).clamp(kMinAlpha, kMaxAlpha);
}

}  // namespace lengen
