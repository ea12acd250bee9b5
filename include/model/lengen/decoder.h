#pragma once
// The decoder of docs/method.md, "The decoder" (Gemma-2-like, random init): scaled embedding, blocks with
// sandwich RMSNorms around attention and a GeGLU-tanh MLP, final RMSNorm, untied head.
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <vector>

#include "lengen/attention.h"
#include "lengen/config.h"

namespace lengen {

class RMSNormImpl : public torch::nn::Module {
 public:
  explicit RMSNormImpl(int64_t dim);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::Tensor weight_;  // the norm scales by (1 + weight), so weight starts at 0
};
TORCH_MODULE(RMSNorm);

class MlpImpl : public torch::nn::Module {
 public:
  MlpImpl(int64_t d_model, int64_t d_mlp);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Linear gate_{nullptr}, up_{nullptr}, down_{nullptr};
};
TORCH_MODULE(Mlp);

class BlockImpl : public torch::nn::Module {
 public:
  explicit BlockImpl(const ModelConfig& config);
  // The block's output at the rows from `first_query` on; every row is read as a key.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& positions, LayerCache* cache, HeadStats* stats,
                        int64_t first_query = 0);
  Attention attention() const { return attention_; }

 private:
  RMSNorm pre_attention_norm_{nullptr}, post_attention_norm_{nullptr};
  RMSNorm pre_mlp_norm_{nullptr}, post_mlp_norm_{nullptr};
  Attention attention_{nullptr};
  Mlp mlp_{nullptr};
};
TORCH_MODULE(Block);

// One cache per layer; empty until the first forward with it.
struct KVCache {
  std::vector<LayerCache> layers;
  int64_t length() const { return layers.empty() || !layers[0].keys.defined() ? 0 : layers[0].keys.size(2); }
};

// Per layer, per head attention statistics.
struct AttentionStats {
  std::vector<HeadStats> layers;
};

// The first sequence index where `select` [B, T] is true in any row (0 when none is).
int64_t first_selected_row(const torch::Tensor& select);

class DecoderImpl : public torch::nn::Module {
 public:
  DecoderImpl(const ModelConfig& config, int64_t vocab);

  // tokens [B, T] (int64). positions [B, T]: absolute positions, -1 for (left) padding;
  // undefined means 0..T-1 (or continuing after the cache). Returns logits [B, T, vocab].
  torch::Tensor forward(const torch::Tensor& tokens, torch::Tensor positions = {}, KVCache* cache = nullptr,
                        AttentionStats* stats = nullptr);

  // Logits only where `select` [B, T] (bool) is true, row-major: [N, vocab]; the output layer is
  // a big share of a small model's step, so it runs only at the target positions; the last block
  // only from the first selected row on (its attention statistics count those rows).
  torch::Tensor forward_selected(const torch::Tensor& tokens, const torch::Tensor& positions,
                                 const torch::Tensor& select, AttentionStats* stats = nullptr);

  // Queries per chunk in attention (0 = all at once); bounds evaluation memory.
  void set_query_chunk(int64_t chunk);
  // The attention kernel of every layer when running without grad (see AttentionKernel).
  void set_attention_kernel(AttentionKernel kernel);
  const ModelConfig& config() const { return config_; }
  int64_t vocab() const { return vocab_; }
  Block block(size_t layer) const { return blocks_[layer]; }

 private:
  ModelConfig config_;
  int64_t vocab_;

  // The final normalized hidden states [B, T - last_from, d_model] (the last block's rows from last_from on).
  torch::Tensor hidden_states(const torch::Tensor& tokens, torch::Tensor positions, KVCache* cache,
                              AttentionStats* stats, int64_t last_from = 0);
  torch::Tensor output_logits(const torch::Tensor& hidden);
  torch::nn::Embedding embedding_{nullptr};
  std::vector<Block> blocks_;
  RMSNorm final_norm_{nullptr};
  torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(Decoder);

// Every weight matrix and the embedding ~ N(0, std); norm weights 0. Length-scaling
// parameters keep their own initialisation (docs/method.md, "Length scaling").
void initialize_weights(DecoderImpl& model, double std);

}  // namespace lengen
