#pragma once
// Running a sweep (lengen/sweep.h): each run of the shard is trained as a child `lengen train`
// process of the running binary, `jobs` at a time, so a crash or a bad value costs one run, not
// the sweep. Each run's config, log and failure note sit next to its folder in the sweep folder;
// finished runs are skipped (after checking they were trained with the config the sweep asks
// for), interrupted ones resumed, and Ctrl-C is passed on to the running children.
#include <cstdint>
#include <string>
#include <vector>

#include "lengen/sweep_source.h"

namespace lengen {

struct SweepOptions {
  SweepSource source;  // a sweep file (with --sets), or --base/--grid/--set
  std::string out;     // the sweep folder
  int64_t jobs = 1;
  std::string shard = "0/1";  // "i/N": runs i, i+N, i+2N, ...
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

// Prints each run of the shard with its state (new, resume, finished, invalid) and overrides;
// writes nothing.
void print_sweep_plan(const SweepOptions& options);

// Trains the shard's runs, printing each start and end and then a summary.
SweepTally run_sweep(const SweepOptions& options);

}  // namespace lengen
