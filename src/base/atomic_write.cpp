#include "lengen/atomic_write.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "lengen/errors.h"

namespace fs = std::filesystem;

namespace lengen {

std::string temporary_path_for(const std::string& path) {
  // Unique per process and call: two processes (sweep shards, say) replacing one file never
  // write into each other's temporary file.
  static std::atomic<unsigned> counter{0};
  return path + "." + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".tmp";
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = temporary_path_for(path);
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (file == nullptr) throw UserError("cannot write " + path + ": " + std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  int reason = written ? 0 : errno;
  // fclose flushes the buffer: a full disk often shows here, not in fwrite.
  if (std::fclose(file) != 0 && reason == 0) reason = errno;
  std::error_code ignored;
  if (reason != 0) {
    fs::remove(temporary, ignored);
    throw UserError("cannot write " + path + ": " + std::strerror(reason));
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) {
    fs::remove(temporary, ignored);
    throw UserError("cannot write " + path + ": " + error.message());
  }
}

}  // namespace lengen
