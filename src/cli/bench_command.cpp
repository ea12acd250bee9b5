// `lengen bench normalizers | step | eval`: the options of each benchmark, handed to the bench
// layer (normalizer_bench.h, step_bench.h, eval_bench.h), which times and prints.
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "count_validators.h"
#include "lengen/attention_choices.h"
#include "lengen/config_io.h"
#include "lengen/eval_bench.h"
#include "lengen/normalizer_bench.h"
#include "lengen/step_bench.h"
#include "lengen/thread_waits.h"

namespace lengen::cli {
namespace {

// An option of a count from 1 to `maximum`, its default shown in the help.
template <class T>
CLI::Option* count_option(CLI::App* command, const std::string& name, T& target, const std::string& help,
                          long long maximum) {
  return command->add_option(name, target, help)->capture_default_str()->check(count_up_to(maximum));
}

void add_bench_normalizers(CLI::App& bench) {
  auto options = std::make_shared<NormalizerBenchOptions>();
  auto* normalizers = bench.add_subcommand(
      "normalizers", "Forward+backward time of each normalizer relative to torch::softmax");
  count_option(normalizers, "--lengths", options->lengths, "row lengths n (rows x n causal scores)",
               kMaxLength);
  count_option(normalizers, "--threads", options->threads, "intra-op threads", kMaxBenchThreads);
  count_option(normalizers, "--repeats", options->repeats, "timed repeats (the fastest is kept)",
               kMaxBenchRepeats);
  normalizers->add_option("--only", options->only,
                          "time only these normalizers, by their table names (torch::softmax always runs)");
  normalizers->add_flag("--json", options->json, "print JSON instead of a table");
  normalizers->callback([options] {
    sleep_idle_threads_for(options->threads);
    run_normalizer_bench(*options);
  });
}

void add_bench_step(CLI::App& bench) {
  auto options = std::make_shared<StepBenchOptions>();
  auto config_path = std::make_shared<std::string>();
  ModelConfig& model = options->model;
  auto* step =
      bench.add_subcommand("step", "Time of one training step per attention method, relative to softmax");
  auto* config = step->add_option("--config", *config_path,
                                  "take the shape from this config: its model, train.batch_size, the tokens "
                                  "of a sequence at task.len_max and the task's vocabulary (e.g. "
                                  "configs/quick/copy.json)");
  const std::vector<CLI::Option*> shape = {
      count_option(step, "--layers", model.layers, "decoder blocks", kMaxModelPart),
      count_option(step, "--d-model", model.d_model, "model width", kMaxModelPart),
      count_option(step, "--heads", model.heads, "attention heads", kMaxModelPart),
      count_option(step, "--d-head", model.d_head, "head size", kMaxModelPart),
      step->add_option("--d-mlp", model.d_mlp, "MLP width (default 4 x --d-model)")
          ->check(count_up_to(kMaxModelPart)),
      count_option(step, "--batch", options->batch, "sequences per step", kMaxModelPart),
      count_option(step, "--length", options->length, "tokens per sequence", kMaxLength),
      step->add_option("--positions", model.attention.positions, "position encoding")
          ->capture_default_str()
          ->check(CLI::IsMember(position_names())),
      count_option(step, "--vocab", options->vocab, "token ids, the output layer's width", kMaxModelPart)};
  for (CLI::Option* option : shape) config->excludes(option);
  CLI::Option* d_mlp = shape[4];
  auto device = std::make_shared<std::string>("cpu");
  auto dtype = std::make_shared<std::string>("float32");
  step->add_option("--device", *device, "where the steps run (auto: cuda when LibTorch has it)")
      ->capture_default_str()
      ->check(CLI::IsMember(names_of<DeviceChoice>()));
  step->add_option("--dtype", *dtype, "bfloat16: matrix products in bf16 (autocast), as train.dtype")
      ->capture_default_str()
      ->check(CLI::IsMember(names_of<TrainDtype>()));
  count_option(step, "--threads", options->threads, "intra-op threads", kMaxBenchThreads);
  count_option(step, "--repeats", options->repeats, "timed steps per method (the median is kept)",
               kMaxBenchRepeats);
  step->add_option("--only", options->only,
                   "time only these methods, by their table names (Softmax always runs)");
  step->add_flag("--json", options->json, "print JSON instead of a table");
  step->callback([options, config_path, d_mlp, device, dtype] {
    options->device = *value_named<DeviceChoice>(*device);  // checked above
    options->dtype = *value_named<TrainDtype>(*dtype);
    if (!config_path->empty()) {
      take_step_bench_shape(load_config(*config_path), *options);
      options->shape_config = *config_path;
    } else if (d_mlp->count() == 0) {
      options->model.d_mlp = 4 * options->model.d_model;
    }
    sleep_idle_threads_for(options->threads);
    run_step_bench(*options);
  });
}

void add_bench_eval(CLI::App& bench) {
  auto options = std::make_shared<EvalBenchOptions>();
  auto* eval = bench.add_subcommand(
      "eval",
      "Seconds per evaluated sample at long lengths: fused vs dense attention, vs a FLOP floor. '+peak MB' "
      "(JSON: peak_added_mb) is the most resident memory one kernel's evaluation added above what the "
      "process held before it (the model, its weights, the samples): the dense kernel's length x length "
      "scores show there, the fused kernel's bounded chunks do not");
  add_count_list_option(eval, "--lengths", options->lengths,
                        "task lengths to evaluate (default 1024,4096,16384)", count_up_to(kMaxLength));
  count_option(eval, "--samples", options->samples, "samples timed per method, kernel and length",
               kMaxSamples);
  count_option(eval, "--repeats", options->repeats,
               "rounds, each timing every kernel in turn on the same samples; the best of them is reported",
               kMaxBenchRepeats);
  count_option(eval, "--threads", options->threads,
               "intra-op threads; above 1 the rounds also time the fused kernel at 1 thread (wall time)",
               kMaxBenchThreads);
  eval->add_option("--dense-max-length", options->dense_max_length,
                   "longest length at which the dense kernel is timed too (it needs keys^2 time)")
      ->capture_default_str()
      ->check(non_negative_count());
  eval->add_option("--run", options->run_dir,
                   "time this run's model (last checkpoint) instead of configs/quick/mqmtar.json's shape "
                   "with Softmax and ASEntmax")
      ->check(CLI::ExistingDirectory);
  eval->add_flag("--json", options->json, "print a JSON list of records instead of a table");
  eval->callback([options] {
    sleep_idle_threads_for(options->threads);
    run_eval_bench(*options);
  });
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmarks of lengen's kernels");
  bench->require_subcommand(1);
  add_bench_normalizers(*bench);
  add_bench_step(*bench);
  add_bench_eval(*bench);
}

}  // namespace lengen::cli
