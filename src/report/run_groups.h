#pragma once
// What groups the runs of a report (run_groups.cpp): each run's config as trained and what its
// results say of the model measured, read once per run and compared across the runs.
#include <map>
#include <string>
#include <vector>

#include "lengen/report.h"

namespace lengen {

struct ReadRun {
  RunResults run;
  // Flattened: the config.json as trained, and what the results say of the model (checkpoint,
  // schedule, data, ...).
  std::map<std::string, std::string> config;
  bool has_config = false;  // whether the run has a config.json
};

// One run's results: on generated data, one entry; on --data files, one entry per data folder it
// was evaluated on, labelled by the folder (test_data). `decode`: the mode whose results label it.
std::vector<ReadRun> read_run(const std::string& name, const std::string& results_path, bool on_files,
                              const std::string& decode);

// Runs that repeat an earlier one: the same config on every key that shapes the trained model,
// seeds included (a copy of a run folder, or one config trained twice). lengen trains a config
// the same way every time, so a repeat is one measurement twice: it is taken out of the tables,
// named in `repeats` as "NAME (a repeat of FIRST: same config and seeds)", instead of counting
// as another seed. Runs without a config.json are never taken for repeats.
std::vector<ReadRun> without_repeats(std::vector<ReadRun> read, std::vector<std::string>& repeats);

// Each run's variant: the keys outside averaged_over whose values are not the same in every run.
// A key a run does not read ("-": alpha under softmax) differs from nothing and labels nothing.
// A run without a config.json (deleted) is compared on what its results say (checkpoint, data,
// ...) only; beside runs with one, its variant says its config is unknown, which keeps it out of
// their groups.
std::vector<RunResults> with_variants(std::vector<ReadRun> read);

}  // namespace lengen
