#pragma once
// One writer at a time. lengen's one lock, an exclusive flock on a file in the folder it guards:
// - RUN/.lengen_lock, held by train, --resume and eval, and DIR/.lengen_lock by report,
//   attention and data writing into DIR (two writers would lose one's files or mix them);
// - SWEEP/.lengen_lock, waited for by a sweep while it sets its folder up, and SWEEP/NAME.log,
//   held by a sweep from queueing run NAME until its child ends (the run's own lock is the
//   child's to take, so two sweeps started together would both find it free before then).
// The kernel releases an flock when its holder ends, however it ends: a killed process never
// leaves anything locked.
#include <string>

#include "lengen/errors.h"

namespace lengen {

// The UserError of a folder whose lock another process holds.
class FolderInUse : public UserError {
 public:
  using UserError::UserError;
};

class FolderLock {
 public:
  static constexpr const char* kFileName = ".lengen_lock";
  enum class WhenHeld { kRefuse, kWait };

  // Takes the lock DIR/`file_name`, creating the file when missing. When another process holds
  // it: throws FolderInUse "DIR is in use by another lengen process; wait for it to end" (kRefuse),
  // or waits (kWait). UserError when the file cannot be opened.
  explicit FolderLock(const std::string& dir, WhenHeld when_held = WhenHeld::kRefuse,
                      const std::string& file_name = kFileName);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

  // Whether another process holds the lock DIR/`file_name` now (one this process holds is not
  // another's: a report written into the run it holds). Opens the file read-only and creates
  // nothing, so a folder one may only read (a kept run) is probed too; false without the file.
  static bool held_elsewhere(const std::string& dir, const std::string& file_name = kFileName);

 private:
  int fd_ = -1;
};

}  // namespace lengen
