#pragma once
// One writer per run folder. Training, resuming and evaluating a run all rewrite its files
// (checkpoints, log.jsonl, results.json), so two of them at once would lose one's work. The
// lock is an flock on RUN/.lengen_lock: the kernel drops it when the process ends, however it
// ends, so a killed writer never leaves the run locked.
#include <string>

namespace lengen {

class RunLock {
 public:
  // Takes the lock of the existing folder `run_dir`, creating its lock file if needed. Throws
  // UserError "RUN is in use by another lengen process (pid P); ..." when another process holds it.
  explicit RunLock(const std::string& run_dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  // The lock file's name inside a run folder.
  static constexpr const char* kFileName = ".lengen_lock";

 private:
  int fd_ = -1;
};

}  // namespace lengen
