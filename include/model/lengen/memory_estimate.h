#pragma once
// The decoder's CPU memory for one training step or forward pass, estimated before allocating:
// refusing a step larger than the machine beats being killed by the kernel partway.
#include <cstdint>
#include <string>

#include "lengen/config.h"

namespace lengen {

// Bytes, by what holds them.
struct MemoryEstimate {
  double attention = 0.0;    // attention scores and weights (and their gradients in training)
  double activations = 0.0;  // the layers' activations kept for the backward pass
  double logits = 0.0;       // the output layer's logits, probabilities and their gradient
  double parameters = 0.0;   // weights (and gradients and AdamW's two moments in training)

  double total() const { return attention + activations + logits + parameters; }
};

// One CPU training step of `sequences` sequences of `tokens` tokens; the per-token coefficients
// are fitted just below measured peaks (0.93-0.95 of them).
MemoryEstimate training_step_memory(const ModelConfig& model, int64_t vocab, double tokens, double sequences);

// One forward pass without gradients over one sequence, queries in chunks of model.prefill_chunk.
MemoryEstimate forward_memory(const ModelConfig& model, int64_t vocab, double tokens);

// UserError "SUBJECT needs at least X GiB for WHAT (its parts), more than this machine's M GiB of
// memory; REMEDY" when `estimate` exceeds the machine's memory; nothing where that is unknown.
void check_fits_in_memory(const MemoryEstimate& estimate, const std::string& subject, const std::string& what,
                          const std::string& remedy);

}  // namespace lengen
