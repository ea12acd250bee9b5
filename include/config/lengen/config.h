#pragma once
// One experiment = one Config. Plain values with the documented defaults; parsing,
// validation, overrides and the schema live in src/config/. No LibTorch here.
#include <cstdint>
#include <string>
#include <vector>

#include "lengen/device_choice.h"
#include "lengen/named_values.h"
#include "lengen/task.h"

namespace lengen {

// The choices of the config's keys that are not pluggable axes, each with the names the config
// spells (named_values.h). Anything else is refused when the config is read.
enum class AlibiSlopes { kLinear, kExp };               // linear: 1/(h+1); exp: 2^-h
enum class LrSchedule { kCosine, kLinear, kConstant };  // the decay after linear warmup
enum class TrainDtype { kFloat32, kBfloat16 };          // bfloat16: autocast-like, weights fp32
enum class DecodeMode { kTeacherForced, kGreedy };      // exact match in one pass, or until EOS
enum class CheckpointChoice { kLast, kBest };           // best: best in-distribution validation
// The attention kernel without grad on the CPU: kFused (default) or the dense reference. With
// grad, on other devices, in double or without a fused normalizer it is always dense.
enum class AttentionKernel { kFused, kDense };

LENGEN_NAMED_VALUES(AlibiSlopes, {"linear", AlibiSlopes::kLinear}, {"exp", AlibiSlopes::kExp})
LENGEN_NAMED_VALUES(LrSchedule, {"cosine", LrSchedule::kCosine}, {"linear", LrSchedule::kLinear},
                    {"constant", LrSchedule::kConstant})
LENGEN_NAMED_VALUES(TrainDtype, {"float32", TrainDtype::kFloat32}, {"bfloat16", TrainDtype::kBfloat16})
LENGEN_NAMED_VALUES(DecodeMode, {"teacher_forced", DecodeMode::kTeacherForced}, {"greedy", DecodeMode::kGreedy})
LENGEN_NAMED_VALUES(CheckpointChoice, {"last", CheckpointChoice::kLast}, {"best", CheckpointChoice::kBest})
LENGEN_NAMED_VALUES(AttentionKernel, {"fused", AttentionKernel::kFused}, {"dense", AttentionKernel::kDense})

struct TaskConfig {
  std::string name = "copy";
  TaskParams params;    // task-specific, e.g. {"vocab": 32}; validated by the task
  int64_t len_min = 8;  // training source lengths are uniform in [len_min, len_max]
  int64_t len_max = 16;
  uint64_t seed = 1;  // fixes the task's own draws (mqmtar vocabulary) and the data streams
};

struct AttentionConfig {
  std::string normalizer = "softmax";  // normalizer_choices() (attention_choices.h)
  double alpha = 1.5;                  // entmax: fixed alpha, or the initial alpha when learned
  bool learn_alpha = false;            // entmax: per-head learned alpha (Correia et al. 2019)
  int64_t topk = 32;                   // topk: number of keys kept
  std::string scaling = "none";        // scaling_choices() (attention_choices.h)
  double scaling_delta = 1.0;          // learned/asentmax: delta
  double scaling_gamma_range = 2.0;    // asentmax: r in gamma = r * tanh(...)
  bool scaling_bias = true;            // asentmax: bias in the beta/gamma projections
  double scaling_init_std = 0.02;      // asentmax: projection weight init std (0 = zero init)
  std::string positions = "nape";      // position_choices() (attention_choices.h)
  double rope_base = 10000.0;
  int64_t alibi_heads = -1;  // nape: number of ALiBi heads (-1 = heads / 2: nape_alibi_heads)
  int64_t window = 64;       // window: keys each query sees, itself included
  AlibiSlopes alibi_slopes = AlibiSlopes::kLinear;
};

// The ALiBi heads of nape: model.attention.alibi_heads, or half the heads when it is -1.
inline int64_t nape_alibi_heads(int64_t alibi_heads, int64_t heads) {
  return alibi_heads < 0 ? heads / 2 : alibi_heads;
}

struct ModelConfig {
  int64_t layers = 2;
  int64_t d_model = 64;
  int64_t heads = 4;
  int64_t d_head = 16;
  int64_t d_mlp = 256;
  double init_std = 0.02;
  int64_t prefill_chunk = 512;  // queries per chunk when evaluating long sequences
  AttentionConfig attention;
};

struct TrainConfig {
  int64_t steps = 3000;
  int64_t batch_size = 32;
  double lr = 1e-3;
  int64_t warmup = 300;
  LrSchedule schedule = LrSchedule::kCosine;
  double min_lr_ratio = 0.0;  // final lr = lr * min_lr_ratio
  double beta1 = 0.9;
  double beta2 = 0.99;
  double weight_decay = 0.0;
  double grad_clip = 1.0;  // 0 disables clipping
  uint64_t seed = 1;       // model init and batch order
  DeviceChoice device = DeviceChoice::kCpu;
  TrainDtype dtype = TrainDtype::kFloat32;
  int64_t threads = 1;  // LibTorch intra-op threads
  int64_t log_every = 50;
  int64_t eval_every = 500;  // in-distribution validation
  int64_t val_samples = 256;
  int64_t checkpoint_every = 500;
  int64_t keep_checkpoints = 2;
};

struct EvalConfig {
  std::vector<int64_t> lengths;  // source lengths; empty = 1x,2x,4x,8x the longest training length
  int64_t samples = 200;         // per length
  // Lengths of at least long_from tokens take long_samples samples (0 = off): at 1000x the
  // training length one sample costs thousands of short ones.
  int64_t long_from = 0;
  int64_t long_samples = 0;
  int64_t batch_size = 32;
  // Most tokens (sequences x their length) in one evaluation batch: at long lengths a batch holds
  // fewer sequences, at least one, so that memory stays that of one long sequence.
  int64_t batch_tokens = 65536;
  DecodeMode decode = DecodeMode::kTeacherForced;
  double decode_cap = 2.2;  // greedy: total length cap as a multiple of the source length
  CheckpointChoice checkpoint = CheckpointChoice::kLast;
  bool attention_stats = true;
  AttentionKernel attention_kernel = AttentionKernel::kFused;
  int64_t attention_on_target_samples = 32;  // per length; 0 = not measured
};

struct Config {
  std::string description;
  TaskConfig task;
  ModelConfig model;
  TrainConfig train;
  EvalConfig eval;
};

}  // namespace lengen
