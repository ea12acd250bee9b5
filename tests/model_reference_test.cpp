// lengen's model against golden states written by its eager PyTorch reference
// (tests/reference, written from the definition in docs/method.md, in float64): the same
// weights and batch must give the same logits at the target positions, loss, gradients and
// three AdamW steps, to a relative error of 1e-6 in double and 1e-4 in float.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lengen/batch.h"
#include "lengen/config_io.h"
#include "lengen/decoder.h"
#include "lengen/errors.h"
#include "lengen/loss.h"
#include "lengen/schedule.h"

namespace lengen {
namespace {

// Together they cover every length scaling, every position encoding and the normalizers
// softmax, sparsemax, entmax-1.5 and alpha-entmax with a learned alpha.
const std::vector<std::string> kStates = {"softmax_none_rope", "sparsemax_ssmax_alibi", "asentmax_nape",
                                          "learned_alpha_learned_nope", "ssmax_nape"};

constexpr double kDoubleTolerance = 1e-6;
constexpr double kFloatTolerance = 1e-4;

nlohmann::json load_state(const std::string& name) {
  const std::string path = std::string(LENGEN_TEST_DATA_DIR) + "/model_reference/" + name + ".json";
  std::ifstream file(path);
  if (!file) throw std::runtime_error("missing " + path + " (tests/reference/generate_golden.py writes it)");
  return nlohmann::json::parse(file);
}

torch::Tensor doubles(const nlohmann::json& values) {
  return torch::tensor(values.get<std::vector<double>>(), torch::kDouble);
}

torch::Tensor matrix(const nlohmann::json& rows, torch::ScalarType dtype) {
  std::vector<torch::Tensor> out;
  for (const auto& row : rows) out.push_back(doubles(row));
  return torch::stack(out).to(dtype);
}

// The largest difference over the largest |expected|: a tensor-wide relative error that
// entries near zero do not inflate.
double relative_error_to_max(const torch::Tensor& actual, const torch::Tensor& expected) {
  const auto a = actual.detach().to(torch::kDouble);
  const auto e = expected.to(torch::kDouble);
  return (a - e).abs().max().item<double>() / std::max(e.abs().max().item<double>(), 1e-300);
}

// A tensor against the reference's summary of it: norm, dot product with sin(1), sin(2), ...,
// and first entries, each relative to the norm.
double summary_error(const torch::Tensor& actual, const nlohmann::json& summary) {
  const auto flat = actual.detach().to(torch::kDouble).flatten();
  const double norm = summary.at("norm").get<double>();
  const double scale = std::max(norm, 1e-300);
  const auto probe = torch::sin(torch::arange(1, flat.numel() + 1, torch::kDouble));
  const auto first = doubles(summary.at("first"));
  return std::max({std::abs(flat.norm().item<double>() - norm) / scale,
                   std::abs((flat * probe).sum().item<double>() - summary.at("probe").get<double>()) / scale,
                   (flat.narrow(0, 0, first.numel()) - first).abs().max().item<double>() / scale});
}

struct Reference {
  nlohmann::json state;
  Config config;
  Decoder model{nullptr};
  Batch batch;
};

// The state's model with its weights, in `dtype`, and its batch built by lengen's own layout.
Reference load_reference(const std::string& name, torch::ScalarType dtype) {
  Reference ref;
  ref.state = load_state(name);
  ref.config = config_from_json(ref.state.at("config"), name + ".json");
  ref.model = Decoder(ref.config.model, ref.state.at("vocab").get<int64_t>());
  ref.model->to(dtype);
  const auto& weights = ref.state.at("weights");
  torch::NoGradGuard no_grad;
  for (auto& item : ref.model->named_parameters()) {
    const auto& w = weights.at(item.key());
    item.value().copy_(doubles(w.at("values")).view(w.at("shape").get<std::vector<int64_t>>()));
  }
  std::vector<Sample> samples;
  for (const auto& s : ref.state.at("samples")) {
    samples.push_back({s.at("src").get<Symbols>(), s.at("trg").get<Symbols>()});
  }
  ref.batch = collate(samples);
  return ref;
}

torch::Tensor batch_loss(Reference& ref, torch::Tensor* logits = nullptr) {
  const Batch& b = ref.batch;
  auto out = ref.model->forward_selected(b.input, b.positions, b.loss_mask);
  if (logits != nullptr) *logits = out;
  return target_cross_entropy(out, b.target.index({b.loss_mask}));
}

void set_learning_rate(torch::optim::AdamW& optimizer, double lr) {
  for (auto& group : optimizer.param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
}

// Forward, loss and every gradient of the state's batch.
void expect_forward_and_gradients(torch::ScalarType dtype, double tolerance) {
  for (const auto& name : kStates) {
    SCOPED_TRACE(name);
    auto ref = load_reference(name, dtype);
    torch::Tensor logits;
    auto loss = batch_loss(ref, &logits);
    loss.backward();
    const double logits_error = relative_error_to_max(logits, matrix(ref.state.at("logits"), torch::kDouble));
    const double loss_error = std::abs(loss.item<double>() / ref.state.at("loss").get<double>() - 1.0);
    EXPECT_LT(logits_error, tolerance) << "logits";
    EXPECT_LT(loss_error, tolerance) << "loss";
    double worst_grad = 0.0;
    for (const auto& item : ref.model->named_parameters()) {
      const double error = summary_error(item.value().grad(), ref.state.at("grads").at(item.key()));
      EXPECT_LT(error, tolerance) << "gradient of " << item.key();
      worst_grad = std::max(worst_grad, error);
    }
    std::cout << "  " << name << ": logits " << logits_error << ", loss " << loss_error << ", gradients "
              << worst_grad << "\n";
  }
}

// Three training steps as lengen's trainer takes them: scheduled lr, loss, backward, clipping
// of the joint gradient norm, AdamW.
void expect_adamw_steps(torch::ScalarType dtype, double tolerance) {
  for (const auto& name : kStates) {
    SCOPED_TRACE(name);
    auto ref = load_reference(name, dtype);
    const TrainConfig& tc = ref.config.train;
    torch::optim::AdamW optimizer(
        ref.model->parameters(),
        torch::optim::AdamWOptions(tc.lr).betas({tc.beta1, tc.beta2}).weight_decay(tc.weight_decay));
    const auto& steps = ref.state.at("steps");
    double worst = 0.0;
    for (size_t step = 0; step < steps.size(); ++step) {
      const double lr = learning_rate(tc, static_cast<int64_t>(step));
      EXPECT_NEAR(lr, steps[step].at("lr").get<double>(), 1e-15) << "step " << step;
      set_learning_rate(optimizer, lr);
      optimizer.zero_grad();
      auto loss = batch_loss(ref);
      loss.backward();
      const double norm = torch::nn::utils::clip_grad_norm_(ref.model->parameters(), tc.grad_clip);
      optimizer.step();
      const double loss_error = std::abs(loss.item<double>() / steps[step].at("loss").get<double>() - 1.0);
      const double norm_error = std::abs(norm / steps[step].at("grad_norm").get<double>() - 1.0);
      EXPECT_LT(loss_error, tolerance) << "loss at step " << step;
      EXPECT_LT(norm_error, tolerance) << "gradient norm at step " << step;
      worst = std::max({worst, loss_error, norm_error});
    }
    for (const auto& item : ref.model->named_parameters()) {
      const double error = summary_error(item.value(), ref.state.at("weights_after").at(item.key()));
      EXPECT_LT(error, tolerance) << item.key() << " after " << steps.size() << " steps";
      worst = std::max(worst, error);
    }
    std::cout << "  " << name << ": " << steps.size() << " AdamW steps " << worst << "\n";
  }
}

TEST(ModelReference, ParametersMatchTheReferenceByNameAndShape) {
  for (const auto& name : kStates) {
    SCOPED_TRACE(name);
    const auto ref = load_reference(name, torch::kDouble);
    const auto& weights = ref.state.at("weights");
    const auto params = ref.model->named_parameters();
    EXPECT_EQ(params.size(), weights.size());
    for (const auto& item : params) {
      ASSERT_TRUE(weights.contains(item.key())) << item.key() << " is missing from the reference";
      EXPECT_EQ(item.value().sizes().vec(), weights.at(item.key()).at("shape").get<std::vector<int64_t>>())
          << item.key();
    }
  }
}

TEST(ModelReference, BatchLayoutMatchesTheReference) {
  for (const auto& name : kStates) {
    SCOPED_TRACE(name);
    const auto ref = load_reference(name, torch::kDouble);
    const Batch& b = ref.batch;
    EXPECT_TRUE(b.input.equal(matrix(ref.state.at("tokens"), torch::kLong)));
    EXPECT_TRUE(b.target.equal(matrix(ref.state.at("targets"), torch::kLong)));
    EXPECT_TRUE(b.loss_mask.equal(matrix(ref.state.at("loss_mask"), torch::kLong).to(torch::kBool)));
    EXPECT_TRUE(b.positions.equal(matrix(ref.state.at("positions"), torch::kLong)));
  }
}

TEST(ModelReference, ScheduleMatchesTheReference) {
  const auto state = load_state(kStates[0]);
  const auto& schedule = state.at("schedule");
  Config config = config_from_json({{"train", schedule.at("train")}}, "schedule");
  const auto lrs = schedule.at("lrs").get<std::vector<double>>();
  for (size_t step = 0; step < lrs.size(); ++step) {
    EXPECT_NEAR(learning_rate(config.train, static_cast<int64_t>(step)), lrs[step], 1e-15) << "step " << step;
  }
}

// The schedule is read into its enum once: an unknown name never reaches the schedule (it is not
// taken as cosine), and each name decays as it says.
TEST(ModelReference, AnUnknownScheduleIsRefusedWhenTheConfigIsRead) {
  EXPECT_THROW(config_from_json(nlohmann::json::parse(R"({"train": {"schedule": "cosin"}})"), "schedule"),
               UserError);
  Config config = config_from_json(
      nlohmann::json::parse(R"({"train": {"steps": 10, "warmup": 2, "schedule": "constant"}})"), "schedule");
  EXPECT_EQ(config.train.schedule, LrSchedule::kConstant);
  EXPECT_EQ(learning_rate(config.train, 9), config.train.lr);
  config.train.schedule = LrSchedule::kLinear;
  EXPECT_LT(learning_rate(config.train, 9), config.train.lr);
}

TEST(ModelReference, ForwardAndGradientsMatchInDouble) {
  expect_forward_and_gradients(torch::kDouble, kDoubleTolerance);
}

TEST(ModelReference, ForwardAndGradientsMatchInFloat) {
  expect_forward_and_gradients(torch::kFloat, kFloatTolerance);
}

TEST(ModelReference, AdamWStepsMatchInDouble) { expect_adamw_steps(torch::kDouble, kDoubleTolerance); }

TEST(ModelReference, AdamWStepsMatchInFloat) { expect_adamw_steps(torch::kFloat, kFloatTolerance); }

}  // namespace
}  // namespace lengen
