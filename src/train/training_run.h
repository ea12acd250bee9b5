#pragma once
// One training run ready to step: data, model, optimizer and run folder, driven by train() as a
// loop of phases (step, log, validate, checkpoint, stop).
#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lengen/batch.h"
#include "lengen/checkpoint.h"
#include "lengen/config.h"
#include "lengen/decoder.h"
#include "lengen/folder_lock.h"
#include "lengen/progress_line.h"
#include "lengen/run_folder.h"
#include "lengen/task.h"
#include "lengen/trainer.h"
#include "lengen/training_data.h"

namespace lengen {

// What one optimizer step leaves for the policies after it.
struct StepOutcome {
  Batch batch;        // this rank's batch, on which usable weights are judged
  double loss = 0.0;  // token-mean over the global batch
  double lr = 0.0;
  double grad_norm = 0.0;
  bool stop = false;  // a signal reached some rank: every rank stops after this step
};

class TrainingRun {
 public:
  // Builds the data, model and optimizer, checks the run folder, with options.resume loads the
  // newest intact checkpoint, then writes the run's start. UserError before writing anything.
  TrainingRun(const Config& config, const TrainOptions& options);

  // The first step still to take: 0, or the resumed checkpoint's step.
  int64_t first_step() const { return progress_.step; }

  // One optimizer step (zero-based `step`), gradients averaged over the data-parallel group.
  // Throws TrainingDiverged on a non-finite loss or gradient.
  StepOutcome step(int64_t step);

  // Adds the step to the log window; every train.log_every steps writes its means to log.jsonl.
  void log(int64_t done, const StepOutcome& outcome);

  // Throws TrainingDiverged unless the weights are finite and give a finite loss on `batch`:
  // nothing is validated or saved from weights that cannot be used.
  void require_usable_weights(int64_t done, const Batch& batch);

  // In-distribution validation into log.jsonl; a new best exact match is kept as best.pt.
  void validate(int64_t done);

  // A step checkpoint (with the optimizer and the open log window), pruned to train.keep_checkpoints.
  void save(int64_t done);

  // A message on the progress line; finish() closes it.
  void note(const std::string& message) { progress_line_.note(message); }
  void finish() { progress_line_.finish(); }

 private:
  TrainingDiverged diverged(const std::string& what) const;

  const Config& config_;
  const TrainOptions& options_;
  int rank_ = 0;
  int world_ = 1;
  bool writer_ = true;  // rank 0 writes the run folder
  RunFolder run_;
  std::unique_ptr<FolderLock> lock_;  // rank 0's: the run has one writer while this run lives
  std::unique_ptr<Task> task_;
  std::unique_ptr<TrainingData> data_;
  std::vector<Sample> validation_samples_;
  torch::Device device_ = torch::kCPU;
  bool bf16_ = false;
  AttentionKernel validation_kernel_ = AttentionKernel::kFused;
  Decoder model_{nullptr};
  std::vector<torch::Tensor> parameters_;
  std::unique_ptr<torch::optim::AdamW> optimizer_;
  TrainingProgress progress_;
  std::string last_good_checkpoint_;  // named when training diverges
  std::unique_ptr<JsonlLog> log_;
  ProgressLine progress_line_;
  // Speed counts the steps since window_start_ (a resumed window's loss holds earlier steps too).
  std::chrono::steady_clock::time_point window_start_;
  int64_t window_start_step_ = 0;
};

}  // namespace lengen
