#include "sweep_children.h"

#include <chrono>
#include <csignal>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "lengen/child_processes.h"
#include "lengen/failure_note.h"
#include "lengen/run_folder.h"
#include "lengen/stop_signals.h"
#include "sweep_progress.h"

namespace lengen {

namespace {

constexpr int kFailureTailLines = 20;

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

// Whether a child ended because of the stop signal this sweep passed on to it: it stopped as
// asked (kInterruptedExitCode), or it was still starting up and the signal's default action
// ended it before it could catch the signal.
bool ended_by_forwarded_stop(int status, bool stop_forwarded) {
  const int code = exit_code_of(status);
  if (code == kInterruptedExitCode) return true;
  return stop_forwarded && (code == 128 + SIGINT || code == 128 + SIGTERM);
}

// Records how one child ended and says so; `stop_forwarded`: this sweep passed a stop signal on to it.
void record_exit(const PendingRun& run, int status, bool stop_forwarded, SweepTally& tally,
                 SweepProgress& progress) {
  const int code = exit_code_of(status);
  if (code == 0) {
    ++tally.succeeded;
    remove_failure_note(run.paths.failure);
    progress.ended(run, "done " + run.name, true);
  } else if (ended_by_forwarded_stop(status, stop_forwarded)) {
    // Ctrl-C: the run stopped at a checkpoint (or before its first step); it has not failed.
    tally.interrupted.push_back(run.name);
    const bool kept = !RunFolder(run.paths.run_dir).latest_checkpoint().empty();
    progress.ended(
        run,
        "stopped " + run.name +
            (kept ? " (interrupted, checkpoint kept)" : " (interrupted before its first checkpoint)"),
        false);
  } else {
    tally.failed.push_back(run.name);
    write_failure_note(run.paths.failure, "exit code " + std::to_string(code),
                       last_lines(run.paths.log, kFailureTailLines));
    progress.ended(run,
                   "FAIL " + run.name + " (exit code " + std::to_string(code) + "), see " + run.paths.failure,
                   false);
  }
}

}  // namespace

bool run_children(const std::vector<PendingRun>& queue, int64_t jobs, SweepTally& tally) {
  StopSignals stop_signals;
  // Beside the runs' NAME.log files; .txt, so that no run's name can take it.
  const std::string progress_log =
      queue.empty() ? "" : (std::filesystem::path(queue.front().paths.log).parent_path() / kSweepProgressLog).string();
  SweepProgress progress(static_cast<int64_t>(queue.size()), jobs, progress_log);
  std::map<pid_t, const PendingRun*> running;
  bool stop_forwarded = false;
  size_t next = 0;
  while (next < queue.size() || !running.empty()) {
    while (!stop_signal_received() && next < queue.size() && static_cast<int64_t>(running.size()) < jobs) {
      const PendingRun& run = queue[next++];
      progress.print("start " + run.name + " (log: " + run.paths.log + ")");
      running.emplace(start_child({run.argv, {}, run.paths.log}), &run);
      progress.started(run);
    }
    if (running.empty()) break;
    // Woken each second to move the live line's clock on.
    const ChildWait wait =
        wait_for_children_or_stop(std::chrono::steady_clock::now() + std::chrono::seconds(1));
    progress.redraw();
    if (wait.stop_signal != 0) {
      stop_forwarded = true;
      std::vector<pid_t> pids;
      for (const auto& entry : running) pids.push_back(entry.first);
      signal_children(pids, wait.stop_signal);
    }
    for (const ChildEnd& end : wait.ended) {
      const auto it = running.find(end.pid);
      if (it == running.end()) continue;
      record_exit(*it->second, end.status, stop_forwarded, tally, progress);
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

}  // namespace lengen
