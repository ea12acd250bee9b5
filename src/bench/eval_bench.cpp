// Evaluation time per sample at long lengths, fused against dense attention (eval_bench.h).
#include "lengen/eval_bench.h"

#include <malloc.h>
#include <spdlog/fmt/fmt.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bench_output.h"
#include "lengen/attention_choices.h"
#include "lengen/batch.h"
#include "lengen/checkpoint.h"
#include "lengen/compute_threads.h"
#include "lengen/config_io.h"
#include "lengen/data_streams.h"
#include "lengen/evaluation.h"
#include "lengen/rng.h"
#include "lengen/run_folder.h"
#include "lengen/sequence.h"
#include "lengen/sgemm_rate.h"
#include "lengen/shipped_configs.h"
#include "lengen/step_bench.h"
#include "lengen/training_data.h"

namespace lengen {
namespace {

// A model to time: one attention method, its config and (with --run) its weights.
struct BenchModel {
  std::string method;
  Config config;
  Decoder model{nullptr};
};

std::vector<BenchModel> bench_models(const EvalBenchOptions& options) {
  std::vector<Config> configs;
  if (options.run_dir.empty()) {
    for (const auto& [normalizer, scaling] :
         {std::pair{"softmax", "none"}, std::pair{"entmax15", "asentmax"}}) {
      Config config = shipped_quick_config("mqmtar");
      config.model.attention.normalizer = normalizer;
      config.model.attention.scaling = scaling;
      configs.push_back(config);
    }
  } else {
    configs = {load_config(RunFolder(options.run_dir).config_path())};
  }
  std::vector<BenchModel> models;
  for (const Config& config : configs) {
    auto task = make_task(config.task.name, config.task.params, config.task.seed);
    torch::manual_seed(config.train.seed);
    BenchModel bench{method_display_name(config.model.attention.normalizer, config.model.attention.scaling),
                     config, Decoder(config.model, vocab_size(task->num_symbols()))};
    if (!options.run_dir.empty())
      load_checkpoint(resolve_checkpoint(options.run_dir, "last"), bench.model, nullptr);
    bench.model->set_query_chunk(config.model.prefill_chunk);
    models.push_back(std::move(bench));
  }
  return models;
}

// The process's resident memory now (VmRSS) or at its peak since the last reset (VmHWM), in MB.
double status_mb(const char* field) {
  std::ifstream status("/proc/self/status");
  const std::string prefix = std::string(field) + ":";
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(prefix, 0) == 0) return std::stod(line.substr(prefix.size())) / 1024.0;
  }
  return 0.0;
}

// Starts measuring what one evaluation adds to the resident set; returns the resident MB it starts
// from. lengen keeps freed heap memory (allocator.h): it goes back to the system first, then the
// peak is reset to what is left (Linux: 5 > /proc/self/clear_refs).
double start_memory_measurement() {
  malloc_trim(0);
  std::ofstream clear("/proc/self/clear_refs");
  if (clear) clear << "5";
  return status_mb("VmRSS");
}

struct Timing {
  double seconds_per_sample = std::numeric_limits<double>::infinity();  // infinite: not timed
  // The most resident memory the evaluation added above what the process held when it began
  // (the model, its weights and the samples): the dense kernel's length x length scores show here.
  double peak_added_mb = 0;
  bool timed() const { return std::isfinite(seconds_per_sample); }
  // Keeps the faster time, and the larger peak of the two.
  void keep_best(const Timing& other) {
    seconds_per_sample = std::min(seconds_per_sample, other.seconds_per_sample);
    peak_added_mb = std::max(peak_added_mb, other.peak_added_mb);
  }
};

Timing time_evaluation(BenchModel& bench, const std::vector<Sample>& samples, int64_t length,
                       AttentionKernel kernel, bool single_threaded) {
  EvalConfig eval = bench.config.eval;
  eval.decode = DecodeMode::kTeacherForced;
  eval.batch_size = 1;
  eval.attention_stats = true;
  bench.model->set_attention_kernel(kernel);
  const double resident_before = start_memory_measurement();
  const double start = bench_now_seconds(single_threaded);
  evaluate_samples(bench.model, samples, length, eval);
  Timing timing;
  timing.seconds_per_sample =
      (bench_now_seconds(single_threaded) - start) / static_cast<double>(samples.size());
  timing.peak_added_mb = std::max(0.0, status_mb("VmHWM") - resident_before);
  return timing;
}

// The timings of one model at one length: the dense kernel (unless the length is above
// --dense-max-length), the fused one, and with more than one thread the fused one at one thread.
struct KernelTimings {
  Timing dense, fused, one_thread;
};

// Best of --repeats rounds, each timing the kernels in turn on the same samples, so the machine's
// drift hits them alike; `warmup` first goes through each kernel untimed, so the heap settles.
KernelTimings time_kernels(BenchModel& bench, const std::vector<Sample>& samples, int64_t length,
                           const std::vector<Sample>& warmup, const EvalBenchOptions& options) {
  const bool single = options.threads == 1;
  const bool with_dense = length <= options.dense_max_length;
  if (with_dense) time_evaluation(bench, warmup, bench.config.task.len_max, AttentionKernel::kDense, single);
  time_evaluation(bench, warmup, bench.config.task.len_max, AttentionKernel::kFused, single);
  KernelTimings best;
  for (int64_t round = 0; round < options.repeats; ++round) {
    if (with_dense)
      best.dense.keep_best(time_evaluation(bench, samples, length, AttentionKernel::kDense, single));
    if (!single) {
      set_compute_threads(1);
      best.one_thread.keep_best(time_evaluation(bench, samples, length, AttentionKernel::kFused, false));
      set_compute_threads(options.threads);
    }
    best.fused.keep_best(time_evaluation(bench, samples, length, AttentionKernel::kFused, single));
  }
  return best;
}

}  // namespace

void run_eval_bench(const EvalBenchOptions& options) {
  set_compute_threads(options.threads);
  const bool single = options.threads == 1;
  std::vector<BenchModel> models = bench_models(options);
  const double flops_per_second = sgemm_flops_per_second(options.threads);
  for (const BenchModel& bench : models) {  // before any output
    auto task = make_task(bench.config.task.name, bench.config.task.params, bench.config.task.seed);
    for (int64_t length : options.lengths) check_generated_length(*task, length);
  }
  BenchTable table(
      options.json,
      fmt::format(
          "teacher-forced evaluation with attention statistics, batch 1, {} sample(s) per entry, best of {} "
          "round(s), {} thread(s), {}; sgemm {:.1f} GFLOP/s (one thread's rate x threads); floor = "
          "attention + projection FLOPs at that rate (the last layer at the rows it answers); +peak MB = the most resident memory the evaluation "
          "added above the model and samples",
          options.samples, options.repeats, options.threads, single ? "thread CPU time" : "wall time",
          flops_per_second / 1e9),
      {{"method", -10, "method"},
       {"kernel", -6, "kernel"},
       {"length", 8, "length"},
       {"tokens", 8, "tokens"},
       {"s/sample", 12, "seconds_per_sample", 3},
       {"tokens/s", 12, "tokens_per_s"},
       {"+peak MB", 10, "peak_added_mb"},
       {"speedup", 9, "speedup_vs_dense", 2},
       {"floor x", 8, "floor_ratio", 2}});
  for (int64_t length : options.lengths) {
    for (BenchModel& bench : models) {
      auto task = make_task(bench.config.task.name, bench.config.task.params, bench.config.task.seed);
      const auto samples = fixed_samples(*task, length, options.samples,
                                         derive_seed(bench.config.task.seed, kEvalStream(length)));
      const Batch first = collate({samples.front()});
      const int64_t tokens = first.input.size(1);
      const double floor_seconds =
          forward_flops(bench.config.model, 1, tokens, tokens - first_selected_row(first.loss_mask), true) /
          flops_per_second;
      const auto warmup = fixed_samples(*task, bench.config.task.len_max, 1, 0);
      const KernelTimings timings = time_kernels(bench, samples, length, warmup, options);
      for (const bool dense : {true, false}) {
        if (dense && !timings.dense.timed()) continue;
        const Timing timing = dense ? timings.dense : timings.fused;
        nlohmann::json record = {{"method", bench.method},
                                 {"kernel", dense ? "dense" : "fused"},
                                 {"length", length},
                                 {"tokens", tokens},
                                 {"samples", options.samples},
                                 {"repeats", options.repeats},
                                 {"threads", options.threads},
                                 {"seconds_per_sample", timing.seconds_per_sample},
                                 {"tokens_per_s", static_cast<double>(tokens) / timing.seconds_per_sample},
                                 {"peak_added_mb", timing.peak_added_mb},
                                 {"speedup_vs_dense", nullptr},
                                 {"floor_ratio", timing.seconds_per_sample / floor_seconds}};
        if (timings.dense.timed()) {
          record["speedup_vs_dense"] = timings.dense.seconds_per_sample / timing.seconds_per_sample;
        }
        const double one_thread_seconds = timings.one_thread.seconds_per_sample;
        std::string against_one;
        if (!dense && timings.one_thread.timed()) {
          record["one_thread_seconds_per_sample"] = one_thread_seconds;
          record["speedup_vs_one_thread"] = one_thread_seconds / timing.seconds_per_sample;
          against_one = fmt::format("  vs 1 thread: {:.3f} s, {:.2f}x", one_thread_seconds,
                                    one_thread_seconds / timing.seconds_per_sample);
        }
        table.add(record, against_one);
      }
    }
  }
  table.finish();
}

}  // namespace lengen
