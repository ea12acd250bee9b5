#include "lengen/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include "lengen/errors.h"
#include "lengen/run_folder.h"

namespace lengen {

namespace {

// The holder's pid, as it wrote it into the lock file; "" when unknown.
std::string holder_of(int fd) {
  char text[32] = {};
  const ssize_t read = ::pread(fd, text, sizeof(text) - 1, 0);
  std::string pid = read > 0 ? std::string(text, static_cast<size_t>(read)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) return "";
  // A pid left by a holder that was killed (or copied in with the folder) names no process now;
  // the holder may also not have written its own yet.
  const bool alive = ::kill(static_cast<pid_t>(std::stol(pid)), 0) == 0 || errno == EPERM;
  return alive ? pid : "";
}

// The run folders this process holds (canonical paths): a probe of one of them is not "another
// process" (a report written into the run folder whose lock it holds).
std::set<std::string>& held_here() {
  static std::set<std::string> held;
  return held;
}

std::string canonical_of(const std::string& dir) {
  std::error_code error;
  const std::filesystem::path path = std::filesystem::weakly_canonical(dir, error);
  return error ? dir : path.string();
}

[[noreturn]] void throw_in_use(const std::string& run_dir, const std::string& pid) {
  throw RunInUse(run_dir + " is in use by another lengen process" +
                 (pid.empty() ? "" : " (pid " + pid + ")") +
                 " that trains or evaluates it; wait for it to end");
}

}  // namespace

RunLock::RunLock(const std::string& run_dir) {
  const std::string path = run_dir + "/" + kFileName;
  // The lock is taken on the folder itself first: a lock file unlinked under its holder (by a
  // cleanup script) would let a second writer lock a new file of that name, but the folder
  // stays the same folder while the holder writes into it.
  folder_fd_ = ::open(run_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder_fd_ < 0) throw UserError("cannot lock " + run_dir + ": " + std::strerror(errno));
  if (::flock(folder_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int reason = errno;
    ::close(folder_fd_);
    folder_fd_ = -1;
    if (reason != EWOULDBLOCK) throw UserError("cannot lock " + run_dir + ": " + std::strerror(reason));
    // The holder's pid, from the lock file when it is still there.
    std::string pid;
    const int file = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (file >= 0) {
      pid = holder_of(file);
      ::close(file);
    }
    throw_in_use(run_dir, pid);
  }
  // The lock file is lengen's own: a link in its place (to a file of the user's, elsewhere) is
  // not followed, nor is a file with other names truncated, since the pid is written into it.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd_ < 0 && errno == ELOOP) {
    release_folder();
    throw UserError("cannot lock " + run_dir + ": " + path +
                    " is a symbolic link, not the lock file lengen writes; remove it");
  }
  if (fd_ < 0) {
    const int reason = errno;
    release_folder();
    throw UserError("cannot lock " + run_dir + ": " + path + ": " + std::strerror(reason));
  }
  struct stat file {};
  if (::fstat(fd_, &file) != 0 || !S_ISREG(file.st_mode) || file.st_nlink != 1) {
    ::close(fd_);
    fd_ = -1;
    release_folder();
    throw UserError("cannot lock " + run_dir + ": " + path +
                    (S_ISREG(file.st_mode) ? " has other names (a hard link)" : " is not a regular file") +
                    ", not the lock file lengen writes; remove it");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int reason = errno;
    const std::string pid = holder_of(fd_);
    ::close(fd_);
    fd_ = -1;
    release_folder();
    if (reason == EWOULDBLOCK) throw_in_use(run_dir, pid);
    throw UserError("cannot lock " + run_dir + ": " + std::strerror(reason));
  }
  held_path_ = canonical_of(run_dir);
  held_here().insert(held_path_);
  // For the message of the next process that finds the run locked; the lock itself is the flock.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t written = ::pwrite(fd_, pid.data(), pid.size(), 0);
  }
}

RunLock::~RunLock() {
  if (!held_path_.empty()) held_here().erase(held_path_);
  if (fd_ >= 0) {
    // No pid is left behind to be read as a holder's (a copy of the folder carries the file).
    [[maybe_unused]] const int emptied = ::ftruncate(fd_, 0);
    ::close(fd_);  // closing the only descriptor releases the flock
  }
  release_folder();
}

void RunLock::release_folder() {
  if (folder_fd_ >= 0) ::close(folder_fd_);
  folder_fd_ = -1;
}

bool run_in_use_elsewhere(const std::string& run_dir) {
  if (!RunFolder(run_dir).is_lengen_run()) return false;
  if (held_here().count(canonical_of(run_dir)) > 0) return false;
  // Every holder writes the lock file: a run without one is free, and a report that only reads the
  // run leaves nothing behind in it.
  std::error_code error;
  if (!std::filesystem::exists(std::filesystem::path(run_dir) / RunLock::kFileName, error)) return false;
  try {
    const RunLock probe(run_dir);
    return false;
  } catch (const RunInUse&) {
    return true;
  }
}

}  // namespace lengen
