// The fused evaluation attention against the dense reference (table-style, as the normalizer
// tests): every fused normalizer x length scaling x position encoding, with padding on either
// side, a single winning key, all-equal rows, the KV cache, and any thread count.
#include "attention/fused_attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lengen/attention.h"
#include "lengen/attention_choices.h"
#include "lengen/compute_threads.h"
#include "lengen/config_io.h"
#include "lengen/decode.h"
#include "lengen/decoder.h"
#include "lengen/errors.h"
#include "lengen/normalizer_registry.h"
#include "lengen/row_kernels.h"
#include "lengen/stop_signals.h"
#include "model_test_util.h"

namespace lengen {
namespace {

struct Outputs {
  torch::Tensor out;
  HeadStats stats;
};

Outputs attend(Attention& attention, const torch::Tensor& x, const torch::Tensor& positions,
               AttentionKernel kernel) {
  torch::NoGradGuard no_grad;
  attention->set_kernel(kernel);
  // A comparison of the fused path with the dense one must run the fused path: a normalizer the
  // fused kernel stopped serving would otherwise compare the dense path with itself.
  if (kernel == AttentionKernel::kFused) {
    EXPECT_TRUE(attention->uses_fused_kernel(x.to(torch::kFloat)))
        << "the fused kernel does not serve this attention";
  }
  Outputs outputs;
  outputs.out = attention(x, positions, nullptr, &outputs.stats);
  return outputs;
}

// Entmax with alpha above 2 has an unbounded slope at the edge of its support: a key whose score
// sits d above the threshold weighs about d^(1/(alpha-1)), so the two paths' float roundings of
// the threshold (d ~ 1e-6) move such a weight by up to 2e-6^(1/(alpha-1)) (1.4e-3 at alpha 3),
// not by a multiple of d. Below alpha 2 (softmax, entmax 1.5, sparsemax) the weights are smooth
// in the threshold and nothing is added.
double support_edge_tolerance(const NormalizerVariant& method) {
  const double alpha = method.spec.alpha;
  return method.spec.name == "entmax" && alpha > 2 ? std::pow(2e-6, 1 / (alpha - 1)) : 0.0;
}

// Outputs within float tolerance (or `edge_tolerance`, support_edge_tolerance); statistics over
// the same rows, nonzero counts equal up to an entry that sits at float resolution of the
// threshold in one path and not in the other.
void expect_same(const Outputs& dense, const Outputs& fused, const std::string& label,
                 double edge_tolerance = 0.0) {
  ASSERT_TRUE(fused.out.defined()) << label;
  const double error = (dense.out - fused.out).abs().max().item<double>();
  const double scale = dense.out.abs().max().item<double>();
  EXPECT_LE(error, std::max(2e-5 * std::max(1.0, scale), edge_tolerance)) << label;
  EXPECT_EQ(dense.stats.rows, fused.stats.rows) << label;
  ASSERT_TRUE(fused.stats.nonzero_sum.defined()) << label;
  const double rows = static_cast<double>(dense.stats.rows);
  EXPECT_LE((dense.stats.nonzero_sum - fused.stats.nonzero_sum).abs().max().item<double>(),
            std::max(1.0, 1e-3 * rows))
      << label << "\ndense " << dense.stats.nonzero_sum << "\nfused " << fused.stats.nonzero_sum;
  EXPECT_LE((dense.stats.entropy_sum - fused.stats.entropy_sum).abs().max().item<double>(), 1e-4 * rows)
      << label;
}

// A registered normalizer variant as a model.attention config: a variant whose alpha is a tensor
// is a learned alpha.
ModelConfig config_for(const NormalizerVariant& variant, const std::string& scaling,
                       const std::string& positions) {
  ModelConfig config = testing::tiny_model_config(variant.spec.name, scaling, positions);
  config.attention.alpha = variant.spec.alpha;
  config.attention.topk = variant.spec.topk;
  config.attention.learn_alpha = variant.alpha_as_tensor;
  return config;
}

// Every registered variant with a fused row kernel: a normalizer is tested here by being registered.
std::vector<NormalizerVariant> fused_methods() {
  std::vector<NormalizerVariant> methods;
  for (const NormalizerVariant& variant : normalizer_variants()) {
    if (fused_row_kernel(variant.spec, variant.alpha_as_tensor).has_value()) methods.push_back(variant);
  }
  return methods;
}

// Three sequences of `length`: whole, left-padded (as greedy decoding pads prompts) and
// right-padded (as batches pad targets).
torch::Tensor padded_positions(int64_t length) {
  auto positions = torch::arange(length).unsqueeze(0).repeat({3, 1});
  positions[1].narrow(0, 0, 5).fill_(-1);
  positions[1].narrow(0, 5, length - 5).copy_(torch::arange(length - 5));
  positions[2].narrow(0, length - 7, 7).fill_(-1);
  return positions;
}

TEST(FusedAttention, MatchesDenseForEveryNormalizerScalingAndPositions) {
  ASSERT_GE(fused_methods().size(), 4u);
  for (const NormalizerVariant& method : fused_methods()) {
    for (const std::string& scaling : scaling_names()) {
      for (const std::string& positions : position_names()) {
        if (scaling_choice(scaling).fused == FusedTerm::kDenseOnly) continue;
        if (position_choice(positions).fused == FusedTerm::kDenseOnly) continue;
        const std::string label = method.label + " / " + scaling + " / " + positions;
        const ModelConfig config = config_for(method, scaling, positions);
        torch::manual_seed(3);
        Attention attention(config);
        // Scores spread enough that the sparse normalizers keep only some keys.
        const auto x = 3 * torch::randn({3, 37, config.d_model});
        const auto pos = padded_positions(37);
        expect_same(attend(attention, x, pos, AttentionKernel::kDense),
                    attend(attention, x, pos, AttentionKernel::kFused), label,
                    support_edge_tolerance(method));
      }
    }
  }
}

// Blocks of queries, groups of four within them and key rows padded to eight all have
// remainders here; d_head 6 is not a multiple of the vector width.
TEST(FusedAttention, MatchesDenseAcrossBlocksAndOddHeadSizes) {
  for (const NormalizerVariant& method : fused_methods()) {
    for (int64_t d_head : {6, 16}) {
      ModelConfig config = config_for(method, "asentmax", "nape");
      config.d_head = d_head;
      torch::manual_seed(5);
      Attention attention(config);
      const auto x = 3 * torch::randn({3, 301, config.d_model});
      const auto pos = padded_positions(301);
      expect_same(attend(attention, x, pos, AttentionKernel::kDense),
                  attend(attention, x, pos, AttentionKernel::kFused),
                  method.label + " d_head " + std::to_string(d_head), support_edge_tolerance(method));
    }
  }
}

// Long rows whose weight spreads over most keys take the sparse normalizers' whole-row path
// (threshold searched from the previous such row's, values of a group summed together); rows
// scaled up to be peaked in between make that starting point fail and mix both paths in one
// group. Head sizes 8 and 16 are the ones summed by group.
TEST(FusedAttention, MatchesDenseOnRowsThatSwitchBetweenSpreadAndPeaked) {
  for (const std::string normalizer : {"sparsemax", "entmax15"}) {
    for (int64_t d_head : {8, 16}) {
      ModelConfig config = testing::tiny_model_config(normalizer, "asentmax", "nape");
      config.d_head = d_head;
      torch::manual_seed(11);
      Attention attention(config);
      const int64_t length = 700;
      // Per token, a scale of 0.05 (spread rows) or, for one token in five, 1.5 (peaked rows).
      const auto peaked = torch::rand({3, length, 1}) < 0.2;
      const auto x = torch::randn({3, length, config.d_model}) * torch::where(peaked, 1.5, 0.05);
      const auto pos = padded_positions(length);
      const std::string label = normalizer + " d_head " + std::to_string(d_head);
      expect_same(attend(attention, x, pos, AttentionKernel::kDense),
                  attend(attention, x, pos, AttentionKernel::kFused), label);
      // The same in two chunks with the KV cache: 301 or 302 cached keys shift the second
      // chunk's groups of four queries off the vectors of eight keys and the tiles of sixteen
      // (with 302, a group's first query sees all of a tile but its last key).
      for (int64_t cached : {301, 302}) {
        LayerCache dense_cache, fused_cache;
        for (const auto& [start, size] :
             {std::pair<int64_t, int64_t>{0, cached}, {cached, length - cached}}) {
          torch::NoGradGuard no_grad;
          Outputs dense, fused;
          attention->set_kernel(AttentionKernel::kDense);
          dense.out =
              attention(x.narrow(1, start, size), pos.narrow(1, start, size), &dense_cache, &dense.stats);
          attention->set_kernel(AttentionKernel::kFused);
          fused.out =
              attention(x.narrow(1, start, size), pos.narrow(1, start, size), &fused_cache, &fused.stats);
          expect_same(dense, fused, label + " from token " + std::to_string(start));
        }
      }
    }
  }
}

// q.k = x_q[0] x_k[0] / sqrt(d_head) on every head: with x[0] = 1 everywhere except a large value
// at one key, the queries before that key see all-equal rows and the ones after it one key
// that wins by far.
TEST(FusedAttention, MatchesDenseOnASingleWinningKeyAndAllEqualRows) {
  for (const NormalizerVariant& method : fused_methods()) {
    for (std::string positions : {"nope", "alibi"}) {
      const ModelConfig config = config_for(method, "none", positions);
      Attention attention(config);
      for (auto& item : attention->named_parameters()) {
        torch::NoGradGuard no_grad;
        const std::string& name = item.key();
        if (name != "q_proj.weight" && name != "k_proj.weight") continue;
        item.value().zero_();
        for (int64_t h = 0; h < config.heads; ++h) item.value()[h * config.d_head][0] = 1.0;
      }
      torch::manual_seed(7);
      auto x = torch::randn({3, 20, config.d_model});
      x.select(2, 0).fill_(1.0);
      x[0][9][0] = 40.0;
      x[2][3][0] = 40.0;
      const auto pos = padded_positions(20);
      const Outputs dense = attend(attention, x, pos, AttentionKernel::kDense);
      const Outputs fused = attend(attention, x, pos, AttentionKernel::kFused);
      expect_same(dense, fused, method.label + " / " + positions, support_edge_tolerance(method));
    }
  }
}

// A NaN input (blown-up weights) must not vanish as a key with zero weight: every query that
// sees it gets a NaN output on both paths. (The queries before it may be NaN too: the dense
// path multiplies the zero weights of future keys by their values.) 40 tokens: the later
// queries see the NaN key's whole tile of sixteen keys, which the kernel scores without the
// mask when the scores are known to be finite.
TEST(FusedAttention, ANonFiniteScoreGivesNaNAsOnTheDensePath) {
  for (const NormalizerVariant& method : fused_methods()) {
    const ModelConfig config = config_for(method, "none", "nope");
    torch::manual_seed(9);
    Attention attention(config);
    auto x = torch::randn({1, 40, config.d_model});
    x[0][6].fill_(std::numeric_limits<float>::quiet_NaN());
    const auto pos = torch::arange(40).unsqueeze(0);
    const Outputs dense = attend(attention, x, pos, AttentionKernel::kDense);
    const Outputs fused = attend(attention, x, pos, AttentionKernel::kFused);
    for (const Outputs* outputs : {&dense, &fused}) {
      const auto finite = torch::isfinite(outputs->out[0]).all(-1);
      EXPECT_FALSE(finite.narrow(0, 6, 34).any().item<bool>()) << method.label;
    }
  }
}

TEST(FusedAttention, MatchesDenseWithTheKeyValueCache) {
  for (const NormalizerVariant& method : fused_methods()) {
    const ModelConfig config = config_for(method, "asentmax", "nape");
    torch::manual_seed(9);
    Attention attention(config);
    const auto x = 3 * torch::randn({2, 24, config.d_model});
    auto positions = torch::arange(24).unsqueeze(0).repeat({2, 1});
    positions[1].narrow(0, 0, 4).fill_(-1);
    positions[1].narrow(0, 4, 20).copy_(torch::arange(20));
    LayerCache dense_cache, fused_cache;
    // A prefill of 16 tokens, then one token at a time.
    std::vector<std::pair<int64_t, int64_t>> steps = {{0, 16}};
    for (int64_t t = 16; t < 24; ++t) steps.push_back({t, 1});
    for (const auto& [start, size] : steps) {
      torch::NoGradGuard no_grad;
      const auto xs = x.narrow(1, start, size);
      const auto ps = positions.narrow(1, start, size);
      Outputs dense, fused;
      attention->set_kernel(AttentionKernel::kDense);
      dense.out = attention(xs, ps, &dense_cache, &dense.stats);
      attention->set_kernel(AttentionKernel::kFused);
      fused.out = attention(xs, ps, &fused_cache, &fused.stats);
      expect_same(dense, fused, method.label + " at token " + std::to_string(start),
                  support_edge_tolerance(method));
    }
  }
}

// The kernel itself, on the same q, k and v: the same bits from 1, 2 and 3 threads.
TEST(FusedAttention, SameBitsForEveryThreadCount) {
  torch::manual_seed(11);
  const int64_t heads = 4, length = 300, d_head = 16;
  const auto q = 3 * torch::randn({2, heads, length, d_head});
  const auto k = torch::randn({2, heads, length, d_head});
  const auto v = torch::randn({2, heads, length, d_head});
  auto positions = torch::arange(length).unsqueeze(0).repeat({2, 1});
  positions[1].narrow(0, length - 9, 9).fill_(-1);
  for (FusedRowKernel normalizer : {FusedRowKernel::kSoftmax, FusedRowKernel::kSparsemax,
                                    FusedRowKernel::kEntmax15, FusedRowKernel::kEntmax}) {
    FusedAttentionPlan plan;
    plan.row_kernel = normalizer;
    plan.alphas = {1.25, 1.5, 1.75, 2.5};
    plan.slopes = {1.0, 0.5, 0.0, 0.0};
    plan.score_scale = 0.25;
    std::vector<Outputs> runs;
    for (int threads : {1, 2, 3}) {
      set_compute_threads(threads);
      Outputs run;
      run.out = fused_attention(q, k, v, positions, positions, plan, &run.stats);
      runs.push_back(run);
    }
    set_compute_threads(1);
    const auto label = static_cast<int>(normalizer);
    for (size_t i = 1; i < runs.size(); ++i) {
      EXPECT_TRUE(torch::equal(runs[0].out, runs[i].out)) << label;
      EXPECT_TRUE(torch::equal(runs[0].stats.nonzero_sum, runs[i].stats.nonzero_sum)) << label;
      EXPECT_TRUE(torch::equal(runs[0].stats.entropy_sum, runs[i].stats.entropy_sum)) << label;
    }
  }
}

// Training (grad on), double precision and the dense kernel keep the dense path.
TEST(FusedAttention, GradModeDoubleAndTheDenseKernelUseTheDensePath) {
  torch::manual_seed(13);
  Attention fused_softmax(testing::tiny_model_config("softmax", "none", "nape"));
  const auto q = torch::randn({1, 4, 3, 8});
  EXPECT_TRUE(fused_softmax->uses_fused_kernel(q) == false);  // grad mode is on here
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(fused_softmax->uses_fused_kernel(q));
  EXPECT_FALSE(fused_softmax->uses_fused_kernel(q.to(torch::kDouble)));
  fused_softmax->set_kernel(AttentionKernel::kDense);
  EXPECT_FALSE(fused_softmax->uses_fused_kernel(q));
}

// For every registered normalizer variant, length scaling and position encoding: the fused kernel
// serves exactly the combinations whose normalizer has a row kernel and whose other terms are
// ones it computes (FusedTerm); a term it does not compute is never dropped.
TEST(FusedAttention, EachRegisteredCombinationTakesTheDeclaredPath) {
  torch::NoGradGuard no_grad;
  const auto q = torch::randn({1, 4, 3, 8});
  int fused = 0, dense = 0;
  for (const NormalizerVariant& variant : normalizer_variants()) {
    for (const std::string& scaling : scaling_names()) {
      for (const std::string& positions : position_names()) {
        const bool declared = fused_row_kernel(variant.spec, variant.alpha_as_tensor).has_value() &&
                              scaling_choice(scaling).fused != FusedTerm::kDenseOnly &&
                              position_choice(positions).fused != FusedTerm::kDenseOnly;
        Attention attention(config_for(variant, scaling, positions));
        EXPECT_EQ(attention->uses_fused_kernel(q), declared)
            << variant.label << " / " << scaling << " / " << positions;
        (declared ? fused : dense) += 1;
      }
    }
  }
  EXPECT_GT(fused, 0);
  EXPECT_GT(dense, 0);  // topk, adaptive_softmax and stickbreaking have no row kernel
}

// Whole models: the same greedy tokens and teacher-forced predictions from both kernels.
TEST(FusedAttention, RandomModelsDecodeTheSameTokens) {
  for (const NormalizerVariant& method : fused_methods()) {
    ModelConfig config = config_for(method, "asentmax", "nape");
    torch::manual_seed(17);
    Decoder model(config, 12);
    model->eval();
    std::vector<std::vector<int32_t>> prompts = {
        {4, 5, 6, 7, 8, 9, 10, 11, 4, 5}, {6, 7, 8}, {9, 9, 9, 4, 5}};
    const std::vector<int64_t> caps = {12, 12, 12};
    torch::NoGradGuard no_grad;
    model->set_attention_kernel(AttentionKernel::kDense);
    const auto dense_tokens = greedy_decode(model, prompts, caps, nullptr);
    const auto tokens = testing::random_tokens(3, 40, 12, 19);
    const auto dense_logits = model->forward(tokens);
    model->set_attention_kernel(AttentionKernel::kFused);
    EXPECT_EQ(greedy_decode(model, prompts, caps, nullptr), dense_tokens) << method.label;
    const auto fused_logits = model->forward(tokens);
    EXPECT_TRUE(torch::equal(fused_logits.argmax(-1), dense_logits.argmax(-1))) << method.label;
    EXPECT_LE((fused_logits - dense_logits).abs().max().item<double>(),
              std::max(1e-4, support_edge_tolerance(method)))
        << method.label;
  }
}

// A stop signal cuts an attention short only inside a StopMidComputation (an evaluation): a
// training step, outside one, always finishes, so that its checkpoint can be written.
TEST(FusedAttention, AStopSignalEndsAttentionOnlyWhereWorkMayBeCut) {
  const ModelConfig config = testing::tiny_model_config("entmax15", "asentmax", "nape");
  torch::manual_seed(3);
  Attention attention(config);
  const auto x = torch::randn({3, 40, config.d_model});
  const auto pos = padded_positions(40);
  const StopSignals signals;
  ASSERT_EQ(std::raise(SIGINT), 0);
  ASSERT_TRUE(stop_signal_received());
  for (const AttentionKernel kernel : {AttentionKernel::kFused, AttentionKernel::kDense}) {
    SCOPED_TRACE(name_of(kernel));
    EXPECT_TRUE(attend(attention, x, pos, kernel).out.defined());
    const StopMidComputation cut;
    EXPECT_THROW(attend(attention, x, pos, kernel), StopRequested);
  }
}

TEST(FusedAttention, KernelNamesAreReadIntoTheConfig) {
  EXPECT_EQ(config_from_json(nlohmann::json::parse(R"({"eval": {"attention_kernel": "dense"}})"), "k")
                .eval.attention_kernel,
            AttentionKernel::kDense);
  EXPECT_EQ(Config().eval.attention_kernel, AttentionKernel::kFused);
  EXPECT_THROW(config_from_json(nlohmann::json::parse(R"({"eval": {"attention_kernel": "fast"}})"), "k"),
               UserError);
}

}  // namespace
}  // namespace lengen

// The compress that collects a sparse row's candidate keys (vector on AVX2 CPUs) lists exactly
// the indices above the floor, in order, for every row length and density.
TEST(FusedAttention, IndicesAboveListExactlyTheEntriesAboveTheFloor) {
  torch::manual_seed(11);
  for (int64_t end : {0, 1, 7, 8, 9, 31, 64, 1001}) {
    const torch::Tensor x = torch::randn({end}, torch::kFloat);
    const float* data = x.data_ptr<float>();
    for (float floor : {-10.0f, -0.5f, 0.0f, 1.5f, 10.0f}) {
      std::vector<int32_t> expected;
      for (int64_t i = 0; i < end; ++i) {
        if (data[i] > floor) expected.push_back(static_cast<int32_t>(i));
      }
      std::vector<int32_t> keys(end + 8, -1);
      const int64_t count = lengen::detail::indices_above(data, end, floor, keys.data());
      keys.resize(count);
      EXPECT_EQ(keys, expected) << "end " << end << " floor " << floor;
    }
  }
}
