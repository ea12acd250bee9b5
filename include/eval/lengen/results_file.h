#pragma once
// RUN/results.json as one type: evaluation writes it (lengen/evaluation.h), the report reads it
// (lengen/report.h). Layout:
//   {"task", "train_len_min", "train_len_max", "seed", "run_id" (when the run folder has one),
//    "trained_with": {"task": ..., "train": ..., "model": ...},
//    "method": {normalizer, scaling, positions},
//    "results": {decode: {length: entry}}, "results_on_files": {decode: {length: entry}}}
// Results on generated data and on --data files are kept apart, so one never replaces the other
// at the same length. Keys lengen does not know, at the top or in an entry, are read and written
// back as they were: a user's notes survive the next evaluation.
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

// Attention on the target (lengen/attention_on_target.h) of one layer: per head, and its best
// head and mean over heads.
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

// The keys of "trained_with" that may differ from the run's config.json while its results stay the
// run's: a resume grows train.steps, and threads, device and the evaluation's query chunks leave
// the trained model alone.
const std::vector<std::string>& trained_with_keys_free_to_change();

// The checkpoint an entry was measured with.
struct ModelRecord {
  std::string checkpoint;  // its path
  int64_t step = 0;
  std::string weights_hash;
  // The train.steps it was trained under and from which step ("400@0", or "200@0,400@150" for a
  // run resumed with more steps); "" in files written without it.
  std::string schedule;
  // What the checkpoint was trained on: "generated", or "files HASH" (the training files' content
  // hash), from the checkpoint itself; "" in files written without it.
  std::string trained_on;
  // The fingerprint read with the record ("record_hash"); "" in files written without it. Every
  // write stores a fresh one, made by entry_record_hash.
  std::string record_hash = {};
  // The run whose evaluation wrote it (the results file's run_id then): an entry of another run
  // pasted into a results file keeps its own. "" in files written without it.
  std::string run_id = {};
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
  double loss = 0.0;
  std::optional<AttentionSummary> attention;           // absent when statistics were off
  std::optional<TargetAttention> attention_on_target;  // absent when not measured
  std::string checkpoint;                              // file name of the checkpoint
  int64_t step = 0;
  std::optional<ModelRecord> model;
  // Greedy results: the eval.decode_cap that bounded the decoding (a lower cap cuts long answers
  // short, so results under two caps are two measurements); absent in teacher-forced entries and
  // in files written without it.
  std::optional<double> decode_cap;
  nlohmann::json data;  // where the samples come from (EvalSet::data); null when not recorded
  // Keys lengen does not write (a user's notes), at any depth, kept as read: JSON pointer ->
  // value (json_notes.h). Outside record_hash.
  nlohmann::json extra = nlohmann::json::object();

  // A metric by name: "exact_match", "token_accuracy", "loss", "nonzero_per_query", "entropy",
  // or "attention_on_target/LAYER/best" (or "/mean"); nullopt where the entry has none.
  std::optional<double> metric(const std::string& name) const;
};

// The user's notes on `entry` that writing it moves to its top level, their place gone (a
// re-measured entry without attention statistics), as "WHERE -> KEY" (put_notes_back).
std::vector<std::string> notes_moved_on_write(const ResultEntry& entry);

// A fingerprint of everything lengen writes in an entry (its numbers, decode, model and data
// records; not the keys it does not know), stored as its model.record_hash: an entry edited by
// hand (a schedule, a checkpoint path, a metric, its decode) no longer matches it.
std::string entry_record_hash(const ResultEntry& entry);

// decode -> length -> entry
using ResultsByDecode = std::map<std::string, std::map<int64_t, ResultEntry>>;

struct ResultsFile {
  std::string task;
  int64_t train_len_min = 0;
  int64_t train_len_max = 0;
  uint64_t seed = 0;
  // The id of the run folder that wrote it (its .lengen_run marker): a results.json linked or
  // copied into another run is told apart from the run's own. Empty in files written without one.
  std::string run_id;
  // The task, train and model sections of the config the evaluated checkpoint was trained with
  // (the model section absent in files written without it; checked
  // by the evaluation): the report refuses a config.json that says otherwise (edited since, or a
  // copy of a run with an edited config.json). Null in files written without it.
  nlohmann::json trained_with;
  Method method;
  ResultsByDecode results;           // on data generated from the task's evaluation seeds
  ResultsByDecode results_on_files;  // on --data files
  // Keys lengen does not write (a user's notes) outside the results sections, at any depth, kept
  // as read: JSON pointer -> value (json_notes.h).
  nlohmann::json extra = nlohmann::json::object();
  // The fingerprint read with the file ("record_hash": of the fields above but the results, see
  // results_file_hash); "" in files written without it. Every write stores a fresh one.
  std::string record_hash;
};

// A fingerprint of what a results file says of its run (task, training lengths, seed, run id,
// trained_with and method): a file whose label was edited by hand no longer matches it.
std::string results_file_hash(const ResultsFile& results);

// The first entry (of results, then results_on_files) measured past `steps`, or nullptr: results
// of a copy of the run that trained further than its train.steps.
const ResultEntry* entry_past_steps(const ResultsFile& file, int64_t steps);

// What a model trained on, as results.json and the report name it, from a training data record
// (a run's training_data.json, or a checkpoint's copy of it): null is "generated", a record is
// "files HASH"; "" for anything else (no record known).
std::string training_data_label(const nlohmann::json& record);

nlohmann::json to_json(const ResultsFile& results);
nlohmann::json to_json(const ResultEntry& entry);
nlohmann::json to_json(const TargetAttention& target);

// `source` names the file in the UserError a malformed one throws ("SOURCE: not a lengen results
// file (...)").
ResultsFile results_file_from_json(const nlohmann::json& json, const std::string& source);

// A missing, unreadable or malformed file throws UserError naming it.
ResultsFile read_results_file(const std::string& path);
// Written to a temporary file and renamed: a reader never sees half a file.
void write_results_file(const std::string& path, const ResultsFile& results);

}  // namespace lengen
