#pragma once
// One writer at a time: an exclusive flock on a file in the guarded folder (.lengen_lock, or a
// sweep's NAME.log while its child runs). The kernel releases it however its holder ends.
#include <string>

#include "lengen/errors.h"

namespace lengen {

class FolderLock {
 public:
  static constexpr const char* kFileName = ".lengen_lock";
  enum class WhenHeld { kRefuse, kWait };

  // Takes the lock DIR/`file_name`, creating the file when missing. When another process holds
  // it: throws UserError "DIR is in use by another lengen process; wait for it to end" (kRefuse),
  // or waits (kWait). UserError when the file cannot be opened.
  explicit FolderLock(const std::string& dir, WhenHeld when_held = WhenHeld::kRefuse,
                      const std::string& file_name = kFileName);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

  // Whether a FolderLock (of any process, this one too) holds DIR/`file_name` now; creates
  // nothing (read-only folders are probed too), false without the file.
  static bool held_elsewhere(const std::string& dir, const std::string& file_name = kFileName);

 private:
  int fd_ = -1;
};

}  // namespace lengen
