#include "lengen/attention_on_target.h"

#include <torch/torch.h>

#include <algorithm>
#include <optional>

#include "lengen/attention_capture.h"

namespace lengen {

namespace {

// Each target symbol's answering input positions as rows of a padded index: positions [trg, A]
// (padding points at position 0) and a 0/1 weight [trg, A] that drops the padding. `answered`
// [trg] (bool) marks the symbols with any answering key.
struct AnswerIndex {
  torch::Tensor positions;
  torch::Tensor keep;
  torch::Tensor answered;
};

AnswerIndex answer_index(const AnswerSources& sources) {
  size_t width = 1;
  for (const auto& keys : sources) width = std::max(width, keys.size());
  const auto rows = static_cast<int64_t>(sources.size());
  AnswerIndex index{torch::zeros({rows, static_cast<int64_t>(width)}, torch::kLong),
                    torch::zeros({rows, static_cast<int64_t>(width)}), torch::zeros({rows}, torch::kBool)};
  auto positions = index.positions.accessor<int64_t, 2>();
  auto keep = index.keep.accessor<float, 2>();
  auto answered = index.answered.accessor<bool, 1>();
  for (int64_t j = 0; j < rows; ++j) {
    const auto& keys = sources[static_cast<size_t>(j)];
    answered[j] = !keys.empty();
    for (size_t a = 0; a < keys.size(); ++a) {
      positions[j][static_cast<int64_t>(a)] = source_position(keys[a]);
      keep[j][static_cast<int64_t>(a)] = 1.0F;
    }
  }
  return index;
}

}  // namespace

AttentionOnTargetMeter::AttentionOnTargetMeter(const Task& task, const ModelConfig& model,
                                               int64_t max_samples)
    : task_(task), remaining_(std::max<int64_t>(max_samples, 0)) {
  for (int64_t layer = 0; layer < model.layers; ++layer)
    sums_.push_back(torch::zeros({model.heads}, torch::kDouble));
}

void AttentionOnTargetMeter::measure(Decoder& model, const std::vector<Sample>& batch,
                                     const std::function<void()>& forward) {
  std::vector<AnswerIndex> indices;
  const size_t wanted = unknown_ ? 0 : std::min(batch.size(), static_cast<size_t>(remaining_));
  for (size_t s = 0; s < wanted; ++s) {
    const std::optional<AnswerSources> sources = task_.answer_sources(batch[s]);
    if (!sources) {
      unknown_ = true;
      indices.clear();
      break;
    }
    indices.push_back(answer_index(*sources));
  }
  observe_target_attention(
      model, batch, indices.size(),
      [&](size_t sequence, size_t layer, const torch::Tensor& rows, const torch::Tensor& weights) {
        const AnswerIndex& index = indices[sequence];
        const auto positions = index.positions.index_select(0, rows);  // [R, A]
        const auto keep = index.keep.index_select(0, rows);
        const auto answered = index.answered.index_select(0, rows);
        const auto on_target =
            (weights.gather(2, positions.unsqueeze(0).expand({weights.size(0), -1, -1})) * keep.unsqueeze(0))
                .sum(2);  // [H, R]
        sums_[layer] += on_target.index({torch::indexing::Slice(), answered}).sum(1, false, torch::kDouble);
      },
      forward);
  for (const AnswerIndex& index : indices) queries_ += index.answered.sum().item<int64_t>();
  samples_ += static_cast<int64_t>(indices.size());
  remaining_ -= static_cast<int64_t>(indices.size());
}

AttentionOnTarget AttentionOnTargetMeter::result() const {
  AttentionOnTarget measured;
  // Samples whose target symbols all lack an answering key (hand-made reference files can hold
  // them) leave nothing to average: not a measured 0.
  measured.known = !unknown_ && queries_ > 0;
  if (!unknown_) {
    measured.samples = samples_;
    measured.queries = queries_;
  }
  if (!measured.known) return measured;
  for (const auto& sum : sums_) {
    auto mean = (sum / static_cast<double>(std::max<int64_t>(queries_, 1))).contiguous();
    measured.heads.emplace_back(mean.data_ptr<double>(), mean.data_ptr<double>() + mean.numel());
  }
  return measured;
}

TargetAttention target_attention(const AttentionOnTarget& measured, const std::string& task_name) {
  TargetAttention target;
  target.known = measured.known;
  if (!measured.known) {
    target.note = measured.samples > 0 ? "no target symbol of the " + std::to_string(measured.samples) +
                                             " measured sample(s) has a key in its source that answers it"
                                       : task_name + " names no key that answers a target symbol";
    return target;
  }
  target.samples = measured.samples;
  target.queries = measured.queries;
  for (const auto& heads : measured.heads) {
    const auto best = std::max_element(heads.begin(), heads.end());
    double mean = 0.0;
    for (double value : heads) mean += value;
    mean /= static_cast<double>(std::max<size_t>(heads.size(), 1));
    target.layers.push_back({heads, best - heads.begin(), best == heads.end() ? 0.0 : *best, mean});
  }
  return target;
}

}  // namespace lengen
