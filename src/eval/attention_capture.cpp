#include "lengen/attention_capture.h"

#include <algorithm>

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

// The input position of the query that predicts target symbol j is first_target_query(sample) + j.
// Labels are predicted at their own source symbol (input position t + 1); a target after the
// source is predicted from the SEP on.
int64_t first_target_query(const Sample& sample) {
  return sample.framing == Framing::kLabelPerPosition ? 1 : static_cast<int64_t>(sample.src.size()) + 1;
}

}  // namespace

void observe_target_attention(Decoder& model, const std::vector<Sample>& samples, size_t observed,
                              const BatchTargetRowVisitor& visit, const std::function<void()>& forward) {
  observed = std::min(observed, samples.size());
  if (observed == 0) {
    forward();
    return;
  }
  std::vector<int64_t> firsts, targets;
  for (size_t s = 0; s < observed; ++s) {
    firsts.push_back(first_target_query(samples[s]));
    targets.push_back(static_cast<int64_t>(samples[s].trg.size()));
  }
  const int64_t first_row = *std::min_element(firsts.begin(), firsts.end());
  ObserverScope scope(model);
  for (int64_t layer = 0; layer < model->config().layers; ++layer) {
    const auto index = static_cast<size_t>(layer);
    // Right-padded sequences without a cache: a key's index is its position.
    model->block(index)->attention()->set_weight_observer(
        [&visit, &firsts, &targets, index](const torch::Tensor& weights, const torch::Tensor& query_positions,
                                           const torch::Tensor&) {
          const torch::Tensor positions = query_positions.to(torch::kCPU);
          for (size_t s = 0; s < firsts.size(); ++s) {
            const auto sequence = static_cast<int64_t>(s);
            const auto rows = positions[sequence] - firsts[s];  // padding (-1) falls below 0
            const auto kept = ((rows >= 0) & (rows < targets[s])).nonzero().squeeze(1);
            if (kept.numel() == 0) continue;
            visit(s, index, rows.index_select(0, kept),
                  weights[sequence]
                      .index_select(1, kept.to(weights.device()))
                      .to(torch::kFloat)
                      .to(torch::kCPU));
          }
        },
        first_row);
  }
  forward();
}

void forward_sample(Decoder& model, const Sample& sample) {
  const auto device = model->parameters().front().device();
  const std::vector<int32_t> input = encode(sample).input;
  model->forward(torch::tensor(input, torch::kInt).to(torch::kLong).unsqueeze(0).to(device));
}

// Each layer's target rows of `sample`, on the dense attention path.
static void visit_target_attention(Decoder& model, const Sample& sample, const TargetRowVisitor& visit) {
  torch::NoGradGuard no_grad;
  model->eval();
  observe_target_attention(
      model, {sample}, 1,
      [&visit](size_t, size_t layer, const torch::Tensor& rows, const torch::Tensor& weights) {
        visit(layer, rows, weights);
      },
      [&] { forward_sample(model, sample); });
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
