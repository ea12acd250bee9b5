// One training step per named method against softmax (step_bench.h).
#include "lengen/step_bench.h"

#include <spdlog/fmt/fmt.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_output.h"
#include "lengen/attention_choices.h"
#include "lengen/autocast.h"
#include "lengen/batch.h"
#include "lengen/compute_threads.h"
#include "lengen/decoder.h"
#include "lengen/device.h"
#include "lengen/errors.h"
#include "lengen/loss.h"
#include "lengen/memory_estimate.h"
#include "lengen/sequence.h"
#include "lengen/sgemm_rate.h"
#include "lengen/training_data.h"

namespace lengen {
namespace {

// Untimed steps per method before measuring: Adam's state and the allocator's pools settle.
constexpr int kWarmupSteps = 5;

// One model and optimizer per method, all seeing the same batch.
struct Contender {
  NamedMethod method;
  Decoder model{nullptr};
  std::unique_ptr<torch::optim::AdamW> optimizer;
  std::vector<double> seconds;
};

Contender make_contender(const NamedMethod& method, const StepBenchOptions& options,
                         const torch::Device& device) {
  ModelConfig config = options.model;
  config.attention.normalizer = method.normalizer;
  config.attention.scaling = method.scaling;
  torch::manual_seed(0);
  Contender contender{method, Decoder(config, options.vocab), nullptr, {}};
  contender.model->to(device);
  const TrainConfig& train = options.train;
  contender.optimizer = std::make_unique<torch::optim::AdamW>(
      contender.model->parameters(),
      torch::optim::AdamWOptions(1e-3).betas({train.beta1, train.beta2}).weight_decay(train.weight_decay));
  return contender;
}

// The trainer's step (TrainingRun::step) on a fixed batch, without the learning-rate schedule.
void training_step(Contender& contender, const Batch& batch, bool bf16) {
  contender.optimizer->zero_grad();
  torch::Tensor loss;
  {
    const AutocastScope mixed_precision(batch.input.device().type(), bf16);
    auto logits = contender.model->forward_selected(batch.input, batch.positions, batch.loss_mask);
    loss = target_cross_entropy(logits, batch.target.index({batch.loss_mask}));
  }
  loss.backward();
  torch::nn::utils::clip_grad_norm_(contender.model->parameters(), 1.0);
  contender.optimizer->step();
}

// The config's samples, or random tokens that are all targets.
Batch step_batch(const StepBenchOptions& options) {
  if (!options.samples.empty()) return collate(options.samples);
  torch::manual_seed(1);
  const auto tokens =
      torch::randint(kFirstSymbol, options.vocab, {options.batch, options.length + 1}, torch::kLong);
  Batch batch;
  batch.input = tokens.narrow(1, 0, options.length);
  batch.target = tokens.narrow(1, 1, options.length);
  batch.loss_mask = torch::ones({options.batch, options.length}, torch::kBool);
  batch.positions = torch::arange(options.length).expand({options.batch, options.length}).contiguous();
  return batch;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The step's matrix-product FLOPs and, on the CPU, the machine's sgemm rate: the floor a step
// could reach if it were nothing but its matrix products at full speed.
struct StepFloor {
  double flops = 0;
  int64_t targets = 0;                // positions the output layer and the loss run at
  int64_t last_block_queries = 0;     // rows per sequence the last block answers
  double sgemm_flops_per_second = 0;  // 0: not measured (a GPU)
  double seconds() const { return sgemm_flops_per_second > 0 ? flops / sgemm_flops_per_second : 0.0; }
};

// The table's title: the step, the shape, the clock and the floor.
std::string heading(const StepBenchOptions& options, const std::string& device_name, bool single,
                    const StepFloor& floor) {
  const ModelConfig& model = options.model;
  std::string title = fmt::format(
      "training step (forward, loss at the targets, backward, clip, AdamW), {} layers, d_model {}, {} heads "
      "x {}, "
      "d_mlp {}, vocab {}, batch {}, length {}, {}, {} {}, {} thread(s), median of {}, {}; ratio = time / "
      "softmax "
      "time\n{} target positions, the last block answering the last {} rows of each sequence; {:.2f} MFLOP "
      "of matrix products per step (forward + backward); ",
      model.layers, model.d_model, model.heads, model.d_head, model.d_mlp, options.vocab, options.batch,
      options.length, model.attention.positions, device_name, name_of(options.dtype), options.threads,
      options.repeats, single ? "thread CPU time" : "wall time", floor.targets, floor.last_block_queries,
      floor.flops / 1e6);
  if (floor.sgemm_flops_per_second <= 0) return title + "no sgemm rate on this device";
  return title +
         fmt::format(
             "sgemm {:.1f} GFLOP/s (one thread's rate x threads), floor {:.2f} ms; floor x = time / floor",
             floor.sgemm_flops_per_second / 1e9, floor.seconds() * 1e3);
}

// Every method's model and optimizer state are held at once; one step's activations at a time.
void check_step_memory(const StepBenchOptions& options, size_t methods) {
  MemoryEstimate needed = training_step_memory(
      options.model, options.vocab, static_cast<double>(options.length), static_cast<double>(options.batch));
  needed.parameters *= static_cast<double>(methods);
  const bool from_config = !options.shape_config.empty();
  check_fits_in_memory(needed,
                       from_config
                           ? fmt::format("bench step --config {} (batch {}, {} tokens)", options.shape_config,
                                         options.batch, options.length)
                           : fmt::format("bench step --batch {} --length {}", options.batch, options.length),
                       fmt::format("one training step of {} methods", methods),
                       from_config ? "take a config with a smaller train.batch_size, task.len_max or model"
                                   : "lower --batch, --length or the model's size");
}

// Warm-up steps, then options.repeats timed steps of each contender, round-robin so a slow spell
// of a shared machine hits them all alike.
void time_steps(std::vector<Contender>& contenders, const Batch& batch, const StepBenchOptions& options,
                bool single) {
  const bool bf16 = options.dtype == TrainDtype::kBfloat16;
  for (auto& contender : contenders) {
    for (int i = 0; i < kWarmupSteps; ++i) training_step(contender, batch, bf16);
  }
  const auto finish = [&] {
    if (batch.input.is_cuda()) torch::cuda::synchronize();
  };
  for (int r = 0; r < options.repeats; ++r) {
    for (auto& contender : contenders) {
      finish();
      const double start = bench_now_seconds(single);
      training_step(contender, batch, bf16);
      finish();
      contender.seconds.push_back(bench_now_seconds(single) - start);
    }
  }
}

// The table (or with options.json the JSON list) of every method's median step, its ratios to
// softmax and to the floor, on stdout.
void print_results(const std::vector<Contender>& contenders, const StepBenchOptions& options,
                   const std::string& device_name, bool single, const StepFloor& floor) {
  const double baseline = median(contenders.front().seconds);
  const bool has_floor = floor.sgemm_flops_per_second > 0;
  BenchTable table(options.json, heading(options, device_name, single, floor),
                   {{"method", -18, "method"},
                    {"ms/step", 10, "ms", 2},
                    {"tokens/s", 12, "tokens_per_s"},
                    {"ratio", 8, "ratio", 2},
                    {"floor x", 8, "floor_ratio", 2}});
  for (const auto& contender : contenders) {
    const double seconds = median(contender.seconds);
    table.add(
        {{"method", contender.method.name},
         {"normalizer", contender.method.normalizer},
         {"scaling", contender.method.scaling},
         {"positions", options.model.attention.positions},
         {"layers", options.model.layers},
         {"d_model", options.model.d_model},
         {"heads", options.model.heads},
         {"d_head", options.model.d_head},
         {"d_mlp", options.model.d_mlp},
         {"batch", options.batch},
         {"length", options.length},
         {"vocab", options.vocab},
         {"device", device_name},
         {"dtype", name_of(options.dtype)},
         {"ms", seconds * 1e3},
         {"tokens_per_s", static_cast<double>(options.batch * options.length) / seconds},
         {"ratio", seconds / baseline},
         {"targets", floor.targets},
         {"flops", floor.flops},
         {"sgemm_flops_per_s", has_floor ? nlohmann::json(floor.sgemm_flops_per_second) : nlohmann::json()},
         {"floor_ratio", has_floor ? nlohmann::json(seconds / floor.seconds()) : nlohmann::json()}});
  }
  table.finish();
}

// One block's forward FLOPs, its last `queries` rows answered (see forward_flops).
double block_flops(const ModelConfig& model, double sequences, double length, double queries, bool causal) {
  const double d_model = static_cast<double>(model.d_model);
  const double inner = static_cast<double>(model.heads) * static_cast<double>(model.d_head);
  const double answered = 2.0 * sequences * queries * (2.0 * d_model * inner + 3.0 * d_model * model.d_mlp);
  // q.k^T and p.v: rows length - queries .. length - 1 see i + 1 keys each when causal, else all.
  const double keys_seen = causal ? queries * length - queries * (queries - 1) / 2 : queries * length;
  // Keys and values at every row (2 x 2 d_model inner each), then the answered rows' products.
  return 4.0 * sequences * inner * (length * d_model + keys_seen) + answered;
}

}  // namespace

double forward_flops(const ModelConfig& model, int64_t sequences, int64_t length, int64_t last_queries,
                     bool causal) {
  const auto s = static_cast<double>(sequences), l = static_cast<double>(length);
  return static_cast<double>(model.layers - 1) * block_flops(model, s, l, l, causal) +
         block_flops(model, s, l, static_cast<double>(last_queries), causal);
}

double training_step_flops(const ModelConfig& model, int64_t batch, int64_t length, int64_t vocab,
                           int64_t output_positions, int64_t last_block_queries) {
  const double head = 2.0 * static_cast<double>(output_positions * model.d_model * vocab);
  return 3.0 * (forward_flops(model, batch, length, last_block_queries, false) + head);
}

ModelConfig default_step_bench_model() {
  ModelConfig model;
  model.layers = 2;
  model.d_model = 128;
  model.heads = 4;
  model.d_head = 32;
  model.d_mlp = 4 * model.d_model;
  model.attention.positions = "nape";
  return model;
}

void take_step_bench_shape(const Config& config, StepBenchOptions& options) {
  options.model = config.model;
  options.batch = config.train.batch_size;
  options.train = config.train;
  auto task = make_task(config.task.name, config.task.params, config.task.seed);
  options.samples = fixed_samples(*task, config.task.len_max, options.batch, 0);
  options.length = collate(options.samples).input.size(1);
  options.vocab = vocab_size(task->num_symbols());
}

void run_step_bench(const StepBenchOptions& options) {
  // The random batch draws symbols, which start after the special tokens.
  if (options.vocab <= kFirstSymbol) {
    throw UserError("bench step --vocab " + std::to_string(options.vocab) + ": at least " +
                    std::to_string(kFirstSymbol + 1) + " token ids (the first " +
                    std::to_string(kFirstSymbol) + " are special tokens)");
  }
  const std::vector<NamedMethod> methods =
      baseline_and_only(named_methods(), options.only, "bench step --only", "method");
  set_compute_threads(options.threads);
  const torch::Device device = resolve_device(options.device);  // auto: the device it chose is reported
  if (!device.is_cuda()) check_step_memory(options, methods.size());
  const Batch batch = to_device(step_batch(options), device);
  std::vector<Contender> contenders;
  for (const NamedMethod& method : methods) contenders.push_back(make_contender(method, options, device));
  const bool single = options.threads == 1 && !device.is_cuda();
  time_steps(contenders, batch, options, single);
  const int64_t targets = batch.loss_mask.sum().item<int64_t>();
  const int64_t last_block_queries = options.length - first_selected_row(batch.loss_mask);
  StepFloor floor{training_step_flops(options.model, options.batch, options.length, options.vocab, targets,
                                      last_block_queries),
                  targets, last_block_queries, 0.0};
  if (!device.is_cuda()) floor.sgemm_flops_per_second = sgemm_flops_per_second(options.threads);
  print_results(contenders, options, device.is_cuda() ? "cuda" : "cpu", single, floor);
}

}  // namespace lengen
