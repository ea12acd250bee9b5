// What groups runs in a report: each run's config as its model was trained, what its results say
// of the model measured, repeats of one run taken out, and the keys on which the runs differ.
#include "run_groups.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "lengen/comparable_config.h"
#include "lengen/config.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"
#include "lengen/run_record.h"

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

// The distinct values `kind_of` gives the entries of `results` (an empty one names none), joined
// with " and ".
template <class KindOf>
std::string kinds_of(const ResultsByDecode& results, const KindOf& kind_of) {
  std::set<std::string> kinds;
  for (const auto& [decode, by_length] : results) {
    for (const auto& [length, entry] : by_length) {
      std::string kind = kind_of(entry);
      if (!kind.empty()) kinds.insert(std::move(kind));
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
    for (auto it = shown.begin(); it != shown.end();)
      it = it->first == decode ? std::next(it) : shown.erase(it);
  }
  run.mixed_checkpoints = mixed_checkpoints(shown);
  run.mixed_decode_caps = mixed_decode_caps(shown);
  std::string data = kinds_of(run.results, [](const ResultEntry& entry) {
    return entry.model ? entry.model->trained_on : std::string();
  });
  if (data.empty()) {
    const auto record = read_run_record(run.dir);
    data = training_data_label(record ? record->training_data : nlohmann::json());
  }
  read.config["data"] = data;
  // "best", or "step N" for a step checkpoint. Seeds evaluated alike share it; a run evaluated at
  // its best checkpoint, or one interrupted and then evaluated, does not share it with runs
  // evaluated at their last.
  read.config["checkpoint"] = kinds_of(shown, [](const ResultEntry& entry) {
    return fs::path(entry.checkpoint).filename() == "best.pt" ? "best" : fmt::format("step {}", entry.step);
  });
  // The schedule histories of its checkpoints ("400@0"; "200@0,400@150" for a model resumed with
  // more steps): a model trained under another learning-rate schedule is not another seed of one
  // trained straight through.
  read.config["schedule"] = kinds_of(
      shown, [](const ResultEntry& entry) { return entry.model ? entry.model->schedule : std::string(); });
  // The eval.decode_cap values behind its greedy results ("2.2"; "" where none is recorded):
  // greedy decoding under a lower cap cuts long answers short, another measurement.
  read.config["decode_cap"] = kinds_of(shown, [](const ResultEntry& entry) {
    return entry.decode_cap ? fmt::format("{:g}", *entry.decode_cap) : std::string();
  });
  // Validation picks best.pt and nothing else: results of step checkpoints do not depend on it.
  if (read.config["checkpoint"].find("best") == std::string::npos) {
    for (const char* key : {"train.eval_every", "train.val_samples"}) {
      if (read.config.count(key) > 0) read.config[key] = "-";
    }
  }
}

}  // namespace

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

}  // namespace lengen
