#include "lengen/memory_estimate.h"

#include <spdlog/fmt/fmt.h>
#include <unistd.h>

#include <algorithm>

#include "lengen/errors.h"

namespace lengen {

// Embedding, head, and each layer's projections and MLP (norm scales and scaling parameters left out).
static double decoder_parameters(const ModelConfig& model, int64_t vocab) {
  const auto d = static_cast<double>(model.d_model);
  const double inner = static_cast<double>(model.heads) * static_cast<double>(model.d_head);
  // q, k, v and out projections; the GeGLU MLP's gate, up and down.
  const double per_layer = 4.0 * d * inner + 3.0 * d * static_cast<double>(model.d_mlp);
  return 2.0 * static_cast<double>(vocab) * d + static_cast<double>(model.layers) * per_layer;
}

MemoryEstimate training_step_memory(const ModelConfig& model, int64_t vocab, double tokens,
                                    double sequences) {
  const auto layers = static_cast<double>(model.layers);
  MemoryEstimate estimate;
  estimate.attention = sequences * static_cast<double>(model.heads) * layers * tokens * tokens * 12.0;
  estimate.activations =
      sequences * tokens * layers *
      static_cast<double>(16 * model.d_model + 4 * model.d_mlp + 8 * model.heads * model.d_head) * 4.0;
  estimate.logits = sequences * tokens * static_cast<double>(vocab) * 3.0 * 4.0;
  estimate.parameters = decoder_parameters(model, vocab) * 16.0;
  return estimate;
}

MemoryEstimate forward_memory(const ModelConfig& model, int64_t vocab, double tokens) {
  const double queries =
      model.prefill_chunk > 0 ? std::min(tokens, static_cast<double>(model.prefill_chunk)) : tokens;
  MemoryEstimate estimate;
  estimate.attention = static_cast<double>(model.heads) * queries * tokens * 12.0;
  estimate.activations =
      tokens * static_cast<double>(16 * model.d_model + 4 * model.d_mlp + 8 * model.heads * model.d_head) *
      4.0;
  estimate.logits = tokens * static_cast<double>(vocab) * 3.0 * 4.0;
  estimate.parameters = decoder_parameters(model, vocab) * 4.0;
  return estimate;
}

// 0 where the system does not say.
static double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0.0;
  return static_cast<double>(pages) * static_cast<double>(page_size);
}

void check_fits_in_memory(const MemoryEstimate& estimate, const std::string& subject, const std::string& what,
                          const std::string& remedy) {
  const double memory = physical_memory_bytes();
  if (memory <= 0.0 || estimate.total() <= memory) return;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  std::string parts;
  const auto add = [&parts](double bytes, const char* name) {
    if (bytes > 0.0) parts += fmt::format("{}{:.3g} GiB {}", parts.empty() ? "" : ", ", bytes / kGiB, name);
  };
  add(estimate.attention, "attention weights");
  add(estimate.activations, "activations");
  add(estimate.logits, "logits");
  add(estimate.parameters, "parameters");
  throw UserError(
      fmt::format("{} needs at least {:.3g} GiB for {} ({}), more than this machine's {:.3g} GiB of "
                  "memory; {}",
                  subject, estimate.total() / kGiB, what, parts, memory / kGiB, remedy));
}

}  // namespace lengen
