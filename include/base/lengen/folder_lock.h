#pragma once
// An exclusive flock on a folder itself, held for the object's life and released by the kernel
// when the process ends however it ends (no stale lock after a kill). For a command that writes
// a folder's shared files (a sweep setting its folder up, `lengen data` writing its splits), so
// that two at once do not interleave them.
#include <string>

namespace lengen {

class FolderLock {
 public:
  enum class WhenHeld {
    kWait,    // block until the holder lets go
    kRefuse,  // throw UserError(`busy_message`)
  };
  // `what` names the folder in errors ("the sweep folder"); UserError when it cannot be opened
  // or locked.
  FolderLock(const std::string& dir, const std::string& what, WhenHeld when_held,
             const std::string& busy_message = "");
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace lengen
