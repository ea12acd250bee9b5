// Normalizers by name, for the attention module and the config.
#include <torch/torch.h>

#include <cmath>
#include <string>

#include "lengen/errors.h"
#include "lengen/normalizers.h"

namespace lengen {

std::vector<std::string> normalizer_names() {
  return {"softmax", "sparsemax", "entmax15", "entmax", "topk", "adaptive_softmax", "stickbreaking"};
}

NormalizerFn make_normalizer(const NormalizerSpec& spec) {
  using torch::Tensor;
  const std::string& name = spec.name;
  if (name == "softmax") return [](const Tensor& z, const Tensor&) { return softmax(z); };
  if (name == "sparsemax") return [](const Tensor& z, const Tensor&) { return sparsemax(z); };
  if (name == "entmax15") return [](const Tensor& z, const Tensor&) { return entmax15(z); };
  if (name == "adaptive_softmax") return [](const Tensor& z, const Tensor&) { return adaptive_softmax(z); };
  if (name == "stickbreaking") return [](const Tensor& z, const Tensor&) { return stickbreaking(z); };
  if (name == "entmax") {
    if (!(spec.alpha > 1.0) || !std::isfinite(spec.alpha)) {
      throw UserError("normalizer 'entmax' needs alpha > 1, got " + std::to_string(spec.alpha));
    }
    const double alpha = spec.alpha;
    return [alpha](const Tensor& z, const Tensor& learned) {
      return learned.defined() ? entmax(z, learned) : entmax(z, alpha);
    };
  }
  if (name == "topk") {
    if (spec.topk < 1) throw UserError("normalizer 'topk' needs topk >= 1, got " + std::to_string(spec.topk));
    const int64_t k = spec.topk;
    return [k](const Tensor& z, const Tensor&) { return topk_softmax(z, k); };
  }
  std::string message = "unknown normalizer '" + name + "'";
  const std::string suggestion = closest_match(name, normalizer_names());
  if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
  throw UserError(message +
                  " (known: softmax, sparsemax, entmax15, entmax, topk, adaptive_softmax, stickbreaking)");
}

}  // namespace lengen
