#pragma once
// Sweeps: one JSON file ("base", "grid", "list", "set": docs/sweeps.md) expands into many runs,
// each with a readable, unique folder name from its overrides (asentmax-nape-seed2).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "lengen/config.h"
#include "lengen/sweep_manifest.h"

namespace lengen {

// One "key.path" = JSON value assignment.
using SweepOverride = std::pair<std::string, nlohmann::json>;

struct SweepRun {
  std::string name;
  std::vector<SweepOverride> overrides;  // the sweep's "set" first, then the run's own
  bool named = false;  // by a "name" the user gave (a list entry's, a grid choice's), never changed
};

struct Sweep {
  std::string description;
  nlohmann::json base;  // the base config as JSON (keys it lacks keep their defaults)
  std::vector<SweepRun> runs;
  // The keys `lengen sweep --set` set for every run: a train.steps among them scales schedules.
  std::vector<std::string> command_line_set = {};
};

// Parses and expands a sweep, refusing two runs that resolve to one config; `base_dir` resolves a
// relative "base" path. Values are checked per run by run_config.
Sweep sweep_from_json(const nlohmann::ordered_json& json, const std::string& base_dir,
                      const std::string& source = "sweep",
                      const std::vector<std::string>& command_line_set = {});

// The run's resolved config, validated (UserError naming the run); `scaled`, when given, gets the
// line that says how a command-line train.steps scaled it.
Config run_config(const Sweep& sweep, const SweepRun& run, std::string* scaled = nullptr);

// A name component for one override: strings as they are ("nape"), numbers and booleans
// after the key's last part ("seed2", "lr0.001", "learn_alpha-true"); only [A-Za-z0-9._-].
std::string override_name(const std::string& key, const nlohmann::json& value);

// Indices of the runs of shard "i/N" (0 <= i < N) out of `total`: i, i + N, ...; anything else
// throws UserError.
std::vector<size_t> shard_runs(size_t total, const std::string& shard);

// A sweep file with `--set`s for every run, or the command line alone (--base/--grid/--set).
struct SweepSource {
  std::string path;               // a sweep file; "" for a sweep from the command line
  std::string base;               // --base CONFIG: the config every run starts from
  std::vector<std::string> grid;  // --grid KEY=V1,V2: one axis each, in order, first outermost
  std::vector<std::string> set;   // --set KEY=VALUE: applied to every run (over a file's "set")
};

// The sweep as load_sweep expands and checks a file; a grid's values split at top-level commas.
Sweep load_sweep(const SweepSource& source);

// runs/SWEEP/sweep.json: the description and each run's name and overrides, for the report.
nlohmann::json sweep_manifest(const Sweep& sweep);

// Each run is a child `lengen train` process, `jobs` at a time, so a crash costs one run only.
struct SweepOptions {
  SweepSource source;  // a sweep file (with --sets), or --base/--grid/--set
  std::string out;     // the sweep folder
  int64_t jobs = 1;
  std::string shard = "0/1";  // "i/N": runs i, i+N, i+2N, ...
  bool dry_run = false;       // list the runs with their state and overrides; write nothing
};

// What became of a sweep's runs, for the summary and the exit code.
struct SweepTally {
  int64_t succeeded = 0;
  int64_t skipped = 0;      // finished before this sweep started
  int64_t busy = 0;         // being trained or evaluated by another process (its lock is held)
  int64_t not_started = 0;  // left in the queue by a stop signal
  std::vector<std::string> failed, interrupted;
  bool stopped = false;  // a stop signal (Ctrl-C, SIGTERM) arrived
};

// Trains the shard's runs, printing each start and end and then a summary (with dry_run, the plan).
SweepTally run_sweep(const SweepOptions& options);

}  // namespace lengen
