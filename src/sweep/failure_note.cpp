#include "lengen/failure_note.h"

#include <filesystem>

#include "lengen/atomic_write.h"

namespace lengen {

void write_failure_note(const std::string& path, const std::string& why, const std::string& detail) {
  std::string note = why + "\n" + detail;
  if (note.back() != '\n') note += "\n";
  write_file_atomically(path, note);
}

void remove_failure_note(const std::string& path) {
  // A note that cannot be removed is left: the report reads it only for a run without results.
  std::error_code error;
  std::filesystem::remove(path, error);
}

}  // namespace lengen
