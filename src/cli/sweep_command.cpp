// `lengen sweep SWEEP.json --out runs/SWEEP`, or `lengen sweep --base CONFIG --grid KEY=V1,V2
// --out DIR`: trains every run of a sweep (lengen/sweep.h); exits 130 when interrupted,
// 1 when a run failed.
#include <memory>
#include <string>

#include "commands.h"
#include "count_validators.h"
#include "lengen/stop_signals.h"
#include "lengen/sweep.h"

namespace lengen::cli {

namespace {

void run_sweep_command(const SweepOptions& options) {
  const SweepTally tally = run_sweep(options);
  if (tally.stopped || !tally.interrupted.empty()) throw ExitWith{kInterruptedExitCode};
  if (!tally.failed.empty()) throw ExitWith{1};  // a run failed
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto options = std::make_shared<SweepOptions>();
  auto* cmd = app.add_subcommand(
      "sweep",
      "Train every run of a sweep file, or of --base CONFIG --grid KEY=V1,V2, each as its own "
      "`lengen train`; the sweep file format, run names and resuming: docs/sweeps.md");
  SweepSource& source = options->source;
  auto* file = cmd->add_option("sweep", source.path, "Sweep file (JSON)")->check(CLI::ExistingFile);
  auto* base =
      cmd->add_option("--base", source.base, "Config every run starts from (instead of a sweep file)")
          ->check(CLI::ExistingFile)
          ->excludes(file);
  cmd->add_option("--grid", source.grid,
                  "KEY=V1,V2,...: one axis of the grid, values typed as --set types them (repeatable; "
                  "the first is outermost); AXIS={\"name\":N,\"KEY\":V,...},{...} sets several keys per run")
      ->needs(base)
      ->allow_extra_args(false);
  cmd->add_option("--set", source.set, "KEY=VALUE applied to every run (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--out", options->out, "Sweep folder, e.g. runs/quick_copy")->required();
  cmd->add_option("--jobs", options->jobs,
                  "Runs at a time; each run's train.threads is divided by it (at least 1)")
      ->check(positive_count());
  cmd->add_option("--shard", options->shard, "Only runs i, i+N, i+2N, ... of the sweep (e.g. a job array)");
  cmd->add_flag("--dry-run", options->dry_run, "List the runs and their state without training");
  cmd->callback([options] { run_sweep_command(*options); });
}

}  // namespace lengen::cli
