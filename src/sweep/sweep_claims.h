#pragma once
// How sweeps on one folder keep out of each other's way: while a sweep sets the folder up
// (checks the runs, writes sweep.json, claims its runs and writes their configs) it holds the
// folder (a FolderLock, lengen/folder_lock.h, waited for: a second sweep started at the same
// moment sets up after the first has claimed its runs, and so sees them); while it runs a run it holds that
// run's claim, an flock on the run's NAME.log.
#include <memory>
#include <string>

namespace lengen {

// A sweep's hold on one run for as long as it runs it. Two sweeps started together on one
// folder both find the run free before either child has taken the run's own lock; the claim
// makes one of them skip it, before it writes the run's files.
class RunClaim {
 public:
  // nullptr when another process holds the claim.
  static std::unique_ptr<RunClaim> take(const std::string& log_path);
  ~RunClaim();
  RunClaim(const RunClaim&) = delete;
  RunClaim& operator=(const RunClaim&) = delete;

 private:
  explicit RunClaim(int fd) : fd_(fd) {}
  int fd_;
};

// Whether another process holds the claim on the run whose log is `log_path` (creates nothing).
bool claimed_elsewhere(const std::string& log_path);

}  // namespace lengen
