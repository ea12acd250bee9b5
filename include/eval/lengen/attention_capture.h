#pragma once
// The attention weights of a sample's target rows (the queries predicting its target symbols),
// read from the dense path chunk by chunk, so a caller keeps only what it needs.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "lengen/decoder.h"
#include "lengen/task.h"

namespace lengen {

// The input position of source symbol i (after the BOS).
inline int64_t source_position(int64_t i) { return i + 1; }

// rows: the target indices j [R] (int64) of one chunk; weights [H, R, keys] of those rows against
// input positions 0..keys-1 (keys past the chunk's last query are not passed: their weight is 0).
using TargetRowVisitor =
    std::function<void(size_t layer, const torch::Tensor& rows, const torch::Tensor& weights)>;

// One forward pass over `sample`'s teacher-forced input, unpadded.
void forward_sample(Decoder& model, const Sample& sample);

// rows and weights as for TargetRowVisitor, of the batch's sequence `sequence`.
using BatchTargetRowVisitor = std::function<void(size_t sequence, size_t layer, const torch::Tensor& rows,
                                                 const torch::Tensor& weights)>;

// Runs `forward` over the teacher-forced batch of `samples` and passes each layer's target rows of
// its first `observed` sequences to `visit`, so the evaluation's own pass records them.
void observe_target_attention(Decoder& model, const std::vector<Sample>& samples, size_t observed,
                              const BatchTargetRowVisitor& visit, const std::function<void()>& forward);

// Per layer, the weights [H, |trg|, T] (fp32, on the CPU) of the target rows against all T input
// positions, future positions included (their weight is 0).
std::vector<torch::Tensor> target_attention(Decoder& model, const Sample& sample);

}  // namespace lengen
