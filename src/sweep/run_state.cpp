#include "run_state.h"

#include <algorithm>
#include <filesystem>

#include "lengen/comparable_config.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/evaluation_plan.h"
#include "lengen/json_file.h"
#include "lengen/run_folder.h"

namespace fs = std::filesystem;

namespace lengen {

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

namespace {

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

}  // namespace

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
                             const std::vector<std::string>& may_differ_in, bool or_sweep_config,
                             bool finished) {
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

// What to do about a run folder that differs from what the sweep asks for: give the sweep the
// train.steps a resume grew the run to, or retrain it.
std::string stale_advice(const RunPaths& paths, const std::vector<std::string>& may_differ_in) {
  const std::string saved = paths.run_dir + "/config.json";
  if (fs::exists(saved) && fs::exists(paths.config)) {
    const nlohmann::json config = read_json_file(saved);
    const std::string key = first_config_difference(config, read_json_file(paths.config), may_differ_in);
    if (key == "train.steps" &&
        config_value_text(config, key) == std::to_string(RunFolder(paths.run_dir).latest_step())) {
      return "it was resumed to train.steps=" + config_value_text(config, key) +
             " since the sweep started it: give the sweep that train.steps, or use another --out";
    }
  }
  return "remove that run folder to retrain it, or use another --out";
}

namespace {

// Why a finished run's results.json does not hold the sweep's measurements of it, with what to
// do, or "" when it does: what the sweep's evaluation would have written that it lacks
// (results.json's "results" -> decode -> length -> {samples, checkpoint}: "its results.json lacks
// length 8 (teacher_forced, last checkpoint, 200 samples), ...", a run evaluated by hand after its
// results were moved aside, with another decode mode, checkpoint, sample count or fewer lengths).
std::string results_fall_short(const Config& wanted, const RunFolder& folder, const std::string& settings) {
  const nlohmann::json results = read_json_file(folder.results_path());
  if (!results.is_object()) return "";  // named where the run is read (eval, report)
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

}  // namespace

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

}  // namespace lengen
