#include "training_run.h"

#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>

#include "lengen/autocast.h"
#include "lengen/compute_threads.h"
#include "lengen/data_record.h"
#include "lengen/data_streams.h"
#include "lengen/device.h"
#include "lengen/errors.h"
#include "lengen/loss.h"
#include "lengen/memory_estimate.h"
#include "lengen/metrics.h"
#include "lengen/run_start.h"
#include "lengen/schedule.h"
#include "lengen/schedule_history.h"
#include "lengen/sequence.h"
#include "lengen/stop_signals.h"
#include "lengen/task_files.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// The run records task.len_min..len_max as its training lengths, so the files must hold exactly
// that range: by their record when lengen drew them, else by reaching both ends.
void check_training_lengths(const Task& task, const Config& config, const std::string& data_dir,
                            const std::string& stem, const std::vector<Sample>& samples) {
  const std::optional<int64_t> max_size = task.source_length(config.task.len_max);
  const std::optional<int64_t> min_size = task.source_length(config.task.len_min);
  if (!max_size || !min_size) return;  // the source length does not follow the task length
  const std::optional<TrainLengths> recorded = recorded_train_lengths(data_dir);
  const auto [shortest, longest] = std::minmax_element(
      samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.src.size() < b.src.size(); });
  // `sample` at the `end` of the data must have `size` symbols (at most or at least, by `sign`).
  const auto check = [&](auto sample, const char* end, int64_t size, const char* key, int64_t value, int sign) {
    const auto have = static_cast<int64_t>(sample->src.size());
    if (sign * (have - size) <= 0 && (recorded || have == size)) return;
    throw UserError(fmt::format(
        "{}.src: the {} source (line {}) has {} symbols, {} the {} of a source at {}={}; set {} to the training "
        "data's {} length",
        stem, end, sample - samples.begin() + 1, have, have > size ? "more than" : "fewer than", size, key, value,
        key, end));
  };
  check(longest, "longest", *max_size, "task.len_max", config.task.len_max, 1);
  check(shortest, "shortest", *min_size, "task.len_min", config.task.len_min, -1);
  if (recorded && (recorded->min != config.task.len_min || recorded->max != config.task.len_max)) {
    throw UserError(fmt::format(
        "--data {} holds training data drawn at task lengths {}..{} ({}), but the config has "
        "task.len_min={}, task.len_max={}; set them to {} and {}",
        data_dir, recorded->min, recorded->max, (std::filesystem::path(data_dir) / kDataRecordName).string(),
        config.task.len_min, config.task.len_max, recorded->min, recorded->max));
  }
}

// With `data_dir`, `files_hash` gets the hash of the training files' bytes as read.
std::unique_ptr<TrainingData> training_data(const Task& task, const Config& config,
                                            const std::string& data_dir, std::string* files_hash) {
  if (data_dir.empty()) {
    return generated_data(task, config.task.len_min, config.task.len_max,
                          derive_seed(config.task.seed, kTrainStream));
  }
  check_data_record(data_dir, task);
  if (const std::string note = unrecorded_data_note(data_dir, task); !note.empty()) spdlog::warn(note);
  const std::string stem = data_dir + "/train";
  if (!std::filesystem::exists(stem + ".src") && !std::filesystem::exists(stem + ".trg")) {
    throw UserError("--data " + data_dir +
                    " has no train.src/.trg to train on (lengen data --train N writes them)");
  }
  auto samples = read_samples(stem, task.num_symbols(), task.framing(), files_hash);
  if (samples.empty()) throw UserError(stem + ".src: no samples to train on");
  check_training_lengths(task, config, data_dir, stem, samples);
  // A target longer than greedy decoding may produce could never be scored, and one of millions of
  // symbols would hold training on a single step for hours.
  if (task.framing() == Framing::kTargetAfterSource) {
    for (size_t i = 0; i < samples.size(); ++i) {
      const int64_t cap =
          greedy_token_cap(static_cast<int64_t>(samples[i].src.size()), config.eval.decode_cap);
      if (static_cast<int64_t>(samples[i].trg.size()) >= cap) {
        throw UserError(stem + ".trg:" + std::to_string(i + 1) + ": a target of " +
                        std::to_string(samples[i].trg.size()) + " symbols after a source of " +
                        std::to_string(samples[i].src.size()) + ", more than the " + std::to_string(cap - 1) +
                        " that eval.decode_cap=" + fmt::format("{:g}", config.eval.decode_cap) +
                        " lets greedy decoding produce; raise eval.decode_cap for longer targets");
      }
    }
  }
  return file_data(std::move(samples), derive_seed(config.train.seed, kTrainStream));
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
}

SequenceMetrics validation_metrics(Decoder& model, const std::vector<Sample>& samples, int64_t batch_size,
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

// A blown-up step can leave huge but finite weights, so the loss on that step's batch (dense
// path, as training computes it) is checked too.
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

// A step larger than the machine's memory is refused before anything is made; data-parallel
// processes on one machine each hold their share of the batch and a whole model.
void check_step_fits_in_memory(const Config& config, const Task& task, int world) {
  if (resolve_device(config.train.device).type() != torch::kCPU) return;
  const double tokens =
      static_cast<double>(collate(fixed_samples(task, config.task.len_max, 1, 0)).input.size(1));
  const double per_process = static_cast<double>(config.train.batch_size) / std::max(world, 1);
  check_fits_in_memory(
      training_step_memory(config.model, vocab_size(task.num_symbols()), tokens, per_process),
      fmt::format("train.batch_size={} of {} tokens (task.len_max={})", config.train.batch_size, tokens,
                  config.task.len_max),
      "one training step", "lower train.batch_size or task.len_max (or the model's size)");
}

// Loads the newest checkpoint that can be read; an unreadable newer one (cut short by a full
// disk, damaged) is renamed to NAME.unreadable by the `writer`, kept but out of the way.
TrainingProgress resume_from_intact_checkpoint(const RunFolder& run, Decoder& model,
                                               torch::optim::Optimizer& optimizer, bool writer) {
  const std::vector<std::string> checkpoints = run.checkpoints();
  // check_run_folder_at_start has refused a run without checkpoints.
  // Unreadable newer checkpoints are set aside only once an older one resumes: a refused resume
  // leaves the folder as it was.
  std::vector<std::string> unreadable;
  for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it) {
    try {
      TrainingProgress progress = load_checkpoint(*it, model, &optimizer);
      if (writer) {
        for (const std::string& damaged : unreadable) {
          const std::string aside = damaged + ".unreadable";
          spdlog::warn("{} is unreadable; kept as {}, resuming from {} instead", damaged, aside, *it);
          std::error_code ignored;
          fs::rename(damaged, aside, ignored);
        }
        spdlog::info("resuming {} from step {} ({})", run.path(), progress.step, *it);
      }
      return progress;
    } catch (const CheckpointUnreadable& e) {
      if (std::next(it) == checkpoints.rend()) {
        throw UserError("cannot resume " + run.path() + ": no intact checkpoint (" + e.what() + ")");
      }
      unreadable.push_back(*it);
    }
  }
  return {};
}

}  // namespace

TrainingRun::TrainingRun(const Config& config, const TrainOptions& options)
    : config_(config),
      options_(options),
      rank_(options.group != nullptr ? options.group->rank() : 0),
      world_(options.group != nullptr ? options.group->world_size() : 1),
      writer_(rank_ == 0),
      run_(options.run_dir),
      progress_line_(config.train.steps, writer_) {
  const TrainConfig& tc = config.train;
  task_ = make_task(config.task.name, config.task.params, config.task.seed);
  check_generated_length(*task_, config.task.len_min, "task.len_min");  // validation samples come from it
  // The evaluation after training generates these lengths (unless --data brings test files):
  // a length the task cannot make is found before the first step, not after the last.
  std::set<int64_t> lengths;
  if (!options.data_dir.empty()) {
    for (const EvalSplit& split : list_eval_splits(options.data_dir)) lengths.insert(split.length);
  }
  if (lengths.empty()) {
    for (int64_t length : config.eval.lengths) check_generated_length(*task_, length, "eval.lengths entry");
  }
  check_step_fits_in_memory(config, *task_, world_);
  // What the run records of its data is what it read: files rewritten meanwhile (another lengen
  // data --force) are not recorded as trained on.
  std::string files_hash;
  data_ = training_data(*task_, config, options.data_dir, &files_hash);
  const nlohmann::json data_record = training_data_record(options.data_dir, files_hash);
  validation_samples_ = generated_data(*task_, config.task.len_min, config.task.len_max,
                                       derive_seed(config.task.seed, kValidationStream))
                            ->batch(0, 0, tc.val_samples);
  set_compute_threads(static_cast<int>(tc.threads));
  device_ = resolve_device(tc.device);
  // Mixed precision: matrix products in bf16 during the training forward; weights, optimizer
  // state, attention scores and normalizers in fp32. Validation and evaluation run in fp32.
  bf16_ = tc.dtype == TrainDtype::kBfloat16;

  torch::manual_seed(tc.seed);
  model_ = Decoder(config.model, vocab_size(task_->num_symbols()));
  model_->to(device_);
  // Validation runs without grad, so it takes the evaluation's attention kernel.
  validation_kernel_ = config.eval.attention_kernel;
  model_->set_attention_kernel(validation_kernel_);
  optimizer_ = std::make_unique<torch::optim::AdamW>(
      model_->parameters(),
      torch::optim::AdamWOptions(tc.lr).betas({tc.beta1, tc.beta2}).weight_decay(tc.weight_decay));
  lock_ = check_run_folder_at_start(run_, config, {options.resume, options.force, options.data_dir}, writer_);
  // Every rank has checked the folder before rank 0 writes into it; otherwise a slower rank
  // would find rank 0's config.json and refuse the folder.
  if (options.group != nullptr) {
    std::vector<torch::Tensor> barrier{torch::zeros({1})};
    options.group->all_reduce_sum(barrier);
  }
  // Written once the checkpoint resumes: a resume that cannot leaves the run as it found it.
  if (options.resume) progress_ = resume_from_intact_checkpoint(run_, model_, *optimizer_, writer_);
  // Said once the start is accepted (a refused one prints its one line alone). The lengths of --data's
  // test splits are the ones evaluated: other eval.lengths beside them are not, and said so.
  if (writer_ && !options.start_note.empty()) spdlog::info("{}", options.start_note);
  if (writer_ && !lengths.empty() && !config.eval.lengths.empty() &&
      lengths != std::set<int64_t>(config.eval.lengths.begin(), config.eval.lengths.end())) {
    spdlog::warn(
        "eval.lengths {} is not what the evaluation after training scores: it scores the test splits "
        "of --data {} (lengths {}); `lengen eval RUN` afterwards scores generated data at eval.lengths",
        fmt::format("[{}]", fmt::join(config.eval.lengths, ",")), options.data_dir, fmt::join(lengths, ","));
  }
  if (writer_) {
    // Every checkpoint it writes carries the run's id.
    progress_.run_id = write_run_start(run_, config, options.resume, data_record);
  }
  progress_.schedule = continued_schedule(progress_.schedule, progress_.step, tc.steps);
  last_good_checkpoint_ = run_.latest_checkpoint();
  parameters_ = model_->parameters();
  if (options.group != nullptr) options.group->broadcast(parameters_);
  if (writer_) log_ = std::make_unique<JsonlLog>(run_.log_path(), progress_.step);
  window_start_ = std::chrono::steady_clock::now();
  window_start_step_ = progress_.step;
  model_->train();
}

TrainingDiverged TrainingRun::diverged(const std::string& what) const {
  const std::string where = last_good_checkpoint_.empty()
                                ? "no checkpoint was written before it (train from the start with a smaller "
                                  "train.lr or a train.grad_clip)"
                                : "the last good checkpoint is " + last_good_checkpoint_;
  return TrainingDiverged(what + "; " + where);
}

StepOutcome TrainingRun::step(int64_t step) {
  const TrainConfig& tc = config_.train;
  DataParallel* group = options_.group;
  const int64_t local_batch = tc.batch_size / world_;
  StepOutcome outcome;
  outcome.lr = learning_rate(tc, step);
  set_learning_rate(*optimizer_, outcome.lr);
  outcome.batch = to_device(collate(data_->batch(step, rank_ * local_batch, local_batch)), device_);
  const Batch& batch = outcome.batch;
  optimizer_->zero_grad();
  torch::Tensor loss;
  {
    const AutocastScope mixed_precision(device_.type(), bf16_);
    auto logits = model_->forward_selected(batch.input, batch.positions, batch.loss_mask);
    loss = target_cross_entropy(logits, batch.target.index({batch.loss_mask}));
  }
  if (group != nullptr) {
    // Token-mean over the global batch: each rank's token sum over the global count, and
    // gradients summed, equal one process with the whole batch.
    std::vector<torch::Tensor> count{batch.loss_mask.sum().to(torch::kFloat)};
    group->all_reduce_sum(count);
    loss = loss * batch.loss_mask.sum() / count[0];
  }
  if (options_.loss_hook) options_.loss_hook(step, loss);
  if (!std::isfinite(loss.item<double>()))
    throw diverged("non-finite loss at step " + std::to_string(step + 1));  // steps count from 1, as logged
  loss.backward();
  if (group != nullptr) {
    std::vector<torch::Tensor> grads;
    for (auto& p : parameters_) grads.push_back(p.grad());
    group->all_reduce_sum(grads);
  }
  outcome.grad_norm = gradient_norm(parameters_, tc.grad_clip);
  if (!std::isfinite(outcome.grad_norm))
    throw diverged("non-finite gradient at step " + std::to_string(step + 1));
  optimizer_->step();

  outcome.loss = loss.item<double>();
  outcome.stop = stop_signal_received();
  if (group != nullptr) {
    // The stop request travels with the loss: a signal seen by some ranks only must stop
    // them all after the same step, or the others would wait for them forever.
    auto flag = torch::full({1}, outcome.stop ? 1.0 : 0.0, loss.options());
    std::vector<torch::Tensor> total{torch::cat({loss.detach().reshape({1}), flag})};
    group->all_reduce_sum(total);
    outcome.loss = total[0][0].item<double>();
    outcome.stop = total[0][1].item<double>() > 0;
  }
  return outcome;
}

void TrainingRun::log(int64_t done, const StepOutcome& outcome) {
  progress_.window_loss += outcome.loss;
  progress_.window_tokens += (outcome.batch.positions >= 0).sum().item<int64_t>() * world_;
  ++progress_.window_steps;
  if (done % config_.train.log_every != 0 && done != config_.train.steps) return;
  const double seconds =
      std::max(std::chrono::duration<double>(std::chrono::steady_clock::now() - window_start_).count(), 1e-9);
  const double mean_loss = progress_.window_loss / progress_.window_steps;
  const double steps_per_s = static_cast<double>(done - window_start_step_) / seconds;
  const double tokens_per_step = static_cast<double>(progress_.window_tokens) / progress_.window_steps;
  if (writer_) {
    log_->write({{"step", done},
                 {"loss", mean_loss},
                 {"lr", outcome.lr},
                 {"grad_norm", outcome.grad_norm},
                 {"tokens_per_s", tokens_per_step * steps_per_s},
                 {"steps_per_s", steps_per_s}});
  }
  progress_line_.update(done, mean_loss, outcome.lr, steps_per_s);
  window_start_ = std::chrono::steady_clock::now();
  window_start_step_ = done;
  progress_.window_tokens = progress_.window_steps = 0;
  progress_.window_loss = 0.0;
}

void TrainingRun::require_usable_weights(int64_t done, const Batch& batch) {
  if (!writer_ || weights_usable(model_, batch, validation_kernel_)) return;
  throw diverged("the weights after step " + std::to_string(done) +
                 " give a non-finite loss or are not finite");
}

void TrainingRun::validate(int64_t done) {
  if (!writer_) return;
  const auto metrics = validation_metrics(model_, validation_samples_, config_.eval.batch_size, device_);
  log_->write({{"step", done},
               {"val_loss", metrics.loss()},
               {"val_exact_match", metrics.exact_match()},
               {"val_token_accuracy", metrics.token_accuracy()}});
  progress_line_.note(fmt::format("step {}: validation exact match {:.1f}%, loss {:.4f}", done,
                                  100 * metrics.exact_match(), metrics.loss()));
  // A tie goes to the later step: as good on validation, and trained further.
  if (metrics.exact_match() >= progress_.best_validation) {
    progress_.best_validation = metrics.exact_match();
    progress_.best_step = done;
    progress_.step = done;
    save_checkpoint(run_.best_checkpoint_path(), model_, nullptr, progress_);
  }
}

void TrainingRun::save(int64_t done) {
  if (!writer_) return;
  progress_.step = done;
  save_checkpoint(run_.checkpoint_path(done), model_, optimizer_.get(), progress_);
  last_good_checkpoint_ = run_.checkpoint_path(done);
  run_.prune_checkpoints(config_.train.keep_checkpoints);
}

}  // namespace lengen
