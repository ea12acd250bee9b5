#pragma once
// RUN/results.json: evaluation writes it, the report reads it. Results on generated data and on
// each --data folder are kept apart, so one never replaces another at the same length.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace lengen {

// An attention variant: the three choices that name a method in tables and plots.
struct Method {
  std::string normalizer, scaling, positions;
  bool operator==(const Method& other) const {
    return normalizer == other.normalizer && scaling == other.scaling && positions == other.positions;
  }
};

// Means per query row of one layer's attention, per head.
struct LayerAttentionSummary {
  std::vector<double> nonzero_per_query;  // [H] keys with nonzero weight
  std::vector<double> entropy;            // [H] nats
};

// Attention statistics of one length: means over layers and heads, and per layer.
struct AttentionSummary {
  double nonzero_per_query = 0.0;
  double entropy = 0.0;
  std::vector<LayerAttentionSummary> layers;
};

// Attention on the target of one layer: per head, and its best head and mean over heads.
struct TargetAttentionLayer {
  std::vector<double> heads;
  int64_t best_head = 0;
  double best = 0.0;
  double mean = 0.0;
};

// Attention on the target of one length; `known` is false (with a note) for a task that names no
// key answering a target symbol.
struct TargetAttention {
  bool known = false;
  std::string note;
  int64_t samples = 0;
  int64_t queries = 0;
  std::vector<TargetAttentionLayer> layers;
};

// The checkpoint an entry was measured with.
struct ModelRecord {
  std::string checkpoint;  // its path
  int64_t step = 0;
  std::string weights_hash;
  std::string schedule;    // its schedule history (lengen/schedule_history.h)
  std::string trained_on;  // training_data_label of the run's record ("" when not written)
};

// One length scored in one decode mode.
struct ResultEntry {
  int64_t length = 0;
  std::string decode;  // "teacher_forced" or "greedy"
  int64_t samples = 0;
  double exact_match = 0.0;     // fraction of samples
  double token_accuracy = 0.0;  // fraction of target tokens
  int64_t exact = 0;
  int64_t tokens = 0;
  int64_t correct_tokens = 0;
  // Tasks whose targets hold several answers (mqmtar's queries): how many, and how many had every
  // symbol right; 0 (and absent from the file) for the others.
  int64_t answers = 0;
  int64_t correct_answers = 0;
  double loss = 0.0;
  std::optional<AttentionSummary> attention;           // absent when statistics were off
  std::optional<TargetAttention> attention_on_target;  // absent when not measured
  std::string checkpoint;                              // file name of the checkpoint
  int64_t step = 0;
  std::optional<ModelRecord> model;
  // Greedy results: the eval.decode_cap that bounded the decoding.
  std::optional<double> decode_cap;
  nlohmann::json data;  // where the samples come from (EvalSet::data); null when not recorded

  // A metric by name ("exact_match", "attention_on_target/LAYER/best", ...); nullopt if absent.
  std::optional<double> metric(const std::string& name) const;
};

// decode -> length -> entry
using ResultsByDecode = std::map<std::string, std::map<int64_t, ResultEntry>>;
// data folder (resolved_path of eval --data) -> its results
using ResultsByFolder = std::map<std::string, ResultsByDecode>;

struct ResultsFile {
  std::string task;
  int64_t train_len_min = 0;
  int64_t train_len_max = 0;
  uint64_t seed = 0;
  // The task, train and model config sections of the checkpoint's run; the report groups by them.
  nlohmann::json trained_with;
  Method method;
  ResultsByDecode results;           // on data generated from the task's evaluation seeds
  ResultsByFolder results_on_files;  // on --data files, per folder
};

// A run.json's training data as results.json names it: "generated" or "files HASH".
std::string training_data_label(const nlohmann::json& record);

nlohmann::json to_json(const ResultsFile& results);
nlohmann::json to_json(const ResultEntry& entry);
nlohmann::json to_json(const TargetAttention& target);

// UserError "SOURCE: not a lengen results file (...)" for a malformed one.
ResultsFile results_file_from_json(const nlohmann::json& json, const std::string& source);

ResultsFile read_results_file(const std::string& path);
void write_results_file(const std::string& path, const ResultsFile& results);

}  // namespace lengen
