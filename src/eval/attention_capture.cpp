#include "lengen/attention_capture.h"

#include "lengen/sequence.h"

namespace lengen {

namespace {

// Clears the observers however the forward pass ends, so no later pass reports to a visitor
// that is gone.
class ObserverScope {
 public:
  explicit ObserverScope(Decoder& model) : model_(model) {}
  ~ObserverScope() {
    for (int64_t layer = 0; layer < model_->config().layers; ++layer) {
      model_->block(static_cast<size_t>(layer))->attention()->set_weight_observer(nullptr);
    }
  }
  ObserverScope(const ObserverScope&) = delete;
  ObserverScope& operator=(const ObserverScope&) = delete;

 private:
  Decoder& model_;
};

}  // namespace

int64_t first_target_query(const Sample& sample) { return static_cast<int64_t>(sample.src.size()) + 1; }

void visit_target_attention(Decoder& model, const Sample& sample, const TargetRowVisitor& visit) {
  torch::NoGradGuard no_grad;
  model->eval();
  const auto device = model->parameters().front().device();
  const std::vector<int32_t> input = encode(sample).input;
  const auto tokens = torch::tensor(input, torch::kInt).to(torch::kLong).unsqueeze(0).to(device);
  const int64_t first = first_target_query(sample);
  const auto targets = static_cast<int64_t>(sample.trg.size());
  ObserverScope scope(model);
  for (int64_t layer = 0; layer < model->config().layers; ++layer) {
    const auto index = static_cast<size_t>(layer);
    // One unpadded sequence without a cache: key positions are 0..keys-1, so a key's index is
    // its position.
    model->block(index)->attention()->set_weight_observer(
        [&visit, index, first, targets](const torch::Tensor& weights, const torch::Tensor& query_positions,
                                        const torch::Tensor&) {
          const auto rows = query_positions[0].to(torch::kCPU) - first;
          const auto kept = ((rows >= 0) & (rows < targets)).nonzero().squeeze(1);
          if (kept.numel() == 0) return;
          visit(index, rows.index_select(0, kept),
                weights[0].index_select(1, kept.to(weights.device())).to(torch::kFloat).to(torch::kCPU));
        },
        first);
  }
  model->forward(tokens);
}

std::vector<torch::Tensor> target_attention(Decoder& model, const Sample& sample) {
  const auto length = static_cast<int64_t>(sample.src.size() + sample.trg.size() + 2);
  std::vector<torch::Tensor> maps;
  for (int64_t layer = 0; layer < model->config().layers; ++layer) {
    maps.push_back(torch::zeros({model->config().heads, static_cast<int64_t>(sample.trg.size()), length}));
  }
  visit_target_attention(model, sample,
                         [&maps](size_t layer, const torch::Tensor& rows, const torch::Tensor& weights) {
                           maps[layer].narrow(2, 0, weights.size(2)).index_copy_(1, rows, weights);
                         });
  return maps;
}

}  // namespace lengen
