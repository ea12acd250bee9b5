// `lengen bench step`: the time of one whole training step (forward, loss, backward, gradient
// clipping, AdamW) for each attention method on the same model shape and batch, as a ratio to
// softmax measured in the same run. This is the number that decides how long a sweep takes;
// `bench normalizers` isolates the normalizers themselves.
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_clock.h"
#include "commands.h"
#include "count_validators.h"
#include "lengen/attention_choices.h"
#include "lengen/autocast.h"
#include "lengen/compute_threads.h"
#include "lengen/config.h"
#include "lengen/errors.h"
#include "lengen/model.h"

namespace lengen::cli {
namespace {

// Untimed steps per method before measuring: Adam's state and the allocator's pools settle.
constexpr int kWarmupSteps = 5;
constexpr int64_t kVocab = 36;

struct StepBenchOptions {
  int64_t layers = 2;
  int64_t d_model = 128;
  int64_t heads = 4;
  int64_t d_head = 32;
  int64_t batch = 32;
  int64_t length = 64;
  std::string positions = "nape";
  std::string device = "cpu";
  std::string dtype = "float32";
  int threads = 1;
  int repeats = 20;
  bool json = false;
};

struct Method {
  std::string name;
  std::string normalizer;
  std::string scaling;
};

const std::vector<Method>& methods() {
  static const std::vector<Method> all = {{"softmax", "softmax", "none"},
                                          {"ssmax", "softmax", "ssmax"},
                                          {"sparsemax", "sparsemax", "none"},
                                          {"entmax15", "entmax15", "none"},
                                          {"asentmax", "entmax15", "asentmax"}};
  return all;
}

// One model and optimizer per method, all seeing the same batch.
struct Contender {
  Method method;
  Decoder model{nullptr};
  std::unique_ptr<torch::optim::AdamW> optimizer;
  std::vector<double> seconds;
};

Contender make_contender(const Method& method, const StepBenchOptions& options, const torch::Device& device) {
  ModelConfig config;
  config.layers = options.layers;
  config.d_model = options.d_model;
  config.heads = options.heads;
  config.d_head = options.d_head;
  config.d_mlp = 4 * options.d_model;
  config.attention.normalizer = method.normalizer;
  config.attention.scaling = method.scaling;
  config.attention.positions = options.positions;
  torch::manual_seed(0);
  Contender contender{method, Decoder(config, kVocab), nullptr, {}};
  contender.model->to(device);
  contender.optimizer = std::make_unique<torch::optim::AdamW>(
      contender.model->parameters(), torch::optim::AdamWOptions(1e-3).weight_decay(0.0));
  return contender;
}

void training_step(Contender& contender, const torch::Tensor& input, const torch::Tensor& target, bool bf16) {
  contender.optimizer->zero_grad();
  torch::Tensor loss;
  {
    const AutocastScope mixed_precision(input.device().type(), bf16);
    auto logits = contender.model->forward(input);
    loss = torch::nn::functional::cross_entropy(logits.reshape({-1, kVocab}), target.reshape({-1}));
  }
  loss.backward();
  torch::nn::utils::clip_grad_norm_(contender.model->parameters(), 1.0);
  contender.optimizer->step();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void run_step_bench(const StepBenchOptions& options) {
  set_compute_threads(options.threads);
  const torch::Device device = options.device == "cuda" ? torch::kCUDA : torch::kCPU;
  if (device.is_cuda() && !torch::cuda::is_available()) {
    throw UserError("bench step --device cuda: this LibTorch has no CUDA device");
  }
  const bool bf16 = options.dtype == "bfloat16";
  torch::manual_seed(1);
  const auto tokens = torch::randint(4, kVocab, {options.batch, options.length + 1}, torch::kLong).to(device);
  const auto input = tokens.narrow(1, 0, options.length);
  const auto target = tokens.narrow(1, 1, options.length);
  std::vector<Contender> contenders;
  for (const Method& method : methods()) contenders.push_back(make_contender(method, options, device));
  for (auto& contender : contenders) {
    for (int i = 0; i < kWarmupSteps; ++i) training_step(contender, input, target, bf16);
  }
  // Round-robin over the methods, so a slow spell of a shared machine hits them all alike. A
  // GPU runs the step asynchronously: its time is the wall time up to the device's finishing.
  const bool single = options.threads == 1 && !device.is_cuda();
  auto finish = [&] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  for (int r = 0; r < options.repeats; ++r) {
    for (auto& contender : contenders) {
      finish();
      const double start = bench_now_seconds(single);
      training_step(contender, input, target, bf16);
      finish();
      contender.seconds.push_back(bench_now_seconds(single) - start);
    }
  }
  const double baseline = median(contenders.front().seconds);
  nlohmann::json results = nlohmann::json::array();
  if (!options.json) {
    std::printf(
        "training step (forward, backward, clip, AdamW), %lld layers, d_model %lld, %lld heads x %lld, batch "
        "%lld, "
        "length %lld, %s, %s %s, %d thread(s), median of %d, %s; ratio = time / softmax time\n",
        static_cast<long long>(options.layers), static_cast<long long>(options.d_model),
        static_cast<long long>(options.heads), static_cast<long long>(options.d_head),
        static_cast<long long>(options.batch), static_cast<long long>(options.length),
        options.positions.c_str(), options.device.c_str(), options.dtype.c_str(), options.threads,
        options.repeats, single ? "thread CPU time" : "wall time");
    std::printf("%-12s %10s %12s %8s\n", "method", "ms/step", "tokens/s", "ratio");
  }
  for (const auto& contender : contenders) {
    const double seconds = median(contender.seconds);
    const double tokens_per_second = static_cast<double>(options.batch * options.length) / seconds;
    if (options.json) {
      results.push_back({{"method", contender.method.name},
                         {"normalizer", contender.method.normalizer},
                         {"scaling", contender.method.scaling},
                         {"positions", options.positions},
                         {"device", options.device},
                         {"dtype", options.dtype},
                         {"ms", seconds * 1e3},
                         {"tokens_per_s", tokens_per_second},
                         {"ratio", seconds / baseline}});
    } else {
      std::printf("%-12s %10.2f %12.0f %8.2f\n", contender.method.name.c_str(), seconds * 1e3,
                  tokens_per_second, seconds / baseline);
    }
  }
  if (options.json) std::cout << results.dump(2) << "\n";
}

}  // namespace

void add_bench_step_command(CLI::App& bench) {
  auto options = std::make_shared<StepBenchOptions>();
  auto* step =
      bench.add_subcommand("step", "Time of one training step per attention method, relative to softmax");
  step->add_option("--layers", options->layers, "decoder blocks")
      ->capture_default_str()
      ->check(count_up_to(kMaxModelPart));
  step->add_option("--d-model", options->d_model, "model width")
      ->capture_default_str()
      ->check(count_up_to(kMaxModelPart));
  step->add_option("--heads", options->heads, "attention heads")
      ->capture_default_str()
      ->check(count_up_to(kMaxModelPart));
  step->add_option("--d-head", options->d_head, "head size")
      ->capture_default_str()
      ->check(count_up_to(kMaxModelPart));
  step->add_option("--batch", options->batch, "sequences per step")
      ->capture_default_str()
      ->check(count_up_to(kMaxModelPart));
  step->add_option("--length", options->length, "tokens per sequence")
      ->capture_default_str()
      ->check(count_up_to(kMaxLength));
  step->add_option("--positions", options->positions, "position encoding")
      ->capture_default_str()
      ->check(CLI::IsMember(position_names()));
  step->add_option("--device", options->device, "where the steps run")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  step->add_option("--dtype", options->dtype, "bfloat16: matrix products in bf16 (autocast), as train.dtype")
      ->capture_default_str()
      ->check(CLI::IsMember(names_of<TrainDtype>()));
  step->add_option("--threads", options->threads, "intra-op threads")
      ->capture_default_str()
      ->check(count_up_to(kMaxBenchThreads));
  step->add_option("--repeats", options->repeats, "timed steps per method (the median is kept)")
      ->capture_default_str()
      ->check(count_up_to(kMaxBenchRepeats));
  step->add_flag("--json", options->json, "print JSON instead of a table");
  step->callback([options] { run_step_bench(*options); });
}

}  // namespace lengen::cli
