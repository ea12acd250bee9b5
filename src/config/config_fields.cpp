// The one list of config keys. Defaults are not repeated here: they are whatever a
// default-constructed Config holds (config.h).
#include <type_traits>

#include "config_field.h"
#include "lengen/attention_choices.h"
#include "lengen/data_record.h"
#include "lengen/named_entries.h"
#include "lengen/task.h"

namespace lengen::config {

namespace {

using nlohmann::json;

template <typename T>
constexpr ValueType value_type_of() {
  if constexpr (std::is_same_v<T, int64_t>) return ValueType::kInteger;
  if constexpr (std::is_same_v<T, uint64_t>) return ValueType::kUnsigned;
  if constexpr (std::is_same_v<T, double>) return ValueType::kNumber;
  if constexpr (std::is_same_v<T, bool>) return ValueType::kBoolean;
  if constexpr (std::is_same_v<T, std::string> || std::is_enum_v<T>) return ValueType::kString;
  if constexpr (std::is_same_v<T, std::vector<int64_t>>) return ValueType::kIntegerList;
  if constexpr (std::is_same_v<T, TaskParams>) return ValueType::kNumberMap;
}

template <typename T>
T from_json(const json& value) {
  if constexpr (std::is_same_v<T, int64_t>) {
    return *json_integer(value);
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return *json_unsigned(value);
  } else if constexpr (std::is_enum_v<T>) {
    return *value_named<T>(value.get<std::string>());  // value_problem() has checked the name
  } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
    std::vector<int64_t> list;
    for (const auto& element : value) list.push_back(*json_integer(element));
    return list;
  } else {
    return value.get<T>();
  }
}

template <typename T>
json to_json(const T& value) {
  if constexpr (std::is_enum_v<T>) return name_of(value);
  if constexpr (std::is_same_v<T, TaskParams>) return task_params_json(value);  // 96, not 96.0
  return value;
}

// A key of an enum type takes the names of its values (named_values.h) as its choices.
template <typename Access>
ConfigField field(const char* key, Access access, const std::string& meaning, Bounds bounds = {},
                  std::vector<std::string> choices = {}) {
  using T = std::decay_t<decltype(access(std::declval<Config&>()))>;
  if constexpr (std::is_enum_v<T>) choices = names_of<T>();
  return {key,
          value_type_of<T>(),
          meaning,
          bounds,
          std::move(choices),
          [access](const Config& config) { return to_json(access(config)); },
          [access](Config& config, const json& value) { access(config) = from_json<T>(value); }};
}

// The choice of a pluggable axis: its names and what each is come from the axis' choices
// (attention_choices.cpp).
template <typename Access, typename Entry>
ConfigField axis_field(const char* key, Access access, const std::string& meaning,
                       const std::vector<Entry>& entries) {
  std::string text = meaning;
  for (const Entry& entry : entries)
    text += (text == meaning ? ": " : "; ") + entry.name + " = " + entry.help;
  return field(key, access, text, {}, entry_names(entries));
}

// A parameter of a pluggable axis (the last part of its key), led by the names of the entries
// that read it: "entmax: the fixed alpha".
template <typename Access, typename Entry>
ConfigField parameter_field(const char* key, Access access, const std::vector<Entry>& entries,
                            const std::string& meaning, Bounds bounds = {},
                            std::vector<std::string> choices = {}) {
  const std::string parameter = std::string(key).substr(std::string(key).rfind('.') + 1);
  const std::string text = joined_names(names_reading(entries, parameter)) + ": " + meaning;
  return field(key, access, text, bounds, std::move(choices));
}

// Upper bounds far beyond any sensible run, so that a typo (1e15 samples, 100000 threads) ends
// in a clear error instead of an allocation failure or a machine that stops responding.
constexpr double kMaxLength = 1 << 20;
constexpr double kMaxCount = 1 << 20;
constexpr double kMaxThreads = 1024;
constexpr double kMaxModelSize = 1 << 16;  // a width or count of the model's parts
constexpr double kMaxSteps = 99999999;     // step_NNNNNNNN.pt

Bounds at_least(double low) { return {low, false, std::nullopt, false}; }
Bounds above(double low) { return {low, true, std::nullopt, false}; }
Bounds closed(double low, double high) { return {low, false, high, false}; }
Bounds half_open(double low, double high) { return {low, false, high, true}; }

}  // namespace

// KEY(a.b) gives both the key "a.b" and the accessor of config.a.b, so a key can never
// disagree with the member it names.
// clang-format off
#define KEY(path) #path, [](auto& config) -> auto& { return config.path; }
// clang-format on

namespace {

std::vector<ConfigField> task_fields() {
  return {
      field(KEY(task.name), "the task to learn", {}, task_names()),
      field(KEY(task.params),
            "task-specific numbers, e.g. {\"vocab\": 32}; each task's are listed under Task parameters"),
      field(KEY(task.len_min), "shortest training source length; lengths are uniform in [len_min, len_max]",
            closed(1, kMaxLength)),
      field(KEY(task.len_max), "longest training source length", closed(1, kMaxLength)),
      field(KEY(task.seed),
            "fixes the data streams and what a task draws once per split (mqmtar's vocabularies)"),
  };
}

std::vector<ConfigField> model_fields() {
  return {
      field(KEY(model.layers), "decoder blocks", closed(1, kMaxModelSize)),
      field(KEY(model.d_model), "width of the residual stream", closed(1, kMaxModelSize)),
      field(KEY(model.heads), "attention heads per layer", closed(1, kMaxModelSize)),
      field(KEY(model.d_head), "size of each head's queries, keys and values", closed(1, kMaxModelSize)),
      field(KEY(model.d_mlp), "hidden width of the gated MLP", closed(1, kMaxModelSize)),
      field(KEY(model.init_std), "standard deviation of the normal weight init", at_least(0)),
      field(KEY(model.prefill_chunk), "queries per chunk when evaluating long sequences (bounds memory)",
            at_least(1)),
  };
}

std::vector<ConfigField> attention_fields() {
  return {
      axis_field(KEY(model.attention.normalizer), "maps attention scores to weights", normalizer_choices()),
      // Past 4 the weights [(alpha-1) z - tau]^(1/(alpha-1)) are a near-hard choice whose float
      // weights and gradients degenerate (all-zero rows at 1e30, a non-finite loss from 64 on).
      parameter_field(KEY(model.attention.alpha), normalizer_choices(),
                      "the fixed alpha, or the initial alpha when learned (1 = softmax, 2 = sparsemax)",
                      closed(1, 4)),
      parameter_field(KEY(model.attention.learn_alpha), normalizer_choices(),
                      "learn one alpha per head (Correia et al. 2019)"),
      parameter_field(KEY(model.attention.topk), normalizer_choices(), "keys kept per query", at_least(1)),
      axis_field(KEY(model.attention.scaling), "length scaling of the queries", scaling_choices()),
      parameter_field(KEY(model.attention.scaling_delta), scaling_choices(),
                      "delta, the constant term of the factor"),
      parameter_field(KEY(model.attention.scaling_gamma_range), scaling_choices(),
                      "r in gamma = r * tanh(...)", above(0)),
      parameter_field(KEY(model.attention.scaling_bias), scaling_choices(),
                      "bias in the beta and gamma projections"),
      parameter_field(KEY(model.attention.scaling_init_std), scaling_choices(),
                      "projection weight init std (0 = zero init)", at_least(0)),
      axis_field(KEY(model.attention.positions), "position encoding", position_choices()),
      parameter_field(KEY(model.attention.rope_base), position_choices(), "frequency base", above(0)),
      parameter_field(KEY(model.attention.alibi_heads), position_choices(),
                      "number of ALiBi heads (-1 = heads / 2)", at_least(-1)),
      parameter_field(KEY(model.attention.alibi_slopes), position_choices(),
                      "ALiBi slopes, linear 1/(h+1) or exp 2^-h"),
      parameter_field(KEY(model.attention.window), position_choices(),
                      "keys each query sees, itself included", closed(1, kMaxLength)),
  };
}

std::vector<ConfigField> train_fields() {
  return {
      field(KEY(train.steps), "optimizer steps; checkpoint names hold 8 digits", closed(1, kMaxSteps)),
      field(KEY(train.batch_size), "sequences per step", closed(1, kMaxCount)),
      field(KEY(train.lr), "peak learning rate (AdamW)", above(0)),
      field(KEY(train.warmup), "steps of linear warmup; at most train.steps", at_least(0)),
      field(KEY(train.schedule), "learning rate decay after warmup"),
      field(KEY(train.min_lr_ratio), "final lr = lr * min_lr_ratio", closed(0, 1)),
      field(KEY(train.beta1), "AdamW beta1", half_open(0, 1)),
      field(KEY(train.beta2), "AdamW beta2", half_open(0, 1)),
      field(KEY(train.weight_decay), "AdamW decoupled weight decay", at_least(0)),
      field(KEY(train.grad_clip), "largest global gradient norm; 0 disables clipping", at_least(0)),
      // LibTorch's generator keeps the low 32 bits of a seed: a larger one would give the model of
      // a smaller seed under another name (2^32 + 1 is seed 1), counted as another seed.
      field(KEY(train.seed), "fixes the model init and the batch order; LibTorch's generator takes 32 bits",
            closed(0, 4294967295.0)),
      field(KEY(train.device), "where to run; auto = cuda when available"),
      field(KEY(train.dtype),
            "bfloat16: the training forward's matrix products in bf16 (autocast); weights, optimizer state, "
            "attention scores and evaluation stay float32"),
      field(KEY(train.threads), "threads of the matrix products (OpenBLAS) and of LibTorch's own ops; a run (and its resume) is bitwise the same at the same count, not across counts: the products and reductions sum in other orders", closed(1, kMaxThreads)),
      field(KEY(train.log_every), "steps between log lines", at_least(1)),
      field(KEY(train.eval_every), "steps between in-distribution validations", at_least(1)),
      field(KEY(train.val_samples), "samples in each in-distribution validation", closed(1, kMaxCount)),
      field(KEY(train.checkpoint_every), "steps between checkpoints", at_least(1)),
      field(KEY(train.keep_checkpoints), "most recent checkpoints kept on disk", at_least(1)),
  };
}

std::vector<ConfigField> eval_fields() {
  return {
      field(KEY(eval.lengths),
            "source lengths to evaluate, each once (a repeat is dropped); [] = 1x, 2x, 4x, 8x task.len_max",
            closed(1, kMaxLength)),
      field(KEY(eval.samples), "samples per length", closed(1, kMaxCount)),
      field(KEY(eval.long_from),
            "source length from which eval.long_samples applies instead of eval.samples; 0 = off (set both "
            "or neither of the two)",
            closed(0, kMaxLength)),
      field(KEY(eval.long_samples),
            "samples per length from eval.long_from on; 0 = off (set both or neither of the two)",
            closed(0, kMaxCount)),
      field(KEY(eval.batch_size), "sequences per evaluation batch", closed(1, kMaxCount)),
      field(KEY(eval.batch_tokens),
            "most tokens (sequences x their length) in one evaluation batch: longer sequences take fewer per "
            "batch, at least one, which bounds evaluation's memory at long lengths",
            at_least(1)),
      field(KEY(eval.decode), "teacher_forced: exact match in one pass; greedy: decode until EOS"),
      field(KEY(eval.decode_cap), "greedy: cap on the total length, as a multiple of the source length",
            above(0)),
      field(KEY(eval.checkpoint),
            "which checkpoint to evaluate; best = best validation exact match (the later on a tie)"),
      field(KEY(eval.attention_stats), "also record attention statistics per length"),
      field(KEY(eval.attention_kernel),
            "attention without grad on the CPU (evaluation, validation, decoding): fused computes each block "
            "of queries in a per-thread buffer, dense materializes each chunk's scores (the reference)"),
      field(KEY(eval.attention_on_target_samples),
            "samples per length whose attention on the answering keys is measured, each by one more forward "
            "pass; 0 = none",
            at_least(0)),
  };
}

}  // namespace

const std::vector<ConfigField>& config_fields() {
  static const std::vector<ConfigField> fields = [] {
    std::vector<ConfigField> all = {
        field(KEY(description),
              "free text about the experiment, kept in the run's config.json with what changed it: `[--set "
              "KEY=VALUE ...]`, or `[sweep run NAME]` after the sweep file's description (which heads its "
              "report)")};
    for (const auto section : {task_fields, model_fields, attention_fields, train_fields, eval_fields}) {
      for (ConfigField& one : section()) all.push_back(std::move(one));
    }
    return all;
  }();
  return fields;
}

#undef KEY

}  // namespace lengen::config
