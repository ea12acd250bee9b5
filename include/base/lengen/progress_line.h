#pragma once
// Progress of a long job: one self-updating line on a terminal, plain log lines otherwise
// (a file or a pipe should not fill with carriage returns).
#include <chrono>
#include <cstdint>
#include <string>

namespace lengen {

// "12m05s", or "1h02m" from an hour on.
std::string format_duration(double seconds);

class ProgressLine {
 public:
  // Only an `enabled` line prints (rank 0 of a data-parallel job).
  ProgressLine(int64_t total_steps, bool enabled);
  void update(int64_t step, double loss, double lr, double steps_per_second);
  // Any text as the progress line (a log line when stderr is not a terminal).
  void show(const std::string& text);
  bool on_terminal() const { return terminal_; }
  // A message on a line of its own, keeping the progress line below it.
  void note(const std::string& message);
  void finish();

 private:
  int64_t total_;
  bool enabled_;
  bool terminal_;
  bool line_open_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace lengen
