#include "lengen/failure_note.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "lengen/atomic_write.h"
#include "lengen/content_hash.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

constexpr const char* kFingerprintLead = "(written by lengen sweep; fingerprint ";
constexpr const char* kFingerprintTail = ". A note edited since is kept, never replaced or removed.)\n";

std::string fingerprint_line(const std::string& text) {
  ContentHash hash;
  hash.add(text);
  return kFingerprintLead + hash.hex() + kFingerprintTail;
}

std::string text_of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Whether the file at `path` is a note lengen wrote, unchanged since: its last line is the
// fingerprint of everything above it.
bool is_lengens_own(const std::string& path) {
  if (!fs::is_regular_file(fs::symlink_status(path))) return false;
  const std::string text = text_of_file(path);
  const size_t lead = text.rfind(kFingerprintLead);
  if (lead == std::string::npos || (lead > 0 && text[lead - 1] != '\n')) return false;
  return text.substr(lead) == fingerprint_line(text.substr(0, lead));
}

}  // namespace

void write_failure_note(const std::string& path, const std::string& why, const std::string& detail) {
  std::string note = why + "\n" + detail;
  if (!note.empty() && note.back() != '\n') note += "\n";
  const bool annotated = fs::exists(fs::symlink_status(path)) && !is_lengens_own(path);
  if (annotated) {
    write_file_atomically(path,
                          note + "\n--- the earlier note, edited since lengen wrote it, kept as it is ---\n" +
                              text_of_file(path));
  } else {
    write_file_atomically(path, note + fingerprint_line(note));
  }
}

bool remove_failure_note(const std::string& path) {
  if (!fs::exists(fs::symlink_status(path))) return true;
  if (!is_lengens_own(path)) return false;
  fs::remove(path);
  return true;
}

}  // namespace lengen
