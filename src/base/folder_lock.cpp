#include "lengen/folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lengen/errors.h"

namespace lengen {

FolderLock::FolderLock(const std::string& dir, const std::string& what, WhenHeld when_held,
                       const std::string& busy_message)
    : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
  if (fd_ < 0) throw UserError("cannot open " + what + " " + dir + ": " + std::strerror(errno));
  const int operation = LOCK_EX | (when_held == WhenHeld::kRefuse ? LOCK_NB : 0);
  while (::flock(fd_, operation) != 0) {
    const int reason = errno;
    if (reason == EINTR) continue;  // a signal while waiting: the wait goes on
    ::close(fd_);
    if (reason == EWOULDBLOCK && when_held == WhenHeld::kRefuse) throw UserError(busy_message);
    throw UserError("cannot lock " + what + " " + dir + ": " + std::strerror(reason));
  }
}

FolderLock::~FolderLock() { ::close(fd_); }

}  // namespace lengen
