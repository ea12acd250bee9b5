#include "lengen/folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lengen {

FolderLock::FolderLock(const std::string& dir, WhenHeld when_held, const std::string& file_name) {
  const std::string path = dir + "/" + file_name;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw UserError("cannot lock " + dir + ": " + path + ": " + std::strerror(errno));
  const int operation = LOCK_EX | (when_held == WhenHeld::kRefuse ? LOCK_NB : 0);
  while (::flock(fd_, operation) != 0) {
    const int reason = errno;
    if (reason == EINTR) continue;  // a signal while waiting: the wait goes on
    ::close(fd_);
    if (reason == EWOULDBLOCK)
      throw UserError(dir + " is in use by another lengen process; wait for it to end");
    throw UserError("cannot lock " + dir + ": " + std::strerror(reason));
  }
}

FolderLock::~FolderLock() {
  ::close(fd_);  // the only descriptor of this open file: closing it releases the flock
}

bool FolderLock::held_elsewhere(const std::string& dir, const std::string& file_name) {
  const int fd = ::open((dir + "/" + file_name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // A shared lock: taken on a file opened read-only, wherever flock works.
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held;
}

}  // namespace lengen
