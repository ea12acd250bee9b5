#include "lengen/sweep_runner.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "lengen/atomic_write.h"
#include "lengen/child_processes.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/evaluation_plan.h"
#include "lengen/failure_note.h"
#include "lengen/folder_lock.h"
#include "lengen/json_file.h"
#include "lengen/output_files.h"
#include "lengen/run_folder.h"
#include "lengen/sweep.h"
#include "lengen/sweep_source.h"
#include "pending_run.h"
#include "run_state.h"
#include "sweep_children.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// Finished runs are skipped, so one trained with another config under the same name would be
// reported as this sweep's; a run another sweep file is training (or left to resume) under the
// same name would be skipped as in use, or resumed, and stand for this sweep's run too: refuse
// both before anything is written. A run that failed before its first checkpoint starts over.
void check_started_runs_are_current(const Sweep& sweep, const std::vector<size_t>& mine,
                                    const std::string& out) {
  for (size_t index : mine) {
    const SweepRun& run = sweep.runs[index];
    const RunPaths paths(out, run.name);
    const bool finished = is_finished(paths);
    const bool claimed = FolderLock::held_elsewhere(out, run.name + kSweepLogSuffix);
    const bool started = claimed || !RunFolder(paths.run_dir).latest_checkpoint().empty() ||
                         FolderLock::held_elsewhere(paths.run_dir);
    if (!finished && !started) continue;
    Config wanted;
    try {
      wanted = run_config(sweep, run);
    } catch (const UserError&) {
      continue;  // reported as an invalid config when the run is prepared
    }
    // A run another process is training keeps its train.steps; one left to resume may grow them.
    const bool busy = claimed || FolderLock::held_elsewhere(paths.run_dir);
    const std::vector<std::string>& may_differ_in =
        finished || busy ? kKeysAFinishedRunMayDifferIn : kKeysAStartedRunMayDifferIn;
    const std::string difference = stale_difference(wanted, paths, may_differ_in, claimed, finished);
    if (!difference.empty()) {
      throw UserError("sweep: " + paths.run_dir + (finished ? " finished" : " was started") +
                      " with another config (" + difference + ")" +
                      (finished ? "" : ", by another sweep file or before this one changed") + "; " +
                      stale_advice(paths, may_differ_in));
    }
    const std::string past = finished || busy ? "" : resume_past_steps(wanted, paths);
    if (!past.empty()) {
      throw UserError("sweep: " + paths.run_dir + " cannot resume: " + past +
                      "; or remove that run folder to retrain it, or use another --out");
    }
  }
}

// Decides what a run needs: nothing (finished), a fresh start, or a resume. Writes its config.
// Returns false (after recording why) when its config is invalid or its results would be lost.
bool prepare(const Sweep& sweep, const SweepRun& run, const SweepOptions& args, PendingRun& pending) {
  Config config;
  try {
    config = run_config(sweep, run);
  } catch (const UserError& e) {
    write_failure_note(pending.paths.failure, "invalid config (not started)", std::string(e.what()) + "\n");
    return false;
  }
  config.train.threads = std::max<int64_t>(1, config.train.threads / args.jobs);
  const std::vector<int64_t> lengths = evaluation_lengths(config);
  pending.decode = name_of(config.eval.decode);
  pending.first_length = lengths.front();
  pending.longest_length = *std::max_element(lengths.begin(), lengths.end());
  RunFolder folder(pending.paths.run_dir);
  if (const std::string why = why_kept_as_it_is(pending.paths); !why.empty()) {
    write_failure_note(pending.paths.failure, "kept as it is (not started)",
                       pending.paths.run_dir + ": " + why + "\n");
    return false;
  }
  const bool resume = !folder.latest_checkpoint().empty();
  if (resume && fs::exists(folder.config_path())) {
    // A resumed run keeps its thread count: the trainer refuses a config that changed.
    config.train.threads =
        read_json_file(folder.config_path())["train"].value("threads", config.train.threads);
  }
  write_file_atomically(pending.paths.config, config_to_json(config).dump(2) + "\n");
  pending.argv = {running_program_path(), "train", pending.paths.config, "--out", pending.paths.run_dir};
  if (resume) {
    pending.argv.push_back("--resume");
  } else if (folder.has_content()) {
    pending.argv.push_back("--force");  // failed before its first checkpoint: nothing to keep
  }
  return true;
}

// --dry-run: each run of the shard with its state and its overrides; nothing is written.
void print_plan(const Sweep& sweep, const std::vector<size_t>& mine, const SweepOptions& args) {
  for (size_t index : mine) {
    const SweepRun& run = sweep.runs[index];
    const RunPaths paths(args.out, run.name);
    std::string state;
    try {
      const Config wanted = run_config(sweep, run);
      const std::string why_kept = why_kept_as_it_is(paths);
      state = is_finished(paths)                                      ? "finished"
              : !why_kept.empty()                                     ? "kept: " + why_kept
              : !RunFolder(paths.run_dir).latest_checkpoint().empty() ? "resume"
                                                                      : "new";
      const RunFolder folder(paths.run_dir);
      if (state != "finished" && FolderLock::held_elsewhere(paths.run_dir)) {
        state = "in use by another lengen process; the sweep skips it";
      } else if (state == "new" && folder.has_content() && !folder.is_lengen_run()) {
        // The run would start with --force, which refuses a folder lengen did not make.
        state = "not a lengen run folder (no run.json); the sweep refuses it";
      } else if (state == "finished") {
        const std::string difference = stale_difference(wanted, paths);
        const std::string short_of = difference.empty() ? finished_run_note(wanted, paths) : "";
        if (!difference.empty())
          state = "finished with another config: " + difference;
        else if (!short_of.empty())
          state = "finished; " + short_of;
      } else if (state == "resume") {
        const std::string difference =
            stale_difference(wanted, paths, kKeysAStartedRunMayDifferIn, false, /*finished=*/false);
        const std::string past = resume_past_steps(wanted, paths);
        if (!difference.empty())
          state = "started with another config: " + difference + "; the sweep refuses it";
        else if (!past.empty())
          state = "cannot resume: " + past + "; the sweep refuses it";
      }
    } catch (const UserError& e) {
      state = std::string("invalid: ") + e.what();
    }
    std::cout << run.name << "  [" << state << "]";
    for (const auto& [key, value] : run.overrides) std::cout << "  " << key << "=" << value.dump();
    std::cout << "\n";
  }
  std::cout << mine.size() << " of " << sweep.runs.size() << " runs in shard " << args.shard << "\n";
}

// The sweep writes its side files (sweep.json, NAME.config.json, NAME.log, NAME.failure.txt) only
// where they are its own: a folder without a sweep.json holds none of them yet, and one with a
// lengen manifest holds those of the runs it lists. Anything else is the user's, and stops the
// sweep before it writes.
void check_side_files_are_lengens(const Sweep& sweep, const std::vector<size_t>& mine,
                                  const std::string& out) {
  std::set<std::string> listed;
  const std::string manifest_path = out + "/" + kSweepManifestName;
  if (fs::exists(manifest_path)) {
    nlohmann::json manifest;
    try {
      manifest = read_sweep_manifest(out);
    } catch (const UserError& e) {
      throw UserError(std::string(e.what()) + "; use another --out");
    }
    for (const auto& run : manifest["runs"]) listed.insert(run["name"].get<std::string>());
  }
  for (size_t index : mine) {
    const RunPaths paths(out, sweep.runs[index].name);
    if (listed.count(sweep.runs[index].name) > 0) continue;
    for (const std::string& file : {paths.config, paths.log, paths.failure}) {
      if (fs::exists(file)) {
        throw UserError(file + " exists and lengen did not write it (" + manifest_path + " lists no run " +
                        sweep.runs[index].name + "); move it or use another --out");
      }
    }
  }
}

// Bad input that every run of the shard shares (an unknown key in the grid, a base that is not a
// config) is one line and exit 2 before anything is written, not a failure file per run.
void check_some_run_is_valid(const Sweep& sweep, const std::vector<size_t>& mine) {
  std::string first_problem;
  for (size_t index : mine) {
    try {
      run_config(sweep, sweep.runs[index]);
      return;
    } catch (const UserError& e) {
      // Most messages already start with "sweep run NAME"; the others get the run's name.
      const std::string message = e.what(), name = sweep.runs[index].name;
      if (first_problem.empty())
        first_problem = message.rfind("sweep run " + name, 0) == 0 ? message : "run " + name + ": " + message;
    }
  }
  if (!first_problem.empty()) throw UserError("no run of the sweep has a valid config; " + first_problem);
}

// This sweep's manifest, keeping the runs another sweep file listed in the same folder: their
// side files stay theirs, and the report still finds them. A run of both takes this sweep's entry.
// The folder's description keeps the earlier sweep files' (this one's is added after them).
nlohmann::json merged_manifest(const Sweep& sweep, const std::string& out) {
  nlohmann::json manifest = sweep_manifest(sweep);
  if (!fs::exists(out + "/" + kSweepManifestName)) return manifest;
  std::map<std::string, nlohmann::json> mine;
  for (const auto& run : manifest["runs"]) mine[run["name"].get<std::string>()] = run;
  nlohmann::json runs = nlohmann::json::array();
  const nlohmann::json listed = read_sweep_manifest(out);
  for (const auto& run : listed["runs"]) {
    const auto found = mine.find(run["name"].get<std::string>());
    runs.push_back(found == mine.end() ? run : found->second);
    if (found != mine.end()) mine.erase(found);
  }
  for (const auto& run : manifest["runs"]) {
    if (mine.count(run["name"].get<std::string>()) > 0) runs.push_back(run);
  }
  manifest["runs"] = runs;
  const auto described = listed.find("description");
  if (described != listed.end() && described->is_string() && !described->get<std::string>().empty()) {
    // "first; second": each sweep file's own description once.
    const std::string earlier = described->get<std::string>();
    const std::string mine_text = manifest.value("description", "");
    bool listed = mine_text.empty();
    for (size_t start = 0; !listed && start <= earlier.size();) {
      const size_t end = std::min(earlier.find("; ", start), earlier.size());
      listed = earlier.compare(start, end - start, mine_text) == 0;
      start = end + 2;
    }
    manifest["description"] = listed ? earlier : earlier + "; " + mine_text;
  }
  return manifest;
}

// What --out must be before anything of a sweep's is written into it (refused alike by a dry run).
void check_sweep_out(const Sweep& sweep, const std::vector<size_t>& mine, const std::string& out) {
  check_some_run_is_valid(sweep, mine);
  check_out_is_not_root(out);
  check_out_folder(out, "sweep folder");
  if (RunFolder(out).is_lengen_run()) {
    throw UserError("--out " + out + " is a run folder; a sweep writes its runs into a folder of its own");
  }
  check_out_is_not_in_a_run(out);  // nor inside one (its checkpoints/)
  check_out_is_not_a_data_folder(out);
}

// The sweep's started and finished runs and its side files, checked (with the folder held by a
// real sweep). Every run of the sweep, not only this shard's: sweep.json describes them all, so
// another sweep file's runs under the same names (another shard of it) would be relabelled.
void check_sweep_folder_contents(const Sweep& sweep, const std::vector<size_t>& mine,
                                 const std::string& out) {
  std::vector<size_t> all(sweep.runs.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  check_started_runs_are_current(sweep, all, out);
  check_side_files_are_lengens(sweep, mine, out);
}

// Checks the sweep folder and its started and finished runs before anything of the sweep's is
// written, then writes its manifest. Returns the folder's lock: held until the sweep has claimed
// its runs, so that a second sweep started at the same moment checks against those claims.
std::unique_ptr<FolderLock> start_sweep_folder(const Sweep& sweep, const std::vector<size_t>& mine,
                                               const std::string& out) {
  check_sweep_out(sweep, mine, out);
  fs::create_directories(out);
  auto lock = std::make_unique<FolderLock>(out, FolderLock::WhenHeld::kWait);
  check_sweep_folder_contents(sweep, mine, out);
  write_file_atomically(out + "/" + kSweepManifestName, merged_manifest(sweep, out).dump(2) + "\n");
  return lock;
}

// A finished run is not evaluated again: what its results lack of the sweep's measurements is
// named, with the command that adds them (finished_run_note).
void note_other_evaluation(const Sweep& sweep, const SweepRun& run, const RunPaths& paths) {
  try {
    const std::string note = finished_run_note(run_config(sweep, run), paths);
    if (!note.empty()) std::cout << "  " << run.name << ": " << note << "\n";
  } catch (const UserError&) {
    // An unreadable config or results file is named where the run is used.
  }
}

// The sweep's claim on run `name` from queueing it until its child ends, a lock on OUT/NAME.log;
// nullptr when another process holds it.
std::shared_ptr<FolderLock> claim_run(const std::string& out, const std::string& name) {
  try {
    return std::make_shared<FolderLock>(out, FolderLock::WhenHeld::kRefuse, name + kSweepLogSuffix);
  } catch (const FolderInUse&) {
    return nullptr;
  }
}

// The runs still to train, each with its config written; finished ones are skipped and ones
// with an invalid config fail at once.
std::vector<PendingRun> queue_runs(const Sweep& sweep, const std::vector<size_t>& mine,
                                   const SweepOptions& args, SweepTally& tally) {
  std::vector<PendingRun> queue;
  for (size_t index : mine) {
    const SweepRun& run = sweep.runs[index];
    PendingRun pending{run.name, RunPaths(args.out, run.name), {}, nullptr, {}, 0, 0};
    if (is_finished(pending.paths)) {
      ++tally.skipped;
      std::cout << "skip " << run.name << " (finished)\n";
      note_other_evaluation(sweep, run, pending.paths);
      continue;
    }
    if (FolderLock::held_elsewhere(pending.paths.run_dir) ||
        !(pending.claim = claim_run(args.out, run.name))) {
      // Another sweep (or a train, an eval) has it: neither a failure nor this sweep's to touch.
      ++tally.busy;
      std::cout << "skip " << run.name << " (in use by another lengen process)\n";
      continue;
    }
    if (!prepare(sweep, run, args, pending)) {
      tally.failed.push_back(run.name);
      std::cout << "FAIL " << run.name << ": not started, see " << pending.paths.failure << "\n";
      continue;
    }
    queue.push_back(std::move(pending));
  }
  return queue;
}

// A --set train.steps that scaled the runs' schedules is said, as `lengen train` says it: once,
// unless runs were scaled differently.
void say_scaled_schedules(const Sweep& sweep, const std::vector<size_t>& mine) {
  std::string said;
  for (size_t index : mine) {
    std::string scaled;
    try {
      run_config(sweep, sweep.runs[index], &scaled);
    } catch (const UserError&) {
      continue;  // named where the run is prepared
    }
    if (scaled.empty() || scaled == said) continue;
    std::cout << (said.empty() ? "" : sweep.runs[index].name + ": ") << scaled << "\n";
    said = scaled;
  }
}

}  // namespace

void print_sweep_plan(const SweepOptions& args) {
  const Sweep sweep = load_sweep(args.source);
  const std::vector<size_t> mine = shard_runs(sweep.runs.size(), parse_shard(args.shard));
  // An --out the real command would refuse is refused by the plan too (runs whose config changed
  // since they started are listed as such).
  check_sweep_out(sweep, mine, args.out);
  if (fs::is_directory(args.out)) check_side_files_are_lengens(sweep, mine, args.out);
  say_scaled_schedules(sweep, mine);
  print_plan(sweep, mine, args);
  // Then it ends as the sweep would begin: a folder it would refuse is the same one line, exit 2.
  if (fs::is_directory(args.out)) check_sweep_folder_contents(sweep, mine, args.out);
}

SweepTally run_sweep(const SweepOptions& args) {
  if (args.jobs < 1) throw UserError("--jobs must be at least 1");
  const Sweep sweep = load_sweep(args.source);
  const std::vector<size_t> mine = shard_runs(sweep.runs.size(), parse_shard(args.shard));
  SweepTally tally;
  std::vector<PendingRun> queue;
  say_scaled_schedules(sweep, mine);
  {
    const auto folder_lock = start_sweep_folder(sweep, mine, args.out);
    queue = queue_runs(sweep, mine, args, tally);
  }
  tally.stopped = run_children(queue, args.jobs, tally);
  print_summary(args.out, tally);
  return tally;
}

}  // namespace lengen
