#pragma once
// One run of a sweep as the runner handles it: where its files live, and, once queued, the
// child command that trains it and what its progress line reports.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lengen/folder_lock.h"
#include "lengen/sweep_manifest.h"

namespace lengen {

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

struct PendingRun {
  std::string name;
  RunPaths paths;
  std::vector<std::string> argv;
  // The sweep's lock on the run (its NAME.log) while it is queued or running.
  std::shared_ptr<FolderLock> claim;
  // Where its exact match is read from results.json when it ends: its decode mode and its first
  // (1x) and longest evaluation lengths.
  std::string decode = {};
  int64_t first_length = 0, longest_length = 0;
};

}  // namespace lengen
