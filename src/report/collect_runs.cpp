// Which runs a report reads, the runs it names instead of showing, and what groups them: the
// config each model was trained with, what its results say of it, and the keys runs differ on.
#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "lengen/comparable_config.h"
#include "lengen/config.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"
#include "lengen/named_entries.h"
#include "lengen/report.h"
#include "lengen/run_folder.h"
#include "lengen/run_record.h"
#include "lengen/sweep_manifest.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// One run's results of one kind of data, and its config flattened ("train.lr" -> "0.001").
struct ReadRun {
  RunResults run;
  ResultsByDecode results;
  std::map<std::string, std::string> config;
  std::string record_data;  // what run.json says the model trained on, for results that do not say
};

// A config as "key.path" -> its value's JSON text (strings unquoted, whole numbers without ".0":
// task parameters are stored as numbers, and a table names num_queries=4), for comparing runs.
void flatten(const nlohmann::json& value, const std::string& path, std::map<std::string, std::string>& out) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) flatten(child, path.empty() ? key : path + "." + key, out);
  } else if (value.is_number_float() && std::abs(value.get<double>()) < 1e15 &&
             value.get<double>() == std::trunc(value.get<double>())) {
    out[path] = std::to_string(static_cast<int64_t>(value.get<double>()));
  } else {
    out[path] = value.is_string() ? value.get<std::string>() : value.dump();
  }
}

// Keys on which runs of one group may differ: seeds, the method (grouped on its own), and
// settings that leave the trained model and its results alone.
bool averaged_over(const std::string& key) {
  for (const char* averaged :
       {"train.seed", "task.seed", "train.threads", "train.device", "description",
        "model.attention.normalizer", "model.attention.scaling", "model.attention.positions",
        "train.log_every", "train.checkpoint_every", "train.keep_checkpoints", "model.prefill_chunk"}) {
    if (key == averaged) return true;
  }
  return key.rfind("eval.", 0) == 0;
}

// The run names DIR/sweep.json lists, in its order; none without it.
std::vector<std::string> listed_names(const std::string& dir) {
  std::vector<std::string> names;
  if (!fs::exists(fs::path(dir) / kSweepManifestName)) return names;
  const nlohmann::json manifest = read_sweep_manifest(dir);  // kept: the loop reads into it
  for (const auto& entry : manifest.at("runs")) names.push_back(entry.at("name").get<std::string>());
  return names;
}

// One run's results: one entry, or on --data files one per data folder (test_data). Its config is
// config.json with results.json's trained_with over it (the model measured, if trained on since);
// each key training does not read is "-", which differs from nothing.
std::vector<ReadRun> read_run(const std::string& name, const fs::path& folder, bool on_files) {
  ResultsFile file = read_results_file((folder / "results.json").string());
  ReadRun base;
  base.run.name = printable(name);  // a folder name with a newline would break the page's lines
  base.run.dir = folder.string();
  base.run.task = file.task;
  base.run.group.method = file.method;
  base.run.train_len_max = file.train_len_max;
  const auto record = read_run_record(folder.string());
  if (record) base.run.trained_by = record->trained_by;
  base.record_data = training_data_label(record ? record->training_data : nlohmann::json());
  const fs::path config_path = folder / "config.json";
  nlohmann::json saved = fs::exists(config_path) ? read_json_file(config_path.string()) : nlohmann::json();
  if (file.trained_with.is_object()) saved.merge_patch(file.trained_with);
  if (saved.is_null())
    throw UserError(config_path.string() + " is missing: the report groups runs by their config");
  const Config config = config_from_json(saved, config_path.string());
  flatten(comparable_config_json(config), "", base.config);
  for (const std::string& key : unread_config_keys(config)) base.config[key] = "-";
  std::vector<ReadRun> read;
  if (!on_files) {
    read.push_back(base);
    read.back().results = std::move(file.results);
  }
  for (auto& [data_folder, results] : on_files ? file.results_on_files : ResultsByFolder{}) {
    read.push_back(base);
    read.back().results = std::move(results);
    read.back().config["test_data"] = data_folder;
  }
  if (read.empty()) read.push_back(base);  // no results of this kind: named by collect_runs
  return read;
}

// "" when every entry was measured at one step, else "step 200 at 64, 128; step 400 at 256".
std::string mixed_checkpoints(const std::map<int64_t, ResultEntry>& results) {
  std::map<int64_t, std::vector<int64_t>> lengths_by_step;
  for (const auto& [length, entry] : results) lengths_by_step[entry.step].push_back(length);
  std::vector<std::string> parts;
  for (const auto& [step, lengths] : lengths_by_step)
    parts.push_back(fmt::format("step {} at {}", step, fmt::join(lengths, ", ")));
  return parts.size() < 2 ? "" : fmt::format("{}", fmt::join(parts, "; "));
}

// The distinct non-empty values `kind_of` gives the entries, joined with " and ".
template <class KindOf>
std::string kinds_of(const std::map<int64_t, ResultEntry>& results, const KindOf& kind_of) {
  std::set<std::string> kinds;
  for (const auto& [length, entry] : results) {
    if (std::string kind = kind_of(entry); !kind.empty()) kinds.insert(std::move(kind));
  }
  return fmt::format("{}", fmt::join(kinds, " and "));
}

// Keeps the results of `decode`, and labels the run by what they say of the model measured: what
// it trained on, its checkpoint, schedule and decode cap, as keys that keep unlike runs apart.
void label_by_results(ReadRun& read, const std::string& decode) {
  RunResults& run = read.run;
  run.results = std::move(read.results[decode]);
  run.mixed_checkpoints = mixed_checkpoints(run.results);
  std::string data = kinds_of(run.results, [](const ResultEntry& entry) {
    return entry.model ? entry.model->trained_on : std::string();
  });
  read.config["data"] = data.empty() ? read.record_data : data;
  // "best", or "step N": a run evaluated at its best checkpoint, or one interrupted and then
  // evaluated, is not a seed of runs evaluated at their last.
  read.config["checkpoint"] = kinds_of(run.results, [](const ResultEntry& entry) {
    return fs::path(entry.checkpoint).filename() == "best.pt" ? "best" : fmt::format("step {}", entry.step);
  });
  // "400@0"; "200@0,400@150" for a model resumed with more steps: another learning-rate schedule.
  read.config["schedule"] = kinds_of(run.results, [](const ResultEntry& entry) {
    return entry.model ? entry.model->schedule : std::string();
  });
  // Greedy decoding under a lower cap cuts long answers short: another measurement.
  read.config["decode_cap"] = kinds_of(run.results, [](const ResultEntry& entry) {
    return entry.decode_cap ? fmt::format("{:g}", *entry.decode_cap) : std::string();
  });
  // Validation picks best.pt and nothing else: results of step checkpoints do not depend on it.
  if (read.config["checkpoint"].find("best") == std::string::npos) {
    for (const char* key : {"train.eval_every", "train.val_samples"}) {
      if (read.config.count(key) > 0) read.config[key] = "-";
    }
  }
}

// A run whose config repeats an earlier run's on every key that shapes the model, seeds included
// (a copied run folder, a config trained twice), is one measurement twice: left out and named.
std::vector<ReadRun> without_repeats(std::vector<ReadRun> read, std::vector<std::string>& named) {
  const auto model_keys = [](const ReadRun& run) {
    std::map<std::string, std::string> keys;
    for (const auto& [key, value] : run.config) {
      if (key == "train.seed" || key == "task.seed" || !averaged_over(key)) keys.emplace(key, value);
    }
    return keys;
  };
  std::vector<ReadRun> kept;
  for (ReadRun& run : read) {
    const auto first = std::find_if(kept.begin(), kept.end(), [&](const ReadRun& earlier) {
      return earlier.run.group.method == run.run.group.method && model_keys(earlier) == model_keys(run);
    });
    if (first == kept.end())
      kept.push_back(std::move(run));
    else
      named.push_back(run.run.name + " (a repeat of " + first->run.name + ": same config and seeds)");
  }
  return kept;
}

// Each run's variant: the keys outside averaged_over whose values differ between runs; an unread
// key ("-") differs from nothing.
std::vector<RunResults> with_variants(std::vector<ReadRun> read) {
  std::set<std::string> differing;
  for (const ReadRun& a : read) {
    for (const ReadRun& b : read) {
      for (const auto& [key, value] : a.config) {
        const auto in_b = b.config.find(key);
        if (!averaged_over(key) &&
            (in_b == b.config.end() || (value != in_b->second && value != "-" && in_b->second != "-")))
          differing.insert(key);
      }
    }
  }
  std::vector<RunResults> runs;
  for (ReadRun& one : read) {
    std::vector<std::string> variant;
    for (const std::string& key : differing) {
      const auto found = one.config.find(key);
      if (found != one.config.end() && found->second != "-") variant.push_back(key + "=" + found->second);
    }
    one.run.group.variant = joined_names(variant);
    runs.push_back(std::move(one.run));
  }
  return runs;
}

// The runs under `dir` (see collect_runs); each run folder there without results, or that the sweep
// does not list, is named in `named`.
std::vector<ReadRun> read_runs(const std::string& dir, bool on_files, std::vector<std::string>& named) {
  std::vector<ReadRun> runs;
  const auto read = [&](const std::string& name, const fs::path& folder) {
    for (ReadRun& one : read_run(name, folder, on_files)) runs.push_back(std::move(one));
  };
  const fs::path root(dir);
  if (fs::exists(root / "results.json")) {
    read(root.filename().string(), root);
    return runs;
  }
  const bool sweep = fs::exists(root / kSweepManifestName);
  const std::vector<std::string> listed = listed_names(dir);
  std::vector<fs::path> folders;
  for (const auto& entry : fs::directory_iterator(root)) folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  for (const fs::path& folder : folders) {
    const std::string name = folder.filename().string();
    const bool evaluated = fs::exists(folder / "results.json");
    if (sweep && evaluated && std::find(listed.begin(), listed.end(), name) == listed.end())
      named.push_back(printable(name) + " (a run folder " + kSweepManifestName +
                      " does not list: lengen report " + printable(folder.string()) + ")");
    else if (!sweep && evaluated)
      read(name, folder);
    else if (!sweep && RunFolder(folder.string()).is_lengen_run())
      named.push_back(printable(name) + " (a run folder without results.json)");
  }
  for (const std::string& name : listed) {
    const fs::path failure = root / (name + kSweepFailureSuffix);
    std::string first_line;
    if (fs::exists(root / name / "results.json")) {
      read(name, root / name);
    } else if (std::getline(std::ifstream(failure), first_line)) {
      named.push_back(name + " (failed: " + first_line + "; see " + failure.filename().string() + ")");
    } else {
      named.push_back(name + (fs::is_directory(root / name) ? " (not evaluated: no results.json yet)"
                                                            : " (no run folder)"));
    }
  }
  if (runs.empty()) {
    throw UserError(dir + " holds no evaluated run" +
                    (sweep ? std::string(" of the runs its ") + kSweepManifestName +
                                 " lists (a sweep stopped before its first run ended? run the sweep again "
                                 "to resume it, or lengen eval DIR/NAME)"
                           : std::string(" (no results.json yet: train writes it once trained)")));
  }
  return runs;
}

// Moves the runs `keep` rejects out of `runs`, naming each in `named` as "NAME (WHY)".
template <class Keep>
void keep_only(std::vector<ReadRun>& runs, const Keep& keep, std::vector<std::string>& named,
               const std::string& why) {
  const auto rejected = std::stable_partition(runs.begin(), runs.end(), keep);
  for (auto run = rejected; run != runs.end(); ++run) named.push_back(run->run.name + " (" + why + ")");
  runs.erase(rejected, runs.end());
}

}  // namespace

CollectedRuns collect_runs(const std::string& dir, bool on_files, const std::string& decode) {
  CollectedRuns collected;
  std::vector<ReadRun> runs = read_runs(dir, on_files, collected.left_out);
  // A run evaluated only on the other kind of data has no row here: it is named, not shown as a
  // row of "-" under an empty label.
  keep_only(
      runs, [](const ReadRun& run) { return !run.results.empty(); }, collected.left_out,
      on_files ? "no results on --data files" : "results on --data files only: lengen report --on-files");
  if (runs.empty()) {
    throw UserError(dir + " holds no run evaluated on " + (on_files ? "--data files" : "generated data") +
                    (on_files ? "" : " (results on --data files: lengen report --on-files)"));
  }
  const std::string teacher_forced = name_of(DecodeMode::kTeacherForced);
  const bool any = std::any_of(runs.begin(), runs.end(),
                               [&](const ReadRun& run) { return run.results.count(teacher_forced) > 0; });
  collected.decode = !decode.empty() ? decode : any ? teacher_forced : name_of(DecodeMode::kGreedy);
  // A run without results in this decode mode is in no row, and labels none.
  keep_only(
      runs, [&](const ReadRun& run) { return run.results.count(collected.decode) > 0; }, collected.left_out,
      "no " + collected.decode + " results");
  if (runs.empty()) {
    throw UserError(dir + ": no run has " + collected.decode +
                    " results (evaluate with `lengen eval RUN --decode " + collected.decode + "`" +
                    (on_files ? " --data DIR)" : ")"));
  }
  for (ReadRun& run : runs) label_by_results(run, collected.decode);
  collected.runs = with_variants(without_repeats(std::move(runs), collected.left_out));
  return collected;
}

}  // namespace lengen
