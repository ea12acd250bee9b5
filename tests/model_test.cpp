// The decoder: incremental decoding, chunked prefill and padding give the same numbers as
// one full pass, for every normalizer x scaling x position encoding; and it can learn.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <tuple>

#include "lengen/attention_choices.h"
#include "lengen/decode.h"
#include "lengen/decoder.h"
#include "lengen/loss.h"
#include "lengen/sequence.h"
#include "model_test_util.h"

namespace lengen {
namespace {

constexpr int64_t kVocab = 12;

using Combination = std::tuple<std::string, std::string, std::string>;

class ModelCombinations : public ::testing::TestWithParam<Combination> {
 protected:
  Decoder make_model() {
    auto [normalizer, scaling, positions] = GetParam();
    torch::manual_seed(3);
    return Decoder(testing::tiny_model_config(normalizer, scaling, positions), kVocab);
  }
};

TEST_P(ModelCombinations, CacheEqualsFullForward) {
  auto model = make_model();
  torch::NoGradGuard no_grad;
  auto tokens = testing::random_tokens(2, 9, kVocab, 5);
  // The fused kernel scores a block of queries and a single query with different float
  // summation orders, and a sparse normalizer's support can amplify that last-bit difference:
  // its tolerance is a little wider than the dense reference's.
  for (auto [kernel, tolerance] :
       {std::pair{AttentionKernel::kDense, 1e-5}, std::pair{AttentionKernel::kFused, 5e-5}}) {
    model->set_attention_kernel(kernel);
    auto full = model->forward(tokens);
    KVCache cache;
    std::vector<torch::Tensor> pieces{model->forward(tokens.narrow(1, 0, 5), {}, &cache)};
    for (int64_t t = 5; t < 9; ++t) pieces.push_back(model->forward(tokens.narrow(1, t, 1), {}, &cache));
    auto incremental = torch::cat(pieces, 1);
    EXPECT_TRUE(torch::allclose(full, incremental, tolerance, tolerance))
        << (kernel == AttentionKernel::kDense ? "dense" : "fused") << ": max diff "
        << (full - incremental).abs().max().item<double>();
  }
}

TEST_P(ModelCombinations, ChunkedPrefillEqualsUnchunked) {
  auto model = make_model();
  torch::NoGradGuard no_grad;
  auto tokens = testing::random_tokens(2, 11, kVocab, 6);
  model->set_attention_kernel(AttentionKernel::kDense);  // only the dense path splits queries into chunks
  model->set_query_chunk(0);
  auto whole = model->forward(tokens);
  model->set_query_chunk(3);
  auto chunked = model->forward(tokens);
  EXPECT_TRUE(torch::allclose(whole, chunked, 1e-5, 1e-5))
      << "max diff " << (whole - chunked).abs().max().item<double>();
}

TEST_P(ModelCombinations, LeftPaddingDoesNotChangeAnySequence) {
  auto model = make_model();
  torch::NoGradGuard no_grad;
  auto long_row = testing::random_tokens(1, 8, kVocab, 7);
  auto short_row = testing::random_tokens(1, 5, kVocab, 8);
  auto as_vector = [](const torch::Tensor& t) {
    std::vector<int32_t> row;
    for (int64_t i = 0; i < t.size(1); ++i) row.push_back(static_cast<int32_t>(t[0][i].item<int64_t>()));
    return row;
  };
  auto [tokens, positions] = left_pad({as_vector(long_row), as_vector(short_row)});
  auto batched = model->forward(tokens, positions);
  auto alone = model->forward(short_row);
  auto padded_part = batched[1].narrow(0, 3, 5);
  EXPECT_TRUE(torch::allclose(padded_part, alone[0], 1e-5, 1e-5))
      << "max diff " << (padded_part - alone[0]).abs().max().item<double>();
  EXPECT_TRUE(torch::allclose(batched[0], model->forward(long_row)[0], 1e-5, 1e-5));
}

// Without grad the last block answers only the rows from the first selected one on (the rows
// before it serve as keys): the same logits as the full pass at the selected rows.
TEST_P(ModelCombinations, SelectedRowsWithoutGradEqualTheFullForward) {
  auto model = make_model();
  torch::NoGradGuard no_grad;
  auto tokens = testing::random_tokens(2, 10, kVocab, 11);
  auto mask = torch::zeros({2, 10}, torch::kBool);
  mask.narrow(1, 6, 4).fill_(true);
  mask[1][4] = true;  // the first selected row of the batch is another sequence's
  mask[0][7] = false;
  for (auto [kernel, tolerance] :
       {std::pair{AttentionKernel::kDense, 1e-5}, std::pair{AttentionKernel::kFused, 5e-5}}) {
    model->set_attention_kernel(kernel);
    auto expected = model->forward(tokens).index({mask});
    auto selected = model->forward_selected(tokens, {}, mask);
    ASSERT_EQ(selected.sizes(), expected.sizes());
    EXPECT_TRUE(torch::allclose(selected, expected, tolerance, tolerance))
        << (kernel == AttentionKernel::kDense ? "dense" : "fused") << ": max diff "
        << (selected - expected).abs().max().item<double>();
  }
}

INSTANTIATE_TEST_SUITE_P(AllChoices, ModelCombinations,
                         ::testing::Combine(::testing::ValuesIn(normalizer_names()),
                                            ::testing::ValuesIn(scaling_names()),
                                            ::testing::ValuesIn(position_names())),
                         [](const ::testing::TestParamInfo<Combination>& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
                                  std::get<2>(info.param);
                         });

TEST(Model, LearnedAlphaIsTrainedAndCached) {
  auto config = testing::tiny_model_config("entmax", "none", "nape");
  config.attention.learn_alpha = true;
  Decoder model(config, kVocab);
  auto tokens = testing::random_tokens(2, 6, kVocab, 9);
  model->forward(tokens).pow(2).mean().backward();
  int alpha_params = 0;
  for (auto& param : model->named_parameters()) {
    if (param.key().find(".alpha.") == std::string::npos) continue;
    ++alpha_params;
    ASSERT_TRUE(param.value().grad().defined()) << param.key();
    EXPECT_GT(param.value().grad().abs().sum().item<double>(), 0.0) << param.key();
  }
  EXPECT_EQ(alpha_params, config.layers);
}

// Training reads the logits at the target positions only (forward_selected); that must give
// the loss and the gradients of the token mean over the loss mask of the full logits.
TEST(Model, TargetOnlyLossEqualsTheMaskedMeanOverAllPositions) {
  torch::manual_seed(5);
  Decoder model(testing::tiny_model_config("entmax15", "asentmax", "nape"), kVocab);
  const int64_t batch = 3, length = 8;
  auto tokens = testing::random_tokens(batch, length, kVocab, 13);
  auto targets = testing::random_tokens(batch, length, kVocab, 14);
  auto mask = torch::zeros({batch, length}, torch::kBool);
  mask.narrow(1, 4, 4).fill_(true);
  // Not one block per row: the selected rows follow the mask row-major. The last block answers
  // rows 3-7 only (the first selected row on), so rows 0-2 reach the loss as its keys alone.
  mask[2][3] = true;
  auto gradients_of = [&](const torch::Tensor& loss) {
    model->zero_grad();
    loss.backward();
    std::vector<torch::Tensor> grads;
    for (auto& param : model->parameters())
      grads.push_back(param.grad().defined() ? param.grad().clone() : param.grad());
    return grads;
  };
  auto full = model->forward(tokens);
  auto per_token = torch::nn::functional::cross_entropy(
      full.reshape({-1, kVocab}), targets.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  auto reference_loss = per_token.masked_select(mask.reshape({-1})).mean();
  const double reference_value = reference_loss.item<double>();
  auto reference_grads = gradients_of(reference_loss);

  auto selected = model->forward_selected(tokens, {}, mask);
  ASSERT_EQ(selected.size(0), mask.sum().item<int64_t>());
  EXPECT_TRUE(torch::allclose(selected, full.detach().index({mask}), 1e-5, 1e-6));
  auto loss = target_cross_entropy(selected, targets.index({mask}));
  EXPECT_NEAR(loss.item<double>(), reference_value, 1e-6);
  auto grads = gradients_of(loss);
  int compared = 0;
  for (size_t i = 0; i < grads.size(); ++i) {
    ASSERT_EQ(grads[i].defined(), reference_grads[i].defined()) << "parameter " << i;
    if (!grads[i].defined()) continue;
    EXPECT_TRUE(torch::allclose(grads[i], reference_grads[i], 1e-4, 1e-6))
        << "parameter " << i << " max diff " << (grads[i] - reference_grads[i]).abs().max().item<double>();
    ++compared;
  }
  EXPECT_GT(compared, 10);
}

TEST(Model, TargetCrossEntropyOfNoTargetsIsZero) {
  auto loss = target_cross_entropy(torch::zeros({0, kVocab}), torch::zeros({0}, torch::kLong));
  EXPECT_EQ(loss.item<double>(), 0.0);
}

// Train a tiny model to memorise a handful of sequences: the loss must reach ~0.
double overfit_loss(const std::string& normalizer, const std::string& scaling) {
  auto config = testing::tiny_model_config(normalizer, scaling, "nape");
  config.init_std = 0.02;
  config.attention.scaling_init_std = 0.02;
  torch::manual_seed(11);
  Decoder model(config, kVocab);
  auto sequences = testing::random_tokens(4, 10, kVocab, 12);
  // Distinct first tokens make every next token a function of its prefix, so the loss can reach 0.
  sequences.select(1, 0).copy_(torch::arange(4, 8));
  auto input = sequences.narrow(1, 0, 9);
  auto target = sequences.narrow(1, 1, 9);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-2));
  double loss_value = 0;
  for (int step = 0; step < 150; ++step) {
    optimizer.zero_grad();
    auto logits = model->forward(input);
    auto loss = torch::nn::functional::cross_entropy(logits.reshape({-1, kVocab}), target.reshape({-1}));
    loss.backward();
    optimizer.step();
    loss_value = loss.item<double>();
  }
  return loss_value;
}

TEST(Model, OverfitsAHandfulOfSequencesWithSoftmax) { EXPECT_LT(overfit_loss("softmax", "none"), 0.05); }

TEST(Model, OverfitsAHandfulOfSequencesWithAsentmax) {
  EXPECT_LT(overfit_loss("entmax15", "asentmax"), 0.05);
}

TEST(GreedyDecode, StopsEachSequenceAtEosOrItsCap) {
  auto config = testing::tiny_model_config("softmax", "none", "nape");
  torch::manual_seed(4);
  Decoder model(config, kVocab);
  {
    // Make EOS the argmax everywhere: the head maps every state to EOS's row.
    torch::NoGradGuard no_grad;
    auto head = model->named_parameters()["head.weight"];
    head.zero_();
    head[kEos].fill_(1.0);
  }
  auto outputs = greedy_decode(model, {{kBos, 5, 6, kSep}, {kBos, 7, kSep}}, {4, 4});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0], std::vector<int32_t>{kEos});
  EXPECT_EQ(outputs[1], std::vector<int32_t>{kEos});
}

TEST(GreedyDecode, MatchesArgmaxOfFullForwardPerSequence) {
  auto config = testing::tiny_model_config("entmax15", "asentmax", "nape");
  torch::manual_seed(5);
  Decoder model(config, kVocab);
  std::vector<std::vector<int32_t>> prompts{{kBos, 5, 6, 7, 8, kSep}, {kBos, 9, kSep}};
  auto outputs = greedy_decode(model, prompts, {6, 3});
  torch::NoGradGuard no_grad;
  for (size_t b = 0; b < prompts.size(); ++b) {
    // Re-run without cache or padding: each generated token is the argmax after its prefix.
    std::vector<int32_t> sequence = prompts[b];
    for (int32_t token : outputs[b]) {
      auto tokens = torch::tensor(std::vector<int64_t>(sequence.begin(), sequence.end())).unsqueeze(0);
      auto expected = model->forward(tokens)[0][-1].argmax().item<int64_t>();
      EXPECT_EQ(token, expected);
      sequence.push_back(token);
    }
    EXPECT_LE(outputs[b].size(), b == 0 ? 6u : 3u);
  }
}

}  // namespace
}  // namespace lengen
