#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "lengen/atomic_write.h"
#include "lengen/child_processes.h"
#include "lengen/comparable_config.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/evaluation_plan.h"
#include "lengen/folder_lock.h"
#include "lengen/json_file.h"
#include "lengen/output_files.h"
#include "lengen/results_file.h"
#include "lengen/run_folder.h"
#include "lengen/run_record.h"
#include "lengen/sweep.h"
#include "sweep_children.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// Trained to the train.steps of its config.json (training checkpoints its last step), then
// evaluated at each length (results.json takes them one by one); or evaluated with its step
// checkpoints deleted to save space, as the runs kept under results/ are. A run stopped in training
// or in its evaluation still has its checkpoints and is resumed.
bool is_finished(const RunFolder& folder) {
  if (!fs::exists(folder.results_path()) || !fs::exists(folder.config_path())) return false;
  const int64_t step = folder.latest_step();
  if (step == 0) return true;
  const Config config = config_from_json(read_json_file(folder.config_path()), folder.config_path());
  ResultsFile results = read_results_file(folder.results_path());
  const auto& measured = results.results[name_of(config.eval.decode)];
  const std::vector<int64_t> lengths = evaluation_lengths(config);
  return step == config.train.steps && std::all_of(lengths.begin(), lengths.end(), [&](int64_t length) {
           return measured.count(length) > 0;
         });
}

// How a finished run's config.json differs from the config the sweep asks for ("KEY is A there,
// B in the sweep"), or "". It may differ in the threads that trained it and in what was evaluated.
std::string finished_difference(const Config& wanted, const RunFolder& folder) {
  const nlohmann::json there = comparable_config_json(read_json_file(folder.config_path()));
  const nlohmann::json here = comparable_config_json(wanted);
  std::string key = first_config_difference(there, here, {"train.threads", "eval", "description"});
  if (key.empty()) return "";
  // train.steps before the intervals scaled from it, which the user did not type.
  if (there.at("train").at("steps") != here.at("train").at("steps")) key = "train.steps";
  return key + " is " + config_value_text(there, key) + " there, " + config_value_text(here, key) +
         " in the sweep";
}

// A finished run is skipped, so one trained under another config would stand for this sweep's run
// (any shard's: sweep.json describes them all). A run to resume is its resume's to check.
void check_finished_runs_are_current(const Sweep& sweep, const std::string& out) {
  for (const SweepRun& run : sweep.runs) {
    const RunFolder folder(out + "/" + run.name);
    if (!is_finished(folder)) continue;
    const std::string difference = finished_difference(run_config(sweep, run), folder);
    if (!difference.empty()) {
      throw UserError("sweep: " + folder.path() + " finished with another config (" + difference +
                      "); remove that run folder to retrain it, or use another --out");
    }
  }
}

// Decides what a run needs, a fresh start or a resume, and writes its config.
void prepare(const Sweep& sweep, const SweepRun& run, int64_t jobs, PendingRun& pending) {
  Config config = run_config(sweep, run);
  const RunFolder folder(pending.paths.run_dir);
  const std::vector<int64_t> lengths = evaluation_lengths(config);
  pending.decode = name_of(config.eval.decode);
  pending.first_length = lengths.front();
  pending.longest_length = *std::max_element(lengths.begin(), lengths.end());
  const bool resume = !folder.latest_checkpoint().empty();
  config.train.threads = std::max<int64_t>(1, config.train.threads / jobs);
  if (resume && fs::exists(folder.config_path())) {
    // A resumed run keeps its thread count: the trainer refuses a config that changed.
    config.train.threads =
        read_json_file(folder.config_path())["train"].value("threads", config.train.threads);
  }
  write_file_atomically(pending.paths.config, config_to_json(config).dump(2) + "\n");
  pending.argv = {running_program_path(), "train", pending.paths.config, "--out", folder.path()};
  if (resume) {
    // The sweep's steps: a resume keeps its config.json's unless the command line sets them.
    pending.argv.insert(pending.argv.end(),
                        {"--resume", "--set", "train.steps=" + std::to_string(config.train.steps)});
  } else if (folder.has_content()) {
    pending.argv.push_back("--force");  // failed before its first checkpoint: nothing to keep
  }
}

// What the sweep would do with a run, for --dry-run.
std::string planned_state(const Sweep& sweep, const SweepRun& run, const std::string& out) {
  const RunFolder folder(out + "/" + run.name);
  if (is_finished(folder)) {
    const std::string difference = finished_difference(run_config(sweep, run), folder);
    return difference.empty() ? "finished" : "finished with another config: " + difference;
  }
  if (FolderLock::held_elsewhere(folder.path()))
    return "in use by another lengen process; the sweep skips it";
  if (!folder.latest_checkpoint().empty()) return "resume";
  // It would start with --force, which refuses a folder lengen did not make.
  if (folder.has_content() && !folder.is_lengen_run())
    return "not a lengen run folder (no run.json); the sweep refuses it";
  return "new";
}

// This sweep's manifest, keeping the runs another sweep file listed in the same folder (the report
// still finds them) and its description ("first; second").
nlohmann::json merged_manifest(const Sweep& sweep, const std::string& out) {
  nlohmann::json manifest = sweep_manifest(sweep);
  if (!fs::exists(out + "/" + kSweepManifestName)) return manifest;
  const nlohmann::json earlier = read_sweep_manifest(out);
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : earlier["runs"]) {
    const auto mine = [&run](const SweepRun& one) { return one.name == run["name"]; };
    if (std::none_of(sweep.runs.begin(), sweep.runs.end(), mine)) runs.push_back(run);
  }
  runs.insert(runs.end(), manifest["runs"].begin(), manifest["runs"].end());
  manifest["runs"] = runs;
  const std::string before = earlier.value("description", ""), now = manifest.value("description", "");
  const bool said = now.empty() || ("; " + before + "; ").find("; " + now + "; ") != std::string::npos;
  if (!before.empty()) manifest["description"] = said ? before : before + "; " + now;
  return manifest;
}

// The runs still to train, each with its config written; finished ones are skipped.
std::vector<PendingRun> queue_runs(const Sweep& sweep, const std::vector<size_t>& mine,
                                   const SweepOptions& args, SweepTally& tally) {
  std::vector<PendingRun> queue;
  for (size_t index : mine) {
    const SweepRun& run = sweep.runs[index];
    PendingRun pending{run.name, RunPaths(args.out, run.name), {}, nullptr, {}, 0, 0};
    if (is_finished(RunFolder(pending.paths.run_dir))) {
      ++tally.skipped;
      std::cout << "skip " << run.name << " (finished)\n";
    } else if (FolderLock::held_elsewhere(pending.paths.run_dir) ||
               FolderLock::held_elsewhere(args.out, run.name + kSweepLogSuffix)) {
      // Another sweep (or a train, an eval) has it: neither a failure nor this sweep's to touch.
      ++tally.busy;
      std::cout << "skip " << run.name << " (in use by another lengen process)\n";
    } else {
      prepare(sweep, run, args.jobs, pending);
      // The sweep's claim on the run until its child ends: taken under the sweep folder's lock, so
      // a second sweep, which waits for that lock, finds it held.
      pending.claim =
          std::make_shared<FolderLock>(args.out, FolderLock::WhenHeld::kRefuse, run.name + kSweepLogSuffix);
      queue.push_back(std::move(pending));
    }
  }
  return queue;
}

// Every run's config, every shard's too: a typo in one value is one line and exit 2 before anything
// is trained or written; then what a --set train.steps scaled, said once unless runs differ.
void check_run_configs(const Sweep& sweep) {
  std::string said, lines;
  for (const SweepRun& run : sweep.runs) {
    std::string scaled;
    run_config(sweep, run, &scaled);
    if (scaled.empty() || scaled == said) continue;
    lines += (said.empty() ? "" : run.name + ": ") + scaled + "\n";
    said = scaled;
  }
  std::cout << lines;
}

}  // namespace

SweepTally run_sweep(const SweepOptions& args) {
  const Sweep sweep = load_sweep(args.source);
  const std::vector<size_t> mine = shard_runs(sweep.runs.size(), args.shard);
  check_run_configs(sweep);
  check_output_folder_path(args.out, "sweep folder");  // refused alike by a dry run
  // A run's folder as --out would get the sweep's runs nested in it, its report mixing the two.
  if (RunFolder(args.out).is_lengen_run())
    throw UserError(args.out + " is a run folder (it holds " + kRunRecordName +
                    "): a sweep writes its runs into a folder of their own; choose another --out");
  SweepTally tally;
  if (args.dry_run) {
    for (size_t index : mine) {
      const SweepRun& run = sweep.runs[index];
      std::cout << run.name << "  [" << planned_state(sweep, run, args.out) << "]";
      for (const auto& [key, value] : run.overrides) std::cout << "  " << key << "=" << value.dump();
      std::cout << "\n";
    }
    std::cout << mine.size() << " of " << sweep.runs.size() << " runs"
              << (args.shard == "0/1" ? "" : " in shard " + args.shard) << "\n";
    // Then it ends as the sweep would begin: a folder it would refuse is the same one line, exit 2.
    if (fs::is_directory(args.out)) check_finished_runs_are_current(sweep, args.out);
    return tally;
  }
  fs::create_directories(args.out);
  std::vector<PendingRun> queue;
  {
    // Held while the sweep checks the folder and claims its runs, so that a second sweep started
    // at the same moment checks against those claims.
    const FolderLock folder_lock(args.out, FolderLock::WhenHeld::kWait);
    check_finished_runs_are_current(sweep, args.out);
    write_file_atomically(args.out + "/" + kSweepManifestName,
                          merged_manifest(sweep, args.out).dump(2) + "\n");
    queue = queue_runs(sweep, mine, args, tally);
  }
  tally.stopped = run_children(queue, args.jobs, tally);
  print_summary(args.out, tally);
  return tally;
}

}  // namespace lengen
