#include "sweep_claims.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lengen/errors.h"

namespace lengen {

std::unique_ptr<RunClaim> RunClaim::take(const std::string& log_path) {
  // A link in the log's place could lead out of the sweep folder: the sweep never writes through it.
  const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0 && errno == ELOOP) {
    throw UserError(log_path +
                    " is a link; a sweep writes its side files only as files of its own folder "
                    "(remove the link)");
  }
  if (fd < 0) throw UserError("cannot write " + log_path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<RunClaim>(new RunClaim(fd));
}

RunClaim::~RunClaim() { ::close(fd_); }

bool claimed_elsewhere(const std::string& log_path) {
  const int fd = ::open(log_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

}  // namespace lengen
