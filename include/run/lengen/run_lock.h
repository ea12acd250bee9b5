#pragma once
// One writer per run folder. Training, resuming and evaluating a run all rewrite its files
// (checkpoints, log.jsonl, results.json), so two of them at once would lose one's work. The
// lock is an flock on the run folder itself and one on RUN/.lengen_lock (which holds the
// holder's pid for the next process's message): the kernel drops both when the process ends,
// however it ends, so a killed writer never leaves the run locked, and a lock file deleted
// under its holder does not let a second writer in.
#include <string>

#include "lengen/errors.h"

namespace lengen {

// The UserError of a run whose lock another process holds (a lock file that is not lengen's own
// is a plain UserError, not this).
class RunInUse : public UserError {
 public:
  using UserError::UserError;
};

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
  void release_folder();
  int fd_ = -1;
  int folder_fd_ = -1;
  std::string held_path_;  // in this process's set of held runs while held
};

// True when `run_dir` is a lengen run folder whose lock another process holds (a RunLock this
// process holds is not another's). Only a folder
// lengen made is probed (the lock file is not created in a folder of the user's); the answer is
// a probe's, true the moment it is taken. A lock file that is not lengen's own (a link) throws
// RunLock's UserError naming it.
bool run_in_use_elsewhere(const std::string& run_dir);

}  // namespace lengen
