// Runs -> per-method tables of mean ± std over runs, as markdown and CSV.
#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "lengen/attention_choices.h"
#include "lengen/comparable_config.h"
#include "lengen/config.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"
#include "lengen/report.h"
#include "lengen/run_folder.h"
#include "lengen/run_record.h"
#include "lengen/sweep_manifest.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// A config as "key.path" -> its value's JSON text (strings unquoted), for comparing runs.
void flatten(const nlohmann::json& value, const std::string& path, std::map<std::string, std::string>& out) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) flatten(child, path.empty() ? key : path + "." + key, out);
  } else {
    out[path] = value.is_string() ? value.get<std::string>() : value.dump();
  }
}

// Keys on which runs of one group may differ: seeds (what the mean and std are over), the
// method (grouped on its own), and settings that leave the trained model alone.
bool averaged_over(const std::string& key) {
  for (const char* prefix :
       {"train.seed", "task.seed", "train.threads", "train.device", "description",
        "model.attention.normalizer", "model.attention.scaling", "model.attention.positions",
        // How often a run logs and checkpoints, how many checkpoints it keeps and how evaluation
        // chunks its queries leave the trained model and its results alone (resumes are bitwise).
        "train.log_every", "train.checkpoint_every", "train.keep_checkpoints", "model.prefill_chunk"}) {
    if (key == prefix) return true;
  }
  return key.rfind("eval.", 0) == 0;
}

// "" when every entry was measured with one checkpoint, else "step 200 at 64, 128; step 400 at
// 256" (per decode mode, in the order of the steps).
std::string mixed_checkpoints(const ResultsByDecode& results) {
  std::map<std::pair<int64_t, std::string>, std::vector<int64_t>> lengths_by_model;
  for (const auto& [decode, by_length] : results) {
    for (const auto& [length, entry] : by_length) {
      const std::string hash = entry.model ? entry.model->weights_hash : entry.checkpoint;
      lengths_by_model[{entry.step, hash}].push_back(length);
    }
  }
  if (lengths_by_model.size() < 2) return "";
  std::string text;
  for (const auto& [model, lengths] : lengths_by_model) {
    std::set<int64_t> unique(lengths.begin(), lengths.end());
    text += (text.empty() ? "" : "; ") + fmt::format("step {} at {}", model.first, fmt::join(unique, ", "));
  }
  return text;
}

// Which checkpoint a run's results come from, as the report groups by it: "best", or "step N"
// for a step checkpoint. Seeds evaluated alike share it; a run evaluated at its best checkpoint,
// or one interrupted and then evaluated, does not share it with runs evaluated at their last.
std::string checkpoint_kind(const ResultsByDecode& results) {
  std::set<std::string> kinds;
  for (const auto& [decode, by_length] : results) {
    for (const auto& [length, entry] : by_length) {
      kinds.insert(fs::path(entry.checkpoint).filename() == "best.pt" ? "best"
                                                                      : fmt::format("step {}", entry.step));
    }
  }
  return fmt::format("{}", fmt::join(kinds, " and "));
}

// "" when every greedy entry was decoded under one eval.decode_cap, else "1.5 at 4; 2.2 at 8, 16".
std::string mixed_decode_caps(const ResultsByDecode& results) {
  std::map<double, std::set<int64_t>> lengths_by_cap;
  for (const auto& [decode, by_length] : results) {
    for (const auto& [length, entry] : by_length) {
      if (entry.decode_cap) lengths_by_cap[*entry.decode_cap].insert(length);
    }
  }
  if (lengths_by_cap.size() < 2) return "";
  std::string text;
  for (const auto& [cap, lengths] : lengths_by_cap)
    text += (text.empty() ? "" : "; ") + fmt::format("{:g} at {}", cap, fmt::join(lengths, ", "));
  return text;
}

// The schedule histories of the checkpoints behind `results` ("400@0"; "200@0,400@150" for a
// model resumed with more steps): a model trained under another learning-rate schedule is not
// another seed of one trained straight through.
std::string schedule_kind(const ResultsByDecode& results) {
  std::set<std::string> kinds;
  for (const auto& [decode, by_length] : results) {
    for (const auto& [length, entry] : by_length) {
      if (entry.model && !entry.model->schedule.empty()) kinds.insert(entry.model->schedule);
    }
  }
  return fmt::format("{}", fmt::join(kinds, " and "));
}

// The eval.decode_cap values behind a run's greedy results ("2.2"; "" where none is recorded):
// greedy decoding under a lower cap cuts long answers short, another measurement.
std::string decode_cap_kind(const ResultsByDecode& results) {
  std::set<std::string> kinds;
  for (const auto& [decode, by_length] : results) {
    for (const auto& [length, entry] : by_length) {
      if (entry.decode_cap) kinds.insert(fmt::format("{:g}", *entry.decode_cap));
    }
  }
  return fmt::format("{}", fmt::join(kinds, " and "));
}

template <typename T>
void append(std::vector<T>& to, std::vector<T> more) {
  for (T& one : more) to.push_back(std::move(one));
}

struct ReadRun {
  RunResults run;
  // Flattened: the config.json as trained, and what the results say of the model (checkpoint,
  // schedule, data, ...).
  std::map<std::string, std::string> config;
  bool has_config = false;  // whether the run has a config.json
};

// A config.json, flattened, as the model was trained (comparable_config_json), so that runs of
// one model read alike; each key training does not read is "-" (unread_config_keys), which
// differs from nothing. A file that is no valid config is flattened as it is.
std::map<std::string, std::string> flattened_as_trained(const nlohmann::json& saved) {
  std::map<std::string, std::string> flat;
  Config config;
  try {
    config = config_from_json(saved);
  } catch (const UserError&) {
    flatten(saved, "", flat);
    return flat;
  }
  flatten(comparable_config_json(config), "", flat);
  for (const std::string& key : unread_config_keys(config)) flat[key] = "-";
  return flat;
}

// The run's config as its results were trained: config.json, with the sections results.json
// records of the evaluated model (trained_with) laid over it (a run resumed since under more
// train.steps is grouped by the model measured); without config.json, trained_with alone, and
// without both what results.json says of the task and training lengths.
ReadRun run_config(const std::string& name, const std::string& results_path, const ResultsFile& file) {
  ReadRun read;
  read.run.name = printable(name);  // a folder name with a newline would break the page's lines
  read.run.dir = fs::path(results_path).parent_path().string();
  read.run.group.method = file.method;
  read.run.train_len_max = file.train_len_max;
  const fs::path config = fs::path(read.run.dir) / "config.json";
  nlohmann::json saved = fs::exists(config) ? read_json_file(config.string()) : nlohmann::json();
  if (!saved.is_null()) config_from_json(saved, config.string());
  const auto& trained_with = file.trained_with;
  if (trained_with.is_object()) {
    if (saved.is_null() && trained_with.contains("task") && trained_with.contains("train") &&
        trained_with.contains("model"))
      saved = trained_with;
    else if (!saved.is_null())
      saved.merge_patch(trained_with);
  }
  read.has_config = !saved.is_null();
  if (read.has_config) {
    read.config = flattened_as_trained(saved);
  } else {
    read.config["task.name"] = file.task;
    read.config["task.len_max"] = std::to_string(file.train_len_max);
  }
  return read;
}

// What the results of `read` say of the model measured: what it trained on, its checkpoint,
// schedule and decode cap, as keys that keep unlike runs apart.
void label_by_results(ReadRun& read, const std::string& decode) {
  RunResults& run = read.run;
  ResultsByDecode shown = run.results;  // the decode mode reported labels the run
  if (!decode.empty()) {
    for (auto it = shown.begin(); it != shown.end();) it = it->first == decode ? std::next(it) : shown.erase(it);
  }
  run.mixed_checkpoints = mixed_checkpoints(shown);
  run.mixed_decode_caps = mixed_decode_caps(shown);
  std::set<std::string> trained_on;
  for (const auto& [mode, by_length] : run.results) {
    for (const auto& [length, entry] : by_length) {
      if (entry.model && !entry.model->trained_on.empty()) trained_on.insert(entry.model->trained_on);
    }
  }
  if (trained_on.empty()) {
    const auto record = read_run_record(run.dir);
    trained_on.insert(training_data_label(record ? record->training_data : nlohmann::json()));
  }
  read.config["data"] = fmt::format("{}", fmt::join(trained_on, " and "));
  read.config["checkpoint"] = checkpoint_kind(shown);
  read.config["schedule"] = schedule_kind(shown);
  read.config["decode_cap"] = decode_cap_kind(shown);
  // Validation picks best.pt and nothing else: results of step checkpoints do not depend on it.
  if (read.config["checkpoint"].find("best") == std::string::npos) {
    for (const char* key : {"train.eval_every", "train.val_samples"}) {
      if (read.config.count(key) > 0) read.config[key] = "-";
    }
  }
}

// One run's results: on generated data, one entry; on --data files, one entry per data folder it
// was evaluated on, labelled by the folder (test_data).
std::vector<ReadRun> read_run(const std::string& name, const std::string& results_path, bool on_files,
                              const std::string& decode) {
  ResultsFile file = read_results_file(results_path);
  const ReadRun base = run_config(name, results_path, file);
  std::vector<ReadRun> read;
  if (!on_files) {
    read.push_back(base);
    read.back().run.results = std::move(file.results);
  }
  for (auto& [folder, results] : on_files ? file.results_on_files : ResultsByFolder{}) {
    read.push_back(base);
    read.back().run.results = std::move(results);
    read.back().config["test_data"] = folder;
  }
  if (read.empty()) read.push_back(base);  // no results of this kind: named by collect_runs
  for (ReadRun& one : read) label_by_results(one, decode);
  return read;
}

// Runs that repeat an earlier one: the same config on every key that shapes the trained model,
// seeds included (a copy of a run folder, or one config trained twice). lengen trains a config
// the same way every time, so a repeat is one measurement twice: it is taken out of the tables,
// named in `repeats` as "NAME (a repeat of FIRST: same config and seeds)", instead of counting
// as another seed. Runs without a config.json are never taken for repeats.
std::vector<ReadRun> without_repeats(std::vector<ReadRun> read, std::vector<std::string>& repeats) {
  const auto model_keys = [](const ReadRun& run) {
    std::map<std::string, std::string> keys;
    for (const auto& [key, value] : run.config) {
      if (key == "train.seed" || key == "task.seed" || !averaged_over(key)) keys.emplace(key, value);
    }
    return keys;
  };
  std::vector<ReadRun> kept;
  for (ReadRun& run : read) {
    const bool has_config = run.config.count("train.seed") > 0;
    const auto first = std::find_if(kept.begin(), kept.end(), [&](const ReadRun& earlier) {
      return has_config && earlier.config.count("train.seed") > 0 &&
             earlier.run.group.method == run.run.group.method && model_keys(earlier) == model_keys(run);
    });
    if (first != kept.end()) {
      // One measurement of one model: lengths only the repeat measured are the first's too (a
      // sweep's grid over eval settings trains the same model twice).
      std::set<int64_t> added;
      for (const auto& [decode, by_length] : run.run.results) {
        for (const auto& [length, entry] : by_length) {
          if (first->run.results[decode].emplace(length, entry).second) added.insert(length);
        }
      }
      std::error_code error;
      if (fs::equivalent(first->run.dir, run.run.dir, error)) {
        repeats.push_back(run.run.name + " (the run folder " + first->run.name + " again, through a link)");
        continue;
      }
      repeats.push_back(run.run.name + " (a repeat of " + first->run.name + ": same config and seeds" +
                        (added.empty() ? std::string()
                                       : fmt::format("; its lengths {} are shown in {}'s row",
                                                     fmt::join(added, ", "), first->run.name)) +
                        ")");
    } else {
      kept.push_back(std::move(run));
    }
  }
  return kept;
}

// Each run's variant: the keys outside averaged_over whose values are not the same in every run.
// A key a run does not read ("-": alpha under softmax) differs from nothing and labels nothing.
// A run without a config.json (deleted) is compared on what its results say (checkpoint, data,
// ...) only; beside runs with one, its variant says its config is unknown, which keeps it out of
// their groups.
std::vector<RunResults> with_variants(std::vector<ReadRun> read) {
  const bool some_config =
      std::any_of(read.begin(), read.end(), [](const ReadRun& run) { return run.has_config; });
  std::set<std::string> differing;
  for (const ReadRun& a : read) {
    for (const ReadRun& b : read) {
      for (const auto* pair : {&a.config, &b.config}) {
        for (const auto& [key, value] : *pair) {
          if (averaged_over(key) || differing.count(key) > 0) continue;
          const auto in_a = a.config.find(key), in_b = b.config.find(key);
          const bool in_both = in_a != a.config.end() && in_b != b.config.end();
          const bool same = in_both
                                ? in_a->second == in_b->second || in_a->second == "-" || in_b->second == "-"
                                : !(a.has_config && b.has_config);
          if (!same) differing.insert(key);
        }
      }
    }
  }
  std::vector<RunResults> runs;
  for (ReadRun& one : read) {
    std::string variant = some_config && !one.has_config ? "config unknown (no config.json)" : "";
    for (const std::string& key : differing) {
      const auto found = one.config.find(key);
      if (found != one.config.end() && found->second == "-") continue;
      // Nor does a key the run's config lacks when its config is unknown, or a task parameter its
      // task does not have (its parameters are resolved, so every one it has is there).
      if (found == one.config.end() && (!one.has_config || key.rfind("task.params.", 0) == 0)) continue;
      variant +=
          (variant.empty() ? "" : ", ") + key + "=" + (found == one.config.end() ? "?" : found->second);
    }
    one.run.group.variant = variant;
    runs.push_back(std::move(one.run));
  }
  return runs;
}

std::string multiple_text(int64_t length, int64_t train_len_max) {
  if (train_len_max <= 0) return "";
  return fmt::format("{:g}x", static_cast<double>(length) / static_cast<double>(train_len_max));
}

bool is_percent(const std::string& metric) {
  return metric == "exact_match" || metric == "token_accuracy" || metric == "answer_accuracy";
}

}  // namespace

std::string method_label(const Method& method) {
  const std::string parts = method.normalizer + " + " + method.scaling;
  const std::string name = method_common_name(method.normalizer, method.scaling);
  return (name.empty() ? parts : name + " (" + parts + ")") + " / " + method.positions;
}

std::string group_label(const RunGroup& group) {
  return method_label(group.method) + (group.variant.empty() ? "" : ", " + group.variant);
}

std::vector<RunResults> collect_runs(const std::string& dir, bool on_files,
                                     std::vector<std::string>* left_out, const std::string& decode) {
  std::vector<ReadRun> runs;
  std::vector<std::string> repeated;
  const fs::path root(dir);
  if (fs::exists(root / kSweepManifestName)) {
    const nlohmann::json manifest = read_sweep_manifest(dir);
    std::set<std::string> read;
    for (const auto& entry : manifest.at("runs")) {
      const std::string name = entry.at("name").get<std::string>();
      // A run listed twice (sweep.json edited by hand) is one run, read once (runs_listed_twice).
      if (!read.insert(name).second) continue;
      const fs::path results = root / name / "results.json";
      if (fs::exists(results)) append(runs, read_run(name, results.string(), on_files, decode));
    }
  } else if (fs::exists(root / "results.json")) {
    append(runs, read_run(root.filename().string(), (root / "results.json").string(), on_files, decode));
  } else if (fs::is_directory(root)) {
    std::vector<fs::path> folders;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (fs::exists(entry.path() / "results.json")) folders.push_back(entry.path());
    }
    std::sort(folders.begin(), folders.end());
    for (const auto& folder : folders) {
      append(runs, read_run(folder.filename().string(), (folder / "results.json").string(), on_files, decode));
    }
  }
  if (runs.empty() && fs::exists(root / kSweepManifestName)) {
    // A sweep stopped before its first evaluation has started runs here; a sweep.json copied
    // from another sweep lists runs that are not here.
    const nlohmann::json manifest = read_sweep_manifest(dir);
    std::set<std::string> listed, started;  // a name listed twice is one run
    for (const auto& entry : manifest.at("runs")) {
      const std::string name = entry.at("name").get<std::string>();
      listed.insert(name);
      std::error_code error;
      if (fs::is_directory(root / name, error)) started.insert(name);
    }
    if (!started.empty()) {
      throw UserError(dir + " holds no evaluated run yet: " + std::to_string(started.size()) + " of the " +
                      std::to_string(listed.size()) + " runs its " + kSweepManifestName +
                      " lists are started, none evaluated (a sweep stopped before its first run ended? run "
                      "the sweep again to resume it, or lengen eval DIR/NAME)");
    }
    throw UserError(dir + " holds no evaluated run of the runs its " + kSweepManifestName +
                    " lists (no NAME/results.json for any of them; a sweep.json of another sweep?)");
  }
  if (runs.empty()) {
    // Runs a level or more down (a folder of sweeps) are named: report one of them.
    const std::vector<std::string> below = folders_of_runs_below(dir);
    throw UserError(dir + " holds no evaluated run (no results.json)" +
                    (below.empty()
                         ? std::string()
                         : "; folders of runs below it: " + fmt::format("{}", fmt::join(below, ", "))));
  }
  // A run evaluated only on the other kind of data has no row here: it is named, not shown as a
  // row of "-" under an empty label.
  std::vector<ReadRun> evaluated;
  for (ReadRun& run : runs) {
    if (!run.run.results.empty()) {
      evaluated.push_back(std::move(run));
    } else {
      repeated.push_back(run.run.name + (on_files
                                             ? " (no results on --data files)"
                                             : " (results on --data files only: lengen report --on-files)"));
    }
  }
  if (evaluated.empty()) {
    throw UserError(dir + " holds no run evaluated on " + (on_files ? "--data files" : "generated data") +
                    (on_files ? "" : " (results on --data files: lengen report --on-files)"));
  }
  // A run without results of the decode mode reported is in no row, and labels none (its checkpoint
  // or decode cap would tell the rows apart); kept when no run has them, for the caller to say so.
  const auto has_decode = [&](const ReadRun& run) { return run.run.results.count(decode) > 0; };
  if (!decode.empty() && std::any_of(evaluated.begin(), evaluated.end(), has_decode)) {
    std::vector<ReadRun> with_decode;
    for (ReadRun& run : evaluated) {
      if (has_decode(run))
        with_decode.push_back(std::move(run));
      else
        repeated.push_back(run.run.name + " (no " + decode + " results)");
    }
    evaluated = std::move(with_decode);
  }
  std::vector<ReadRun> kept = without_repeats(std::move(evaluated), repeated);
  if (left_out != nullptr) *left_out = std::move(repeated);
  return with_variants(std::move(kept));
}

std::vector<std::string> runs_left_out(const std::string& dir) {
  std::vector<std::string> left_out;
  const fs::path root(dir);
  if (!fs::exists(root / kSweepManifestName)) {
    // A folder of runs: a run folder without results (in training, stopped, diverged) is named.
    if (fs::exists(root / "results.json")) return left_out;
    std::vector<std::string> unevaluated;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(root, error)) {
      if (RunFolder(entry.path().string()).is_lengen_run() && !fs::exists(entry.path() / "results.json"))
        unevaluated.push_back(printable(entry.path().filename().string()) +
                              " (a run folder without results.json)");
    }
    std::sort(unevaluated.begin(), unevaluated.end());
    return unevaluated;
  }
  const nlohmann::json manifest = read_sweep_manifest(dir);  // kept: the loop reads into it
  // Run folders the sweep does not list (a run trained into the folder by hand, a copy) are not
  // the sweep's: named, not reported.
  std::set<std::string> listed;
  for (const auto& entry : manifest.at("runs")) listed.insert(entry.at("name").get<std::string>());
  std::vector<std::string> unlisted;
  for (const auto& entry : fs::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (listed.count(name) == 0 && fs::exists(entry.path() / "results.json")) unlisted.push_back(name);
  }
  std::sort(unlisted.begin(), unlisted.end());
  for (const std::string& name : unlisted) {
    left_out.push_back(name + " (a run folder " + kSweepManifestName + " does not list: lengen report " +
                       (root / name).string() + ")");
  }
  std::set<std::string> named;  // a run listed twice is named once
  for (const auto& entry : manifest.at("runs")) {
    const std::string name = entry.at("name").get<std::string>();
    if (fs::exists(root / name / "results.json") || !named.insert(name).second) continue;
    const fs::path failure = root / (name + kSweepFailureSuffix);
    if (fs::exists(failure)) {
      std::ifstream in(failure);
      std::string first_line;
      std::getline(in, first_line);
      left_out.push_back(name + " (failed: " + first_line + "; see " + failure.filename().string() + ")");
    } else if (fs::is_directory(root / name)) {
      left_out.push_back(name + " (not evaluated: no results.json yet)");
    } else {
      left_out.push_back(name + " (no run folder)");
    }
  }
  return left_out;
}

std::vector<std::string> runs_listed_twice(const std::string& dir) {
  std::vector<std::string> twice;
  const fs::path root(dir);
  if (!fs::exists(root / kSweepManifestName)) return twice;
  const nlohmann::json manifest = read_sweep_manifest(dir);  // kept: the loop reads into it
  std::set<std::string> read;
  for (const auto& entry : manifest.at("runs")) {
    const std::string name = entry.at("name").get<std::string>();
    if (!read.insert(name).second && std::find(twice.begin(), twice.end(), name) == twice.end())
      twice.push_back(name);
  }
  return twice;
}

std::vector<std::string> folders_of_runs_below(const std::string& dir) {
  std::vector<std::string> folders;
  const fs::path root(dir);
  if (fs::exists(root / "results.json")) return folders;
  // In a sweep's folder, its own runs are read (or named by runs_left_out).
  std::set<std::string> listed;
  if (fs::exists(root / kSweepManifestName)) {
    const nlohmann::json manifest = read_sweep_manifest(dir);  // kept: the loop reads into it
    for (const auto& entry : manifest.at("runs")) listed.insert(entry.at("name").get<std::string>());
  }
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(root, error)) {
    if (!entry.is_directory(error) || RunFolder(entry.path().string()).is_lengen_run() ||
        fs::exists(entry.path() / "results.json") || listed.count(entry.path().filename().string()) > 0)
      continue;
    // Runs at any depth below it (a few levels: a sweep folder inside a folder of projects).
    constexpr int kDepth = 4;
    bool holds_runs = fs::exists(entry.path() / kSweepManifestName);
    for (auto inner = fs::recursive_directory_iterator(entry.path(), error);
         !holds_runs && !error && inner != fs::recursive_directory_iterator(); inner.increment(error)) {
      if (inner.depth() >= kDepth) inner.disable_recursion_pending();
      holds_runs = inner->path().filename() == "results.json";
    }
    if (holds_runs)
      folders.push_back(printable(entry.path().filename().string()) + " (lengen report " +
                        printable(entry.path().string()) + ")");
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

int64_t common_train_len_max(const std::vector<RunResults>& runs) {
  for (const auto& run : runs) {
    if (run.train_len_max != runs.front().train_len_max) return 0;
  }
  return runs.empty() ? 0 : runs.front().train_len_max;
}

std::string default_decode(const std::vector<RunResults>& runs) {
  for (const auto& run : runs) {
    if (run.results.count(name_of(DecodeMode::kTeacherForced)) > 0)
      return name_of(DecodeMode::kTeacherForced);
  }
  return name_of(DecodeMode::kGreedy);
}

Summary summarize_values(const std::vector<double>& values) {
  Summary summary;
  summary.n = static_cast<int64_t>(values.size());
  if (values.empty()) return summary;
  for (double value : values) summary.mean += value;
  summary.mean /= static_cast<double>(values.size());
  if (values.size() > 1) {
    double squares = 0.0;
    for (double value : values) squares += (value - summary.mean) * (value - summary.mean);
    summary.std = std::sqrt(squares / static_cast<double>(values.size() - 1));
  }
  return summary;
}

MetricTable metric_table(const std::vector<RunResults>& runs, const std::string& decode,
                         const std::string& metric) {
  MetricTable table;
  table.metric = metric;
  std::set<int64_t> lengths;
  // values[group][length]
  std::vector<std::map<int64_t, std::vector<double>>> values;
  const double scale = is_percent(metric) ? 100.0 : 1.0;
  for (const auto& run : runs) {
    auto found = std::find(table.groups.begin(), table.groups.end(), run.group);
    const size_t m = static_cast<size_t>(found - table.groups.begin());
    if (found == table.groups.end()) {
      table.groups.push_back(run.group);
      values.emplace_back();
    }
    const auto by_decode = run.results.find(decode);
    if (by_decode == run.results.end()) continue;
    for (const auto& [length, entry] : by_decode->second) {
      const std::optional<double> value = entry.metric(metric);
      if (!value) continue;
      lengths.insert(length);
      values[m][length].push_back(scale * *value);
    }
  }
  table.lengths.assign(lengths.begin(), lengths.end());
  for (const auto& by_length : values) {
    std::vector<std::optional<Summary>> row;
    for (int64_t length : table.lengths) {
      auto it = by_length.find(length);
      row.push_back(it == by_length.end() ? std::nullopt
                                          : std::optional<Summary>(summarize_values(it->second)));
    }
    table.cells.push_back(std::move(row));
  }
  return table;
}

std::string summary_text(const std::optional<Summary>& cell, int digits, bool significant) {
  if (!cell) return "-";
  if (significant)
    return fmt::format("{:.{}g} ± {:.{}g} (n={})", cell->mean, digits, cell->std, digits, cell->n);
  return fmt::format("{:.{}f} ± {:.{}f} (n={})", cell->mean, digits, cell->std, digits, cell->n);
}

std::string markdown_table(const MetricTable& table, int64_t train_len_max) {
  const int digits = is_percent(table.metric) ? 1 : 2;
  std::ostringstream out;
  out << "| method |";
  for (int64_t length : table.lengths) {
    const std::string multiple = multiple_text(length, train_len_max);
    out << " " << length << (multiple.empty() ? "" : " (" + multiple + ")") << " |";
  }
  out << "\n|---|";
  for (size_t i = 0; i < table.lengths.size(); ++i) out << "---|";
  out << "\n";
  for (size_t m = 0; m < table.groups.size(); ++m) {
    out << "| " << group_label(table.groups[m]) << " |";
    for (const auto& cell : table.cells[m]) out << " " << summary_text(cell, digits) << " |";
    out << "\n";
  }
  return out.str();
}

std::string csv_table(const MetricTable& table, int64_t train_len_max, const std::string& x_column) {
  const bool lengths = x_column == "length";
  std::ostringstream out;
  out << "method,normalizer,scaling,positions,variant," << x_column << (lengths ? ",multiple" : "")
      << ",mean,std,n\n";
  for (size_t m = 0; m < table.groups.size(); ++m) {
    const Method& method = table.groups[m].method;
    for (size_t l = 0; l < table.lengths.size(); ++l) {
      const auto& cell = table.cells[m][l];
      if (!cell) continue;
      out << '"' << group_label(table.groups[m]) << "\"," << method.normalizer << "," << method.scaling << ","
          << method.positions << ",\"" << table.groups[m].variant << "\"," << table.lengths[l] << ","
          << (lengths ? multiple_text(table.lengths[l], train_len_max) + "," : "")
          << fmt::format("{:.6g},{:.6g},{}", cell->mean, cell->std, cell->n) << "\n";
    }
  }
  return out.str();
}

}  // namespace lengen
