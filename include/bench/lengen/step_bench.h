#pragma once
// `lengen bench step`: the time of one whole training step as the trainer takes it (forward, the
// output layer and loss at the target positions only, backward, gradient clipping, AdamW) for each
// named attention method (attention_choices.h) on the same model shape and batch, as a ratio to
// softmax measured in the same run. This is the number that decides how long a sweep takes;
// `bench normalizers` isolates the normalizers themselves.
#include <cstdint>
#include <string>
#include <vector>

#include "lengen/config.h"
#include "lengen/task.h"

namespace lengen {

// The shape timed when no config gives one: 2 layers, d_model 128, 4 heads of 32, NAPE.
ModelConfig default_step_bench_model();

struct StepBenchOptions {
  ModelConfig model = default_step_bench_model();  // its normalizer and scaling are each method's
  int64_t batch = 32;
  int64_t length = 64;  // tokens per sequence
  int64_t vocab = 36;   // token ids (and output layer's width); a config's task sets its own
  // The batch a config's task gives (take_step_bench_shape); empty: random tokens, every position
  // a target.
  std::vector<Sample> samples;
  TrainConfig train;  // its beta1, beta2 and weight_decay set AdamW (a config's, or the defaults)
  DeviceChoice device = DeviceChoice::kCpu;
  TrainDtype dtype = TrainDtype::kFloat32;
  int threads = 1;
  int repeats = 20;
  // Names of the methods to time (empty: all); Softmax, the baseline, always runs.
  std::vector<std::string> only;
  bool json = false;
  // The config the shape was taken from (take_step_bench_shape), "" for the --batch/--length/...
  // options: messages name what the user gave.
  std::string shape_config;
};

// The shape of `config` (a shipped configs/quick/*.json or any other): its model, its batch size,
// its AdamW betas, a batch of its task's samples at len_max and its task's vocabulary.
void take_step_bench_shape(const Config& config, StepBenchOptions& options);

// Times every chosen method round-robin and prints a table (or JSON) on stdout; UserError for an
// unknown name in options.only or a CUDA device this LibTorch lacks.
void run_step_bench(const StepBenchOptions& options);

// The step's floor, set against the machine's sgemm rate (sgemm_rate.h): the FLOPs of the forward
// and backward matrix products of one step on `batch` sequences of `length` tokens, 2 m n k per product: per
// layer the q, k, v and output projections, the attention's full length x length q.k^T and p.v per head (the
// training kernel computes the whole square, masked), the MLP's gate, up and down; then the output layer to
// `vocab` at the `output_positions` positions whose loss the step takes (the trainer's forward_selected).
// Backward is twice forward (a gradient for each operand). Everything else in a step (norms, the normalizer,
// AdamW, the embedding lookup, the scaling projections) is left out: it is not a matrix product the BLAS runs
// at its rate.
double training_step_flops(const ModelConfig& model, int64_t batch, int64_t length, int64_t vocab,
                           int64_t output_positions);

}  // namespace lengen
