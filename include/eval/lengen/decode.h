#pragma once
// Batched greedy decoding with a KV cache. Prompts of different lengths are left-padded;
// every token keeps its own sequence's position (pads are at -1 and never attended).
#include <cstdint>
#include <vector>

#include "lengen/decoder.h"

namespace lengen {

// Left-pads token rows to one length: tokens with kPad, positions -1 on the padding and
// 0..len-1 on each row's own tokens. Returns {tokens, positions}, both [B, T] int64.
std::pair<torch::Tensor, torch::Tensor> left_pad(const std::vector<std::vector<int32_t>>& rows);

// Generates after each prompt until EOS (included in the output) or max_new_tokens[b]
// tokens. Runs under no-grad; the model's query chunk bounds the prefill memory.
std::vector<std::vector<int32_t>> greedy_decode(Decoder& model,
                                                const std::vector<std::vector<int32_t>>& prompts,
                                                const std::vector<int64_t>& max_new_tokens,
                                                AttentionStats* stats = nullptr);

}  // namespace lengen
