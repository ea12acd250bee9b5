#include "lengen/trainer.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>

#include "lengen/autocast.h"
#include "lengen/batch.h"
#include "lengen/checkpoint.h"
#include "lengen/compute_threads.h"
#include "lengen/config_io.h"
#include "lengen/data_streams.h"
#include "lengen/errors.h"
#include "lengen/loss.h"
#include "lengen/metrics.h"
#include "lengen/model.h"
#include "lengen/run_folder.h"
#include "lengen/schedule.h"
#include "lengen/sequence.h"
#include "lengen/task_files.h"
#include "lengen/training_data.h"
#include "train/progress_line.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

std::atomic<bool> stop_requested{false};

extern "C" void request_stop(int) { stop_requested = true; }

// SIGINT/SIGTERM finish the current step, write a checkpoint and return.
class StopSignals {
 public:
  StopSignals() {
    stop_requested = false;
    previous_int_ = std::signal(SIGINT, request_stop);
    previous_term_ = std::signal(SIGTERM, request_stop);
  }
  ~StopSignals() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
  }

 private:
  void (*previous_int_)(int);
  void (*previous_term_)(int);
};

// What a resumed run may change: its length and its evaluation.
const std::vector<std::string> kKeysAResumeMayChange = {"train.steps", "eval", "description"};

// Checks the folder against the options before anything is written.
void prepare_run_folder(const RunFolder& run, const Config& config, const TrainOptions& options, bool writer) {
  const auto resolved = config_to_json(config);
  if (options.resume) {
    if (!fs::exists(run.config_path())) {
      throw UserError("cannot resume " + run.path() + ": it has no config.json (start it without --resume)");
    }
    auto saved = read_json_file(run.config_path());
    const auto differs = first_config_difference(saved, resolved, kKeysAResumeMayChange);
    if (!differs.empty()) {
      throw UserError("cannot resume " + run.path() + ": config key '" + differs +
                      "' differs from the run's config.json");
    }
  } else {
    std::error_code error;
    if (fs::exists(run.path(), error) && !fs::is_directory(run.path(), error)) {
      throw UserError("--out " + run.path() + " is a file, not a run folder");
    }
    if (run.has_content()) {
      if (!options.force) {
        throw UserError("run folder " + run.path() +
                        " already exists; use --resume to continue it or --force to start over");
      }
      if (!run.is_lengen_run()) {
        throw UserError(run.path() + " is not a lengen run folder (no " +
                        fs::path(run.marker_path()).filename().string() +
                        "); --force only replaces run folders lengen wrote");
      }
      if (writer) run.remove_for_restart();
    }
  }
  // Every rank has checked the folder before rank 0 writes into it; otherwise a slower rank
  // would find rank 0's config.json and refuse the folder.
  if (options.group != nullptr) {
    std::vector<torch::Tensor> barrier{torch::zeros({1})};
    options.group->all_reduce_sum(barrier);
  }
  if (!writer) return;
  fs::create_directories(run.checkpoint_dir());
  run.mark();
  write_file_atomically(run.config_path(), resolved.dump(2) + "\n");
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
}

SequenceMetrics validate(Decoder& model, const std::vector<Sample>& samples, int64_t batch_size,
                         const torch::Device& device) {
  model->eval();
  SequenceMetrics total;
  for (size_t first = 0; first < samples.size(); first += batch_size) {
    const size_t last = std::min(samples.size(), first + static_cast<size_t>(batch_size));
    std::vector<Sample> chunk(samples.begin() + first, samples.begin() + last);
    total.add(score_teacher_forced(model, to_device(collate(chunk), device)));
  }
  model->train();
  return total;
}

double gradient_norm(const std::vector<torch::Tensor>& parameters, double clip) {
  if (clip > 0) return torch::nn::utils::clip_grad_norm_(parameters, clip);
  double sum = 0.0;
  for (const auto& p : parameters) {
    if (p.grad().defined()) sum += p.grad().to(torch::kDouble).pow(2).sum().item<double>();
  }
  return std::sqrt(sum);
}

// The weights after a step are worth a checkpoint only when they are finite and still give a
// finite loss on that step's batch: a blown-up step can leave huge but finite weights.
// The loss is taken on the dense reference path, as the training forward computes it; the model
// is then set back to `kernel`, the one its validation uses.
bool weights_usable(Decoder& model, const Batch& batch, AttentionKernel kernel) {
  if (!weights_are_finite(model)) return false;
  torch::NoGradGuard no_grad;
  model->eval();
  model->set_attention_kernel(AttentionKernel::kDense);
  const double loss = score_teacher_forced(model, batch).loss();
  model->set_attention_kernel(kernel);
  model->train();
  return std::isfinite(loss);
}

// Resumes from the newest checkpoint that can be read; an unreadable newer one (cut short by
// a full disk, damaged) is renamed to NAME.unreadable, kept but out of the way, and the one
// before it is tried.
TrainingProgress resume_from_intact_checkpoint(const RunFolder& run, Decoder& model,
                                               torch::optim::Optimizer& optimizer, bool writer) {
  const std::vector<std::string> checkpoints = run.checkpoints();
  if (checkpoints.empty()) throw UserError("cannot resume " + run.path() + ": it has no checkpoint yet");
  for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it) {
    try {
      TrainingProgress progress = load_checkpoint(*it, model, &optimizer);
      if (writer) spdlog::info("resuming {} from step {} ({})", run.path(), progress.step, *it);
      return progress;
    } catch (const CheckpointUnreadable& e) {
      if (std::next(it) == checkpoints.rend()) {
        throw UserError("cannot resume " + run.path() + ": no intact checkpoint (" + e.what() + ")");
      }
      if (writer) {
        spdlog::warn("{}; kept as {}.unreadable, resuming from {} instead", e.what(), *it, *std::next(it));
        std::error_code ignored;
        fs::rename(*it, *it + ".unreadable", ignored);
      }
    }
  }
  return {};
}

}  // namespace

torch::Device resolve_device(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  if (name == "cuda" || name == "auto") {
    if (torch::cuda::is_available()) return torch::kCUDA;
    if (name == "cuda") throw UserError("train.device is 'cuda' but this LibTorch has no CUDA device");
    return torch::kCPU;
  }
  throw UserError("unknown train.device '" + name + "' (expected cpu, cuda or auto)");
}

void check_batch_splits_over(const TrainConfig& train, int world) {
  if (train.batch_size % world != 0) {
    throw UserError("train.batch_size (" + std::to_string(train.batch_size) + ") must be divisible by the " +
                    std::to_string(world) + " data-parallel workers");
  }
}

TrainResult train(const Config& config, const TrainOptions& options) {
  const TrainConfig& tc = config.train;
  const int rank = options.group != nullptr ? options.group->rank() : 0;
  const int world = options.group != nullptr ? options.group->world_size() : 1;
  const bool writer = rank == 0;
  check_batch_splits_over(tc, world);
  RunFolder run(options.run_dir);
  auto task = make_task(config.task.name, config.task.params, config.task.seed);
  std::unique_ptr<TrainingData> data;
  if (options.data_dir.empty()) {
    data = generated_data(*task, config.task.len_min, config.task.len_max, derive_seed(config.task.seed, kTrainStream));
  } else {
    const std::string stem = options.data_dir + "/train";
    auto samples = read_samples(stem, task->num_symbols());
    if (samples.empty()) throw UserError(stem + ".src: no samples to train on");
    data = file_data(std::move(samples), derive_seed(tc.seed, kTrainStream));
  }
  const auto validation_samples =
      generated_data(*task, config.task.len_min, config.task.len_max, derive_seed(config.task.seed, kValidationStream))
          ->batch(0, 0, tc.val_samples);
  set_compute_threads(static_cast<int>(tc.threads));
  const torch::Device device = resolve_device(tc.device);
  // Mixed precision: matrix products in bf16 during the training forward; weights, optimizer
  // state, attention scores and normalizers in fp32. Validation and evaluation run in fp32.
  const bool bf16 = tc.dtype == "bfloat16";

  torch::manual_seed(tc.seed);
  Decoder model(config.model, vocab_size(task->num_symbols()));
  model->to(device);
  // Validation runs without grad, so it takes the evaluation's attention kernel.
  const AttentionKernel validation_kernel = attention_kernel_named(config.eval.attention_kernel);
  model->set_attention_kernel(validation_kernel);
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(tc.lr)
                                                         .betas({tc.beta1, tc.beta2})
                                                         .weight_decay(tc.weight_decay));
  prepare_run_folder(run, config, options, writer);
  TrainingProgress progress;
  if (options.resume) progress = resume_from_intact_checkpoint(run, model, optimizer, writer);
  // Where training can be picked up again if it diverges: named in the divergence message.
  std::string last_good_checkpoint = run.latest_checkpoint();
  auto parameters = model->parameters();
  if (options.group != nullptr) {
    options.group->broadcast(parameters);
  }
  std::unique_ptr<JsonlLog> log;
  if (writer) log = std::make_unique<JsonlLog>(run.log_path(), progress.step);

  auto diverged = [&](const std::string& what) {
    const std::string where = last_good_checkpoint.empty()
                                  ? "no checkpoint was written before it (train from the start with a smaller "
                                    "train.lr or a train.grad_clip)"
                                  : "the last good checkpoint is " + last_good_checkpoint;
    return TrainingDiverged(what + "; " + where);
  };
  auto window_start = std::chrono::steady_clock::now();
  int64_t window_tokens = progress.window_tokens, window_steps = progress.window_steps;
  double window_loss = progress.window_loss;
  auto save = [&](int64_t step) {
    if (!writer) return;
    progress.step = step;
    progress.window_loss = window_loss;
    progress.window_steps = window_steps;
    progress.window_tokens = window_tokens;
    save_checkpoint(run.checkpoint_path(step), model, &optimizer, progress);
    last_good_checkpoint = run.checkpoint_path(step);
    run.prune_checkpoints(tc.keep_checkpoints);
  };

  StopSignals signals;
  ProgressLine progress_line(tc.steps, writer);
  TrainResult result;
  const int64_t local_batch = tc.batch_size / world;
  model->train();
  bool first_logged = false;
  for (int64_t step = progress.step; step < tc.steps; ++step) {
    const double lr = learning_rate(tc, step);
    set_learning_rate(optimizer, lr);
    Batch batch = to_device(collate(data->batch(step, rank * local_batch, local_batch)), device);
    optimizer.zero_grad();
    torch::Tensor loss;
    {
      const AutocastScope mixed_precision(device.type(), bf16);
      auto logits = model->forward_selected(batch.input, batch.positions, batch.loss_mask);
      loss = target_cross_entropy(logits, batch.target.index({batch.loss_mask}));
    }
    if (options.group != nullptr) {
      // Token-mean over the global batch: each rank's token sum over the global count, and
      // gradients summed, equal one process with the whole batch.
      std::vector<torch::Tensor> count{batch.loss_mask.sum().to(torch::kFloat)};
      options.group->all_reduce_sum(count);
      loss = loss * batch.loss_mask.sum() / count[0];
    }
    if (options.loss_hook) options.loss_hook(step, loss);
    if (!std::isfinite(loss.item<double>())) {
      throw diverged("non-finite loss at step " + std::to_string(step));
    }
    loss.backward();
    if (options.group != nullptr) {
      std::vector<torch::Tensor> grads;
      for (auto& p : parameters) grads.push_back(p.grad());
      options.group->all_reduce_sum(grads);
    }
    const double grad_norm = gradient_norm(parameters, tc.grad_clip);
    if (!std::isfinite(grad_norm)) {
      throw diverged("non-finite gradient at step " + std::to_string(step));
    }
    optimizer.step();

    const int64_t done = step + 1;
    double loss_value = loss.item<double>();
    bool stop = stop_requested;
    if (options.group != nullptr) {
      // The stop request travels with the loss: a signal seen by some ranks only must stop
      // them all after the same step, or the others would wait for them forever.
      auto flag = torch::full({1}, stop ? 1.0 : 0.0, loss.options());
      std::vector<torch::Tensor> total{torch::cat({loss.detach().reshape({1}), flag})};
      options.group->all_reduce_sum(total);
      loss_value = total[0][0].item<double>();
      stop = total[0][1].item<double>() > 0;
    }
    window_loss += loss_value;
    window_tokens += (batch.positions >= 0).sum().item<int64_t>() * world;
    ++window_steps;
    result.final_loss = loss_value;
    if (!first_logged) {
      result.first_loss = loss_value;
      first_logged = true;
    }
    if (done % tc.log_every == 0 || done == tc.steps) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - window_start).count();
      const double mean_loss = window_loss / window_steps;
      if (writer) {
        log->write({{"step", done}, {"loss", mean_loss}, {"lr", lr}, {"grad_norm", grad_norm},
                    {"tokens_per_s", window_tokens / std::max(seconds, 1e-9)},
                    {"steps_per_s", window_steps / std::max(seconds, 1e-9)}});
      }
      progress_line.update(done, mean_loss, lr, window_steps / std::max(seconds, 1e-9));
      window_start = std::chrono::steady_clock::now();
      window_tokens = window_steps = 0;
      window_loss = 0.0;
    }
    const bool validate_now = (tc.eval_every > 0 && done % tc.eval_every == 0) || done == tc.steps;
    const bool checkpoint_now = (tc.checkpoint_every > 0 && done % tc.checkpoint_every == 0) || done == tc.steps;
    if (writer && (validate_now || checkpoint_now || stop) && !weights_usable(model, batch, validation_kernel)) {
      throw diverged("the weights after step " + std::to_string(done) + " give a non-finite loss or are not finite");
    }
    if (validate_now && writer) {
      auto metrics = validate(model, validation_samples, config.eval.batch_size, device);
      log->write({{"step", done}, {"val_loss", metrics.loss()}, {"val_exact_match", metrics.exact_match()},
                  {"val_token_accuracy", metrics.token_accuracy()}});
      progress_line.note(fmt::format("step {}: validation exact match {:.1f}%, loss {:.4f}", done,
                                     100 * metrics.exact_match(), metrics.loss()));
      if (metrics.exact_match() > progress.best_validation) {
        progress.best_validation = metrics.exact_match();
        progress.best_step = done;
        progress.step = done;
        save_checkpoint(run.best_checkpoint_path(), model, nullptr, progress);
      }
    }
    if (checkpoint_now) save(done);
    result.steps_done = done;
    if (stop) {
      if (!checkpoint_now) save(done);
      progress_line.note(fmt::format("stopped at step {}; checkpoint written, resume with --resume", done));
      result.interrupted = true;
      break;
    }
  }
  progress_line.finish();
  return result;
}

}  // namespace lengen
