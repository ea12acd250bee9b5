#pragma once
// What the decoder holds in CPU memory for one training step or one forward pass, estimated from
// its config before anything is allocated. A step larger than the machine is killed by the kernel
// partway (no message, a half-made run folder, and on a shared machine perhaps another user's
// process); refusing it first is one line.
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

// The decoder's parameters with `vocab` token ids: embedding, head, and each layer's projections
// and MLP (norm scales and length-scaling parameters, a few per head, left out).
double decoder_parameters(const ModelConfig& model, int64_t vocab);

// One CPU training step of `sequences` sequences of `tokens` tokens. Each layer's attention costs
// about 12 bytes per query-key pair and head (scores, weights and their gradients), its
// activations about 16 model-wide, 4 MLP-wide and 8 head-wide floats per token, the output layer 3
// vocabulary-wide floats per token, and each parameter 16 bytes (weight, gradient, two moments).
// The per-token coefficients are fitted below measured peaks (about 0.95 of one step of
// configs/quick/mqmtar_paper.json's shape at batch 256, 0.93 of a 1-layer d_model 16 copy model's).
MemoryEstimate training_step_memory(const ModelConfig& model, int64_t vocab, double tokens, double sequences);

// One forward pass without gradients over one sequence of `tokens` tokens, its queries taken in
// chunks of model.prefill_chunk: one chunk's scores and weights at a time, one layer's
// activations, the logits, and the weights.
MemoryEstimate forward_memory(const ModelConfig& model, int64_t vocab, double tokens);

// The machine's physical memory in bytes; 0 where the system does not say.
double physical_memory_bytes();

// UserError "SUBJECT needs at least X GiB for WHAT (its parts), more than this machine's M GiB of
// memory; REMEDY" when `estimate` exceeds the machine's memory; nothing where that is unknown.
void check_fits_in_memory(const MemoryEstimate& estimate, const std::string& subject, const std::string& what,
                          const std::string& remedy);

}  // namespace lengen
