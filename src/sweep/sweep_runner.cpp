#include "lengen/sweep_runner.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "lengen/atomic_write.h"
#include "lengen/child_processes.h"
#include "lengen/comparable_config.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/evaluation_plan.h"
#include "lengen/failure_note.h"
#include "lengen/folder_lock.h"
#include "lengen/json_file.h"
#include "lengen/output_files.h"
#include "lengen/run_folder.h"
#include "lengen/run_lock.h"
#include "lengen/stop_signals.h"
#include "lengen/sweep.h"
#include "lengen/sweep_source.h"
#include "sweep_claims.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

constexpr int kFailureTailLines = 20;

// Where one run's files live: the run folder and, next to it, the config it was started with,
// its log (child stdout and stderr) and, after a failure, the failure note.
struct RunPaths {
  std::string run_dir, config, log, failure;
  RunPaths(const std::string& out, const std::string& name)
      : run_dir(out + "/" + name),
        config(out + "/" + name + kSweepConfigSuffix),
        log(out + "/" + name + kSweepLogSuffix),
        failure(out + "/" + name + kSweepFailureSuffix) {}
};

// Finished: training ran to the train.steps of the run's config.json, and the run was then
// evaluated. A run evaluated after an interruption is not finished; it is resumed.
bool is_finished(const RunPaths& paths) {
  const RunFolder folder(paths.run_dir);
  if (!fs::exists(folder.results_path()) || !fs::exists(folder.config_path())) return false;
  const nlohmann::json saved = read_json_file(folder.config_path());
  const nlohmann::json steps = saved.is_object() && saved.contains("train") && saved["train"].is_object()
                                   ? saved["train"].value("steps", nlohmann::json())
                                   : nlohmann::json();
  return steps.is_number_integer() && folder.training_completed(steps.get<int64_t>());
}

// The step of a run's first step checkpoint, from its config.json (train.checkpoint_every, or
// train.steps when sooner: the last step always checkpoints); 1 when the config cannot tell.
int64_t first_checkpoint_step(const RunFolder& folder) {
  try {
    const nlohmann::json train = read_json_file(folder.config_path()).at("train");
    const int64_t every = train.at("checkpoint_every").get<int64_t>();
    const int64_t steps = train.at("steps").get<int64_t>();
    return std::max<int64_t>(1, every > 0 ? std::min(every, steps) : steps);
  } catch (const std::exception&) {
    return 1;
  }
}

// Why a run is kept as it is, neither resumed nor started over (which would replace what it
// has): it has checkpoints but lost its config.json (a resume is refused), or it has no step
// checkpoint left to resume from and was evaluated (results.json: a user's notes and lengths
// evaluated by hand among them) or trained past its first checkpoint (checkpoints/best.pt, or a
// log that went that far), its step checkpoints deleted since, to save space, say. "" for a run
// to resume, or one that may start over: one that failed before its first checkpoint.
std::string why_kept_as_it_is(const RunPaths& paths) {
  const RunFolder folder(paths.run_dir);
  if (!folder.latest_checkpoint().empty()) {
    if (fs::exists(folder.config_path())) return "";
    // Resumed, it would be refused; started over, its checkpoints would go.
    return "it has checkpoints but no config.json: put it back (" + paths.config +
           " holds the config the sweep started it with) to resume it";
  }
  const char* advice =
      "; lengen does not train over it: move the run folder away (or delete it) to train the run anew";
  if (fs::exists(folder.results_path()))
    return std::string("it has results.json but no step checkpoint to resume from") + advice;
  if (fs::exists(folder.best_checkpoint_path()))
    return std::string("it has checkpoints/best.pt (a trained model) but no step checkpoint to resume from") +
           advice;
  if (const int64_t logged = folder.last_logged_training_step(); logged >= first_checkpoint_step(folder))
    return "its log.jsonl records training to step " + std::to_string(logged) +
           ", but its step checkpoints are gone" + advice;
  return "";
}

struct PendingRun {
  std::string name;
  RunPaths paths;
  std::vector<std::string> argv;
  std::shared_ptr<RunClaim> claim;
  std::string config_text;  // what NAME.config.json, the child's config, must hold when it starts
};

std::string last_lines(const std::string& path, int count) {
  std::ifstream in(path);
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (static_cast<int>(lines.size()) > count) lines.pop_front();
  }
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

// What a finished run may differ in from the sweep and still count as its run: how many
// threads trained it, and what was evaluated (`lengen eval` adds lengths).
const std::vector<std::string> kKeysAFinishedRunMayDifferIn = {"train.threads", "eval", "description"};
// A run that is still to finish resumes, and a resume may also grow train.steps.
const std::vector<std::string> kKeysAStartedRunMayDifferIn = {"train.steps", "train.threads", "eval",
                                                              "description"};

// For a finished (or started) run, how its config.json differs from what the sweep now asks for,
// e.g. "task.params.vocab is 512 there, 1024 in the sweep"; "" when it does not.
// Another sweep's run that has not written its run folder yet is compared by the config that sweep
// wrote for it (NAME.config.json).
std::string stale_difference(const Config& wanted_config, const RunPaths& paths,
                             const std::vector<std::string>& may_differ_in = kKeysAFinishedRunMayDifferIn,
                             bool or_sweep_config = false, bool finished = true) {
  std::string saved_path = paths.run_dir + "/config.json";
  if (!fs::exists(saved_path) && or_sweep_config) saved_path = paths.config;
  if (!fs::exists(saved_path)) return "";
  // A finished run is compared as trained (a default written out or an unread key is no
  // difference); one to resume as its resume compares it (an unread key changed is refused).
  const nlohmann::json wanted =
      finished ? comparable_config_json(wanted_config) : resolved_config_json(wanted_config);
  const nlohmann::json saved = finished ? comparable_config_json(read_json_file(saved_path))
                                        : resolved_config_json(read_json_file(saved_path));
  const std::string key = first_config_difference(saved, wanted, may_differ_in);
  if (key.empty()) return "";
  return key + " is " + config_value_text(saved, key) + " there, " + config_value_text(wanted, key) +
         " in the sweep";
}

// A started run whose newest checkpoint is past the train.steps the sweep now asks for cannot be
// resumed to them (training refuses it); "" when it can.
std::string resume_past_steps(const Config& wanted, const RunPaths& paths) {
  const RunFolder folder(paths.run_dir);
  const int64_t step = folder.latest_step();
  if (step > wanted.train.steps) {
    return "its newest checkpoint is step " + std::to_string(step) +
           ", past train.steps=" + std::to_string(wanted.train.steps) +
           " in the sweep (set train.steps to at least " + std::to_string(step) + ")";
  }
  // At exactly that step, a checkpoint trained under other train.steps (its config.json's) ends
  // on another schedule than one trained to it: training refuses to call it finished.
  if (step == 0 || step != wanted.train.steps || !fs::exists(folder.config_path())) return "";
  const nlohmann::json saved = read_json_file(folder.config_path());
  const nlohmann::json trained_under =
      saved.is_object() ? saved.value(nlohmann::json::json_pointer("/train/steps"), nlohmann::json())
                        : nlohmann::json();
  if (!trained_under.is_number_integer() || trained_under.get<int64_t>() == step) return "";
  return "its newest checkpoint is step " + std::to_string(step) +
         ", trained under train.steps=" + trained_under.dump() +
         ", not to the train.steps=" + std::to_string(wanted.train.steps) +
         " of the sweep (set train.steps above " + std::to_string(step) + ", or to " + trained_under.dump() +
         ")";
}

// Why a run folder differs from what the sweep asks for: its config.json edited since the sweep
// started it (it differs from NAME.config.json, the config the sweep wrote for it), or the sweep
// changed since. The advice differs: restore the file, or retrain the run.
std::string stale_advice(const RunPaths& paths, const std::vector<std::string>& may_differ_in) {
  const std::string saved = paths.run_dir + "/config.json";
  if (!fs::exists(saved)) return "remove that run folder to retrain it, or use another --out";
  const nlohmann::json config = read_json_file(saved);
  if (fs::exists(paths.config)) {
    const nlohmann::json started = read_json_file(paths.config);
    const std::string key = first_config_difference(config, started, may_differ_in);
    // A resume with more train.steps writes them into config.json: lengen's doing, not an edit.
    if (key == "train.steps" &&
        config_value_text(config, key) == std::to_string(RunFolder(paths.run_dir).latest_step())) {
      return "it was resumed to train.steps=" + config_value_text(config, key) +
             " since the sweep started it: give the sweep that train.steps, or use another --out";
    }
    if (!key.empty()) {
      return "its config.json was edited since the sweep started it (" + key + " is " +
             config_value_text(config, key) + " there, " + config_value_text(started, key) + " in " +
             paths.config + "): restore it, or use another --out";
    }
  }
  // Its results.json records the sections the model was trained with (trained_with): a config.json
  // that differs from those was edited after training, whatever NAME.config.json says.
  const std::string results = paths.run_dir + "/results.json";
  if (fs::exists(results)) {
    const nlohmann::json recorded = read_json_file(results);
    const nlohmann::json trained =
        recorded.is_object() ? recorded.value("trained_with", nlohmann::json()) : nlohmann::json();
    if (trained.is_object() && config.is_object()) {
      nlohmann::json config_sections = nlohmann::json::object();
      for (const auto& [section, value] : trained.items()) {
        if (config.contains(section)) config_sections[section] = config[section];
      }
      std::vector<std::string> free = may_differ_in;
      // A resume may grow train.steps; the device and the evaluation's query chunks leave the model alone.
      for (const char* key : {"train.steps", "train.device", "model.prefill_chunk"}) free.push_back(key);
      const std::string key = first_config_difference(config_sections, trained, free);
      if (!key.empty()) {
        return "its config.json was edited after training (" + key + " is " +
               config_value_text(config_sections, key) + " there, " + config_value_text(trained, key) +
               " in " + results + "'s trained_with): restore it, or use another --out";
      }
    }
  }
  return "remove that run folder to retrain it, or use another --out";
}

// Finished runs are skipped, so one trained with another config under the same name would be
// reported as this sweep's; a run another sweep file is training (or left to resume) under the
// same name would be skipped as in use, or resumed, and stand for this sweep's run too: refuse
// both before anything is written. A run that failed before its first checkpoint starts over.
void check_started_runs_are_current(const Sweep& sweep, const std::vector<size_t>& mine,
                                    const std::string& out) {
  for (size_t index : mine) {
    const SweepRun& run = sweep.runs[index];
    const RunPaths paths(out, run.name);
    // A run folder that is a link to another run's of the sweep is that run, not this one.
    std::error_code error;
    if (fs::is_symlink(fs::symlink_status(paths.run_dir, error))) {
      for (const SweepRun& other : sweep.runs) {
        if (other.name != run.name &&
            fs::equivalent(paths.run_dir, RunPaths(out, other.name).run_dir, error)) {
          throw UserError("sweep: " + paths.run_dir + " is a link to the run folder of " + other.name +
                          ", another run of the sweep; remove the link, or use another --out");
        }
      }
    }
    const bool finished = is_finished(paths);
    const bool claimed = claimed_elsewhere(paths.log);
    const bool started = claimed || !RunFolder(paths.run_dir).latest_checkpoint().empty() ||
                         run_in_use_elsewhere(paths.run_dir);
    if (!finished && !started) continue;
    Config wanted;
    try {
      wanted = run_config(sweep, run);
    } catch (const UserError&) {
      continue;  // reported as an invalid config when the run is prepared
    }
    // A run another process is training keeps its train.steps; one left to resume may grow them.
    const bool busy = claimed || run_in_use_elsewhere(paths.run_dir);
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

// How the side config at `path` differs from `wanted` ("it said KEY=V, " + `whose` + " W"), keys
// in `ignored` aside; "" when it does not. A file that is no config is named as such.
std::string side_config_edit(const std::string& path, const nlohmann::json& wanted, const std::string& whose,
                             const std::vector<std::string>& ignored) {
  try {
    const nlohmann::json side = read_json_file(path);
    const std::string key = first_config_difference(side, wanted, ignored);
    if (key.empty()) return "";
    return "it said " + key + "=" + config_value_text(side, key) + ", " + whose + " " +
           config_value_text(wanted, key);
  } catch (const UserError& e) {
    return std::string("it was not a config: ") + e.what();
  }
}

// Why a finished run's results.json does not hold the sweep's measurements of it, with what to
// do, or "" when it does: results another run wrote (copied in: "its results.json was written by
// another run ..."), or what the sweep's evaluation would have written that it lacks
// (results.json's "results" -> decode -> length -> {samples, checkpoint}: "its results.json lacks
// length 8 (teacher_forced, last checkpoint, 200 samples), ...", a run evaluated by hand after its
// results were moved aside, with another decode mode, checkpoint, sample count or fewer lengths).
std::string results_fall_short(const Config& wanted, const RunFolder& folder, const std::string& settings) {
  const nlohmann::json results = read_json_file(folder.results_path());
  if (!results.is_object()) return "";  // named where the run is read (eval, report)
  const std::string own_id = folder.run_id();
  const nlohmann::json written_by = results.value("run_id", nlohmann::json());
  if (!own_id.empty() && written_by.is_string() && written_by.get<std::string>() != own_id) {
    return "its results.json was written by another run (run id " + written_by.get<std::string>() +
           "), not by this one (" + own_id + "): move it aside, then `lengen eval " + folder.path() + "`";
  }
  const std::string decode = name_of(wanted.eval.decode);
  const bool best = wanted.eval.checkpoint == CheckpointChoice::kBest;
  const std::string step_checkpoint =
      fs::path(folder.checkpoint_path(wanted.train.steps)).filename().string();
  std::string lacking;
  for (int64_t length : evaluation_lengths(wanted)) {
    const int64_t samples = samples_at_length(wanted.eval, length);
    const nlohmann::json entry = results.value(
        nlohmann::json::json_pointer("/results/" + decode + "/" + std::to_string(length)), nlohmann::json());
    const bool there = entry.is_object() && entry.value("samples", int64_t{-1}) == samples &&
                       entry.value("checkpoint", std::string()) == (best ? "best.pt" : step_checkpoint);
    if (there) continue;
    const std::string text = "length " + std::to_string(length) + " (" + decode + ", " +
                             (best ? "best" : "last") + " checkpoint, " + std::to_string(samples) +
                             " samples)";
    lacking += (lacking.empty() ? "" : ", ") + text;
  }
  if (lacking.empty()) return "";
  return "its results.json lacks " + lacking + ": `lengen eval " + folder.path() + settings + "` adds them";
}

// What a finished run's results lack of the sweep's measurements, with the command that adds them
// (`--set`s of the eval settings its config.json holds otherwise), or "" when they hold them all.
// A finished run is not evaluated again: this is said instead, by the sweep and its --dry-run.
std::string finished_run_note(const Config& wanted_config, const RunPaths& paths) {
  const RunFolder folder(paths.run_dir);
  const nlohmann::json wanted = config_to_json(wanted_config);
  const nlohmann::json saved = read_json_file(folder.config_path());
  std::string differences, settings;
  if (saved.is_object() && saved.contains("eval") && saved["eval"].is_object()) {
    for (const auto& [name, value] : wanted["eval"].items()) {
      if (saved["eval"].contains(name) && saved["eval"][name] == value) continue;
      const std::string key = "eval." + name;
      differences += (differences.empty() ? "" : ", ") + key + "=" + config_value_text(saved, key) +
                     " (the sweep's: " + config_value_text(wanted, key) + ")";
      settings +=
          " --set '" + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump()) + "'";
    }
  }
  const std::string short_of = results_fall_short(wanted_config, folder, settings);
  if (short_of.empty() || differences.empty()) return short_of;
  return short_of + " (its config.json has " + differences + ")";
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
  const nlohmann::json config_json = config_to_json(config);
  pending.config_text = config_json.dump(2) + "\n";
  // The side file is the sweep's: one edited since it was written is put back, with a line.
  if (fs::is_regular_file(pending.paths.config)) {
    const std::string said =
        side_config_edit(pending.paths.config, config_json, "the sweep's is", {"train.threads"});
    if (!said.empty()) std::cout << "rewrote " << pending.paths.config << " (" << said << ")\n";
  }
  write_file_atomically(pending.paths.config, pending.config_text);
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
      if (state != "finished" && run_in_use_elsewhere(paths.run_dir)) {
        state = "in use by another lengen process; the sweep skips it";
      } else if (state == "new" && folder.has_content() && !folder.not_replaceable_reason().empty()) {
        // The run would start with --force, which refuses a folder lengen did not make.
        state = "not a lengen run folder (" + folder.not_replaceable_reason() + "); the sweep refuses it";
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
// The folder's description keeps the earlier sweep files' (this one's is added after them), and
// keys lengen does not write (a user's notes) are kept.
nlohmann::json merged_manifest(const Sweep& sweep, const std::string& out) {
  nlohmann::json manifest = sweep_manifest(sweep);
  const std::string path = out + "/" + kSweepManifestName;
  if (!fs::exists(path)) return manifest;
  std::map<std::string, nlohmann::json> mine;
  for (const auto& run : manifest["runs"]) mine[run["name"].get<std::string>()] = run;
  nlohmann::json runs = nlohmann::json::array();
  const nlohmann::json listed = read_sweep_manifest(out);
  for (const auto& run : listed["runs"]) {
    const auto found = mine.find(run["name"].get<std::string>());
    if (found == mine.end()) {
      runs.push_back(run);
    } else {
      // This sweep's entry, with keys of the user's on the listed one kept; other overrides (from
      // another sweep file, or edited by hand) are replaced, with a line.
      nlohmann::json entry = found->second;
      if (run.value("overrides", nlohmann::json()) != entry.value("overrides", nlohmann::json())) {
        std::cout << "rewrote " << path << "'s entry of run " << found->first << ": its overrides were "
                  << run.value("overrides", nlohmann::json()).dump() << ", this sweep file's are "
                  << entry.value("overrides", nlohmann::json()).dump() << "\n";
      }
      for (const auto& [key, value] : run.items()) {
        if (!entry.contains(key)) entry[key] = value;
      }
      runs.push_back(entry);
      mine.erase(found);
    }
  }
  for (const auto& run : manifest["runs"]) {
    if (mine.count(run["name"].get<std::string>()) > 0) runs.push_back(run);
  }
  manifest["runs"] = runs;
  for (const auto& [key, value] : listed.items()) {
    if (!manifest.contains(key)) manifest[key] = value;
  }
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
  auto lock = std::make_unique<FolderLock>(out, "the sweep folder", FolderLock::WhenHeld::kWait);
  check_sweep_folder_contents(sweep, mine, out);
  write_file_atomically(out + "/" + kSweepManifestName, merged_manifest(sweep, out).dump(2) + "\n");
  return lock;
}

// NAME.config.json says what the sweep trained the run with: one edited since (or written for a
// run that then trained under another) is put back to the run's config.json, with a line saying so.
void restore_side_config(const RunPaths& paths) {
  const RunFolder folder(paths.run_dir);
  if (!fs::is_regular_file(paths.config) || !fs::is_regular_file(folder.config_path())) return;
  const nlohmann::json trained = read_json_file(folder.config_path());
  const std::string said = side_config_edit(paths.config, trained, "the run was trained with", {});
  if (said.empty()) return;
  write_file_atomically(paths.config, trained.dump(2) + "\n");
  std::cout << "restored " << paths.config << " (" << said << ")\n";
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

// The runs still to train, each with its config written; finished ones are skipped and ones
// with an invalid config fail at once.
std::vector<PendingRun> queue_runs(const Sweep& sweep, const std::vector<size_t>& mine,
                                   const SweepOptions& args, SweepTally& tally) {
  std::vector<PendingRun> queue;
  for (size_t index : mine) {
    const SweepRun& run = sweep.runs[index];
    PendingRun pending{run.name, RunPaths(args.out, run.name), {}, nullptr, {}};
    if (is_finished(pending.paths)) {
      ++tally.skipped;
      std::cout << "skip " << run.name << " (finished)\n";
      restore_side_config(pending.paths);
      note_other_evaluation(sweep, run, pending.paths);
      continue;
    }
    if (run_in_use_elsewhere(pending.paths.run_dir) || !(pending.claim = RunClaim::take(pending.paths.log))) {
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

// Whether a child ended because of the stop signal this sweep passed on to it: it stopped as
// asked (kInterruptedExitCode), or it was still starting up and the signal's default action
// ended it before it could catch the signal.
bool ended_by_forwarded_stop(int status, bool stop_forwarded) {
  const int code = exit_code_of(status);
  if (code == kInterruptedExitCode) return true;
  return stop_forwarded && (code == 128 + SIGINT || code == 128 + SIGTERM);
}

// Records how one child ended; `stop_forwarded`: this sweep passed a stop signal on to it.
void record_exit(const PendingRun& run, int status, bool stop_forwarded, SweepTally& tally) {
  const int code = exit_code_of(status);
  if (code == 0) {
    ++tally.succeeded;
    const bool removed = remove_failure_note(run.paths.failure);
    std::cout << "done " << run.name
              << (removed ? "" : " (" + run.paths.failure + " kept: edited since the sweep wrote it)")
              << std::endl;
  } else if (ended_by_forwarded_stop(status, stop_forwarded)) {
    // Ctrl-C: the run stopped at a checkpoint (or before its first step); it has not failed.
    tally.interrupted.push_back(run.name);
    const bool kept = !RunFolder(run.paths.run_dir).latest_checkpoint().empty();
    std::cout << "stopped " << run.name
              << (kept ? " (interrupted, checkpoint kept)" : " (interrupted before its first checkpoint)")
              << std::endl;
  } else {
    tally.failed.push_back(run.name);
    write_failure_note(run.paths.failure, "exit code " + std::to_string(code),
                       last_lines(run.paths.log, kFailureTailLines));
    std::cout << "FAIL " << run.name << " (exit code " << code << "), see " << run.paths.failure << std::endl;
  }
}

// Trains the queue as child processes, `jobs` at a time; each writes its output to its log.
// A stop signal (Ctrl-C, SIGTERM) is passed on to the running children, which checkpoint and
// stop; no further run starts. Returns whether a stop signal arrived.
bool run_children(const std::vector<PendingRun>& queue, int64_t jobs, SweepTally& tally) {
  StopSignals stop_signals;
  std::map<pid_t, const PendingRun*> running;
  bool stop_forwarded = false;
  size_t next = 0;
  while (next < queue.size() || !running.empty()) {
    while (!stop_signal_received() && next < queue.size() && static_cast<int64_t>(running.size()) < jobs) {
      const PendingRun& run = queue[next++];
      // The side file is the child's config: one edited while earlier runs trained is put back.
      std::string now;
      try {
        now = read_text_file(run.paths.config, "sweep run config");
      } catch (const UserError&) {
        // Removed or replaced by something unreadable: written again below.
      }
      if (now != run.config_text) {
        write_file_atomically(run.paths.config, run.config_text);
        std::cout << "restored " << run.paths.config << " (edited while the sweep ran)\n";
      }
      std::cout << "start " << run.name << " (log: " << run.paths.log << ")" << std::endl;
      running.emplace(start_child({run.argv, {}, run.paths.log}), &run);
    }
    if (running.empty()) break;
    const ChildWait wait = wait_for_children_or_stop();
    if (wait.stop_signal != 0) {
      stop_forwarded = true;
      std::vector<pid_t> pids;
      for (const auto& entry : running) pids.push_back(entry.first);
      signal_children(pids, wait.stop_signal);
    }
    for (const ChildEnd& end : wait.ended) {
      const auto it = running.find(end.pid);
      if (it == running.end()) continue;
      record_exit(*it->second, end.status, stop_forwarded, tally);
      running.erase(it);
    }
  }
  tally.not_started = static_cast<int64_t>(queue.size() - next);
  return stop_signal_received();
}

void print_summary(const std::string& out, const SweepTally& tally) {
  std::cout << "sweep " << out << ": " << tally.succeeded << " trained, " << tally.skipped
            << " already finished, " << tally.failed.size() << " failed";
  if (!tally.interrupted.empty()) std::cout << ", " << tally.interrupted.size() << " interrupted";
  if (tally.busy > 0) std::cout << ", " << tally.busy << " in use by another process (not touched)";
  if (tally.not_started > 0) std::cout << ", " << tally.not_started << " not started (interrupted)";
  std::cout << "\n";
  for (const auto& name : tally.failed)
    std::cout << "  failed: " << name << " (" << out << "/" << name << ".failure.txt)\n";
  if (!tally.interrupted.empty() || tally.not_started > 0) {
    std::cout << "rerun the same command to resume the interrupted runs and start the others\n";
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
  {
    const auto folder_lock = start_sweep_folder(sweep, mine, args.out);
    queue = queue_runs(sweep, mine, args, tally);
  }
  tally.stopped = run_children(queue, args.jobs, tally);
  print_summary(args.out, tally);
  return tally;
}

}  // namespace lengen
