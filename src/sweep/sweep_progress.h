#pragma once
// What a researcher watching a sweep sees: one line per finished run with its wall time and its
// exact match at 1x and at the longest length, and, on a terminal, one live line updated in place
// (runs done, running, left, elapsed, an ETA from the runs finished so far).
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pending_run.h"

namespace lengen {

// The sweep folder's file of the progress lines.
constexpr const char* kSweepProgressLog = "sweep_progress.txt";

class SweepProgress {
 public:
  // `total`: the runs this sweep will start; `jobs`: how many at a time. The live line goes to
  // stderr, and only when stderr is a terminal. The lines of their own also go to `log_path`
  // (appended; "" for none), so a sweep run in the background keeps them in its folder.
  SweepProgress(int64_t total, int64_t jobs, std::string log_path = "");
  ~SweepProgress();
  SweepProgress(const SweepProgress&) = delete;
  SweepProgress& operator=(const SweepProgress&) = delete;

  void started(const PendingRun& run);
  // Prints `line` (stdout) for a run that ended, with its wall time and, when it succeeded, its
  // exact match from results.json; counts it done.
  void ended(const PendingRun& run, const std::string& line, bool succeeded);
  // Prints a line of its own (stdout) above the live line.
  void print(const std::string& line);
  // Redraws the live line (elapsed time moves on); a no-op off a terminal.
  void redraw();

 private:
  using Clock = std::chrono::steady_clock;
  void clear_live_line();
  int64_t total_, jobs_;
  int64_t done_ = 0, running_ = 0;
  double finished_seconds_ = 0;  // wall time of the runs done, for the ETA
  bool live_;
  std::string log_path_;
  Clock::time_point start_;
  std::vector<std::pair<std::string, Clock::time_point>> started_at_;
};

// "exact match 1.000 at 16 (1x), 0.250 at 256" from the run's results.json; "" when it holds
// neither length (a run that failed, or results another run wrote).
std::string exact_match_summary(const PendingRun& run);

// "42s", "3m05s", "1h02m".
std::string duration_text(double seconds);

}  // namespace lengen
