#pragma once
// One run of a sweep as the runner handles it, and training the queued runs as child `lengen
// train` processes, `jobs` at a time (lengen/sweep.h).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lengen/folder_lock.h"
#include "lengen/sweep.h"
#include "lengen/sweep_manifest.h"

namespace lengen {

// A run's folder and, beside it, its config, its log (child stdout and stderr) and failure note.
struct RunPaths {
  std::string run_dir, config, log, failure;
  RunPaths(const std::string& out, const std::string& name)
      : run_dir(out + "/" + name),
        config(out + "/" + name + kSweepConfigSuffix),
        log(out + "/" + name + kSweepLogSuffix),
        failure(out + "/" + name + kSweepFailureSuffix) {}
};

struct PendingRun {
  std::string name;
  RunPaths paths;
  std::vector<std::string> argv;
  std::shared_ptr<FolderLock> claim;  // the sweep's lock on NAME.log while it is queued or running
  // Where its exact match is read from results.json: decode mode, first (1x) and longest lengths.
  std::string decode = {};
  int64_t first_length = 0, longest_length = 0;
};

// Trains the queue as child processes, `jobs` at a time, recording how each ended in `tally`. A
// stop signal is passed on to the running children and starts no further run; returns whether one came.
bool run_children(const std::vector<PendingRun>& queue, int64_t jobs, SweepTally& tally);

// The summary after the last run: how many trained, skipped, failed, interrupted.
void print_summary(const std::string& out, const SweepTally& tally);

}  // namespace lengen
