#include "lengen/decoder.h"

#include <torch/torch.h>

#include <cmath>
#include <utility>

#include "lengen/fused_layers.h"
#include "lengen/precision.h"

namespace lengen {

RMSNormImpl::RMSNormImpl(int64_t dim) { weight_ = register_parameter("weight", torch::zeros({dim})); }

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) {
  // In fp32 or better whatever the input dtype: the mean of squares overflows or loses digits in bf16.
  return rms_norm(to_at_least_fp32(x), weight_, 1e-6).to(x.dtype());
}

MlpImpl::MlpImpl(int64_t d_model, int64_t d_mlp) {
  auto linear = [](int64_t in, int64_t out) {
    return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
  };
  gate_ = register_module("gate", linear(d_model, d_mlp));
  up_ = register_module("up", linear(d_model, d_mlp));
  down_ = register_module("down", linear(d_mlp, d_model));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
  return down_(gated_gelu(gate_(x), up_(x)));
}

BlockImpl::BlockImpl(const ModelConfig& config) {
  pre_attention_norm_ = register_module("pre_attention_norm", RMSNorm(config.d_model));
  attention_ = register_module("attention", Attention(config));
  post_attention_norm_ = register_module("post_attention_norm", RMSNorm(config.d_model));
  pre_mlp_norm_ = register_module("pre_mlp_norm", RMSNorm(config.d_model));
  mlp_ = register_module("mlp", Mlp(config.d_model, config.d_mlp));
  post_mlp_norm_ = register_module("post_mlp_norm", RMSNorm(config.d_model));
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x, const torch::Tensor& positions, LayerCache* cache,
                                 HeadStats* stats, int64_t first_query) {
  const auto attended = attention_->forward(pre_attention_norm_(x), positions, cache, stats, first_query);
  auto h = x.narrow(1, first_query, attended.size(1)) + post_attention_norm_(attended);
  return h + post_mlp_norm_(mlp_(pre_mlp_norm_(h)));
}

DecoderImpl::DecoderImpl(const ModelConfig& config, int64_t vocab) : config_(config), vocab_(vocab) {
  embedding_ = register_module("embedding", torch::nn::Embedding(vocab, config.d_model));
  for (int64_t layer = 0; layer < config.layers; ++layer) {
    blocks_.push_back(register_module("block" + std::to_string(layer), Block(config)));
  }
  final_norm_ = register_module("final_norm", RMSNorm(config.d_model));
  head_ =
      register_module("head", torch::nn::Linear(torch::nn::LinearOptions(config.d_model, vocab).bias(false)));
  initialize_weights(*this, config.init_std);
}

torch::Tensor DecoderImpl::forward(const torch::Tensor& tokens, torch::Tensor positions, KVCache* cache,
                                   AttentionStats* stats) {
  return output_logits(hidden_states(tokens, std::move(positions), cache, stats));
}

int64_t first_selected_row(const torch::Tensor& select) {
  return select.any(0).to(torch::kInt).argmax().item<int64_t>();  // the first maximum: 0 when none is
}

torch::Tensor DecoderImpl::forward_selected(const torch::Tensor& tokens, const torch::Tensor& positions,
                                            const torch::Tensor& select, AttentionStats* stats) {
  const int64_t first = first_selected_row(select);
  const torch::Tensor hidden = hidden_states(tokens, positions, nullptr, stats, first);
  return output_logits(hidden.index({select.narrow(1, first, select.size(1) - first)}));
}

torch::Tensor DecoderImpl::output_logits(const torch::Tensor& hidden) {
  return to_at_least_fp32(head_(hidden));
}

torch::Tensor DecoderImpl::hidden_states(const torch::Tensor& tokens, torch::Tensor positions, KVCache* cache,
                                         AttentionStats* stats, int64_t last_from) {
  if (!positions.defined()) {
    const int64_t offset = cache != nullptr ? cache->length() : 0;
    positions = torch::arange(offset, offset + tokens.size(1), tokens.options().dtype(torch::kLong))
                    .unsqueeze(0)
                    .expand({tokens.size(0), tokens.size(1)});
  }
  if (cache != nullptr && cache->layers.empty()) cache->layers.resize(blocks_.size());
  if (stats != nullptr && stats->layers.empty()) stats->layers.resize(blocks_.size());
  auto x = embedding_(tokens) * std::sqrt(static_cast<double>(config_.d_model));
  for (size_t layer = 0; layer < blocks_.size(); ++layer) {
    const bool last = layer + 1 == blocks_.size();
    x = blocks_[layer]->forward(x, positions, cache != nullptr ? &cache->layers[layer] : nullptr,
                                stats != nullptr ? &stats->layers[layer] : nullptr, last ? last_from : 0);
  }
  return final_norm_(x);
}

void DecoderImpl::set_query_chunk(int64_t chunk) {
  for (auto& block : blocks_) block->attention()->set_query_chunk(chunk);
}

void DecoderImpl::set_attention_kernel(AttentionKernel kernel) {
  for (auto& block : blocks_) block->attention()->set_kernel(kernel);
}

void initialize_weights(DecoderImpl& model, double std) {
  torch::NoGradGuard no_grad;
  for (auto& item : model.named_parameters()) {
    const auto& name = item.key();
    if (name.find("scaling.") != std::string::npos || name.find(".alpha.") != std::string::npos) continue;
    if (name.find("norm") != std::string::npos) {
      item.value().zero_();
    } else {
      item.value().normal_(0.0, std);
    }
  }
}

}  // namespace lengen
