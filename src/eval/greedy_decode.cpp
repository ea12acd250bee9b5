#include <torch/torch.h>

#include <algorithm>

#include "lengen/decode.h"
#include "lengen/sequence.h"

namespace lengen {

std::pair<torch::Tensor, torch::Tensor> left_pad(const std::vector<std::vector<int32_t>>& rows) {
  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.size());
  const int64_t batch = static_cast<int64_t>(rows.size());
  auto tokens = torch::full({batch, static_cast<int64_t>(width)}, kPad, torch::kLong);
  auto positions = torch::full({batch, static_cast<int64_t>(width)}, -1, torch::kLong);
  auto token_data = tokens.accessor<int64_t, 2>();
  auto position_data = positions.accessor<int64_t, 2>();
  for (int64_t b = 0; b < batch; ++b) {
    const size_t pad = width - rows[b].size();
    for (size_t t = 0; t < rows[b].size(); ++t) {
      token_data[b][pad + t] = rows[b][t];
      position_data[b][pad + t] = static_cast<int64_t>(t);
    }
  }
  return {tokens, positions};
}

std::vector<std::vector<int32_t>> greedy_decode(Decoder& model,
                                                const std::vector<std::vector<int32_t>>& prompts,
                                                const std::vector<int64_t>& max_new_tokens,
                                                AttentionStats* stats) {
  torch::NoGradGuard no_grad;
  const auto device = model->parameters().front().device();
  auto [tokens, positions] = left_pad(prompts);
  tokens = tokens.to(device);
  positions = positions.to(device);
  const int64_t batch = tokens.size(0);
  const int64_t longest = *std::max_element(max_new_tokens.begin(), max_new_tokens.end());

  std::vector<std::vector<int32_t>> outputs(batch);
  std::vector<bool> done(batch, false);
  KVCache cache;
  auto logits = model->forward(tokens, positions, &cache, stats);
  auto next_positions = positions.select(1, positions.size(1) - 1).unsqueeze(1) + 1;
  for (int64_t step = 0; step < longest; ++step) {
    auto next = logits.select(1, logits.size(1) - 1).argmax(-1);  // [B]
    auto next_cpu = next.cpu();
    bool all_done = true;
    for (int64_t b = 0; b < batch; ++b) {
      if (done[b]) continue;
      const auto token = static_cast<int32_t>(next_cpu[b].item<int64_t>());
      outputs[b].push_back(token);
      done[b] = token == kEos || static_cast<int64_t>(outputs[b].size()) >= max_new_tokens[b];
      all_done = all_done && done[b];
    }
    if (all_done) break;
    // Finished rows keep decoding in lockstep as padding (position -1), so attention statistics
    // count unfinished rows only, whichever rows share a batch.
    std::vector<uint8_t> finished(done.begin(), done.end());
    const auto finished_rows =
        torch::from_blob(finished.data(), {batch, 1}, torch::kUInt8).to(torch::kBool).to(device);
    logits = model->forward(next.unsqueeze(1), next_positions.masked_fill(finished_rows, -1), &cache, stats);
    next_positions = next_positions + 1;
  }
  return outputs;
}

}  // namespace lengen
