#pragma once
// Progress of a long job: one self-updating line on a terminal, plain log lines otherwise
// (a file or a pipe should not fill with carriage returns).
#include <chrono>
#include <cstdint>
#include <string>

namespace lengen {

class ProgressLine {
 public:
  // Only an `enabled` line prints (rank 0 of a data-parallel job).
  ProgressLine(int64_t total_steps, bool enabled);
  void update(int64_t step, double loss, double lr, double steps_per_second);
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
