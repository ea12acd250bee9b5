#pragma once
// `lengen bench step`: one whole training step per named attention method on one model shape and
// batch, as a ratio to softmax in the same run.
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
  // A config task's batch; empty: random tokens, every position a target.
  std::vector<Sample> samples;
  TrainConfig train;  // its beta1, beta2 and weight_decay set AdamW (a config's, or the defaults)
  DeviceChoice device = DeviceChoice::kCpu;
  TrainDtype dtype = TrainDtype::kFloat32;
  int threads = 1;
  int repeats = 20;
  // Names of the methods to time (empty: all); Softmax, the baseline, always runs.
  std::vector<std::string> only;
  bool json = false;
  // The config the shape was taken from; "" for the --batch/--length options.
  std::string shape_config;
};

// The shape of `config` (a shipped configs/quick/*.json or any other): its model, its batch size,
// its AdamW betas, a batch of its task's samples at len_max and its task's vocabulary.
void take_step_bench_shape(const Config& config, StepBenchOptions& options);

// Times every chosen method round-robin and prints a table (or JSON) on stdout; UserError for an
// unknown name in options.only or a CUDA device this LibTorch lacks.
void run_step_bench(const StepBenchOptions& options);

// The blocks' forward matrix-product FLOPs for `sequences` of `length` rows, the last block answering
// its last `last_queries` only (keys and values at every row); q.k^T and p.v over every key, or over
// the keys each row sees when `causal`; the output layer left out.
double forward_flops(const ModelConfig& model, int64_t sequences, int64_t length, int64_t last_queries,
                     bool causal);

// The FLOPs of one step's matrix products (2 m n k each; backward twice forward): forward_flops,
// not causal, with the last block at `last_block_queries` rows, and the output layer at
// `output_positions`. The rest is not a BLAS product and is left out.
double training_step_flops(const ModelConfig& model, int64_t batch, int64_t length, int64_t vocab,
                           int64_t output_positions, int64_t last_block_queries);

}  // namespace lengen
