#pragma once
// Training a sweep's queued runs as child `lengen train` processes, `jobs` at a time, and saying
// how each ended (lengen/sweep_runner.h).
#include <cstdint>
#include <string>
#include <vector>

#include "lengen/sweep_runner.h"
#include "pending_run.h"

namespace lengen {

// Trains the queue as child processes, `jobs` at a time; each writes its output to its log.
// A stop signal (Ctrl-C, SIGTERM) is passed on to the running children, which checkpoint and
// stop; no further run starts. Prints a line per run that ends (sweep_progress.h) and records
// it in `tally`. Returns whether a stop signal arrived.
bool run_children(const std::vector<PendingRun>& queue, int64_t jobs, SweepTally& tally);

// The summary after the last run: how many trained, skipped, failed, interrupted.
void print_summary(const std::string& out, const SweepTally& tally);

}  // namespace lengen
