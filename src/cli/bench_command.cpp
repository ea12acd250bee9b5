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

void add_bench_normalizers(CLI::App& bench) {
  auto options = std::make_shared<NormalizerBenchOptions>();
  auto* normalizers = bench.add_subcommand(
      "normalizers", "Forward+backward time of each normalizer relative to torch::softmax");
  normalizers->add_option("--lengths", options->lengths, "row lengths n (rows x n causal scores)")
      ->capture_default_str()
      ->check(count_up_to(kMaxLength));
  normalizers->add_option("--threads", options->threads, "intra-op threads")
      ->capture_default_str()
      ->check(count_up_to(kMaxBenchThreads));
  normalizers->add_option("--repeats", options->repeats, "timed repeats (the fastest is kept)")
      ->capture_default_str()
      ->check(count_up_to(kMaxBenchRepeats));
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
      step->add_option("--layers", model.layers, "decoder blocks")
          ->capture_default_str()
          ->check(count_up_to(kMaxModelPart)),
      step->add_option("--d-model", model.d_model, "model width")
          ->capture_default_str()
          ->check(count_up_to(kMaxModelPart)),
      step->add_option("--heads", model.heads, "attention heads")
          ->capture_default_str()
          ->check(count_up_to(kMaxModelPart)),
      step->add_option("--d-head", model.d_head, "head size")
          ->capture_default_str()
          ->check(count_up_to(kMaxModelPart)),
      step->add_option("--d-mlp", model.d_mlp, "MLP width (default 4 x --d-model)")
          ->check(count_up_to(kMaxModelPart)),
      step->add_option("--batch", options->batch, "sequences per step")
          ->capture_default_str()
          ->check(count_up_to(kMaxModelPart)),
      step->add_option("--length", options->length, "tokens per sequence")
          ->capture_default_str()
          ->check(count_up_to(kMaxLength)),
      step->add_option("--positions", model.attention.positions, "position encoding")
          ->capture_default_str()
          ->check(CLI::IsMember(position_names())),
      step->add_option("--vocab", options->vocab, "token ids, the output layer's width")
          ->capture_default_str()
          ->check(count_up_to(kMaxModelPart))};
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
  step->add_option("--threads", options->threads, "intra-op threads")
      ->capture_default_str()
      ->check(count_up_to(kMaxBenchThreads));
  step->add_option("--repeats", options->repeats, "timed steps per method (the median is kept)")
      ->capture_default_str()
      ->check(count_up_to(kMaxBenchRepeats));
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
  eval->add_option("--samples", options->samples, "samples timed per method, kernel and length")
      ->capture_default_str()
      ->check(count_up_to(kMaxSamples));
  eval->add_option(
          "--repeats", options->repeats,
          "rounds, each timing every kernel in turn on the same samples; the best of them is reported")
      ->capture_default_str()
      ->check(count_up_to(kMaxBenchRepeats));
  eval->add_option("--threads", options->threads,
                   "intra-op threads; above 1 the rounds also time the fused kernel at 1 thread (wall time)")
      ->capture_default_str()
      ->check(count_up_to(kMaxBenchThreads));
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
