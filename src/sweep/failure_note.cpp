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

constexpr const char* kKeptBelow =
    "\n--- the earlier note, edited since lengen wrote it, kept as it is ---\n";

// The length of the note of lengen's that `text` starts with, fingerprint line included (0 when
// it starts with none, or with one edited since): what follows it is the user's.
size_t lengens_note_length(const std::string& text) {
  for (size_t lead = text.find(kFingerprintLead); lead != std::string::npos;
       lead = text.find(kFingerprintLead, lead + 1)) {
    if (lead > 0 && text[lead - 1] != '\n') continue;
    const std::string line = fingerprint_line(text.substr(0, lead));
    if (text.compare(lead, line.size(), line) == 0) return lead + line.size();
  }
  return 0;
}

// The user's part of a note file's `text`: "" for a note of lengen's alone; the earlier note kept
// below lengen's (the file lengen wrote above an annotated note); else all of it (an annotated
// note, or a file of the user's).
std::string users_part(const std::string& text) {
  const size_t own = lengens_note_length(text);
  if (own == text.size()) return "";
  if (own > 0 && text.compare(own, std::string(kKeptBelow).size(), kKeptBelow) == 0)
    return text.substr(own + std::string(kKeptBelow).size());
  return text;
}

}  // namespace

void write_failure_note(const std::string& path, const std::string& why, const std::string& detail) {
  std::string note = why + "\n" + detail;
  if (!note.empty() && note.back() != '\n') note += "\n";
  note += fingerprint_line(note);
  const bool there = fs::exists(fs::symlink_status(path));
  const std::string users = there ? users_part(text_of_file(path)) : "";
  write_file_atomically(path, users.empty() ? note : note + kKeptBelow + users);
}

bool remove_failure_note(const std::string& path) {
  if (!fs::exists(fs::symlink_status(path))) return true;
  const std::string text = text_of_file(path);
  const std::string users = users_part(text);
  if (fs::is_regular_file(fs::symlink_status(path)) && users.empty()) {
    fs::remove(path);
    return true;
  }
  // The user's part is kept as they left it; a note lengen stacked above it goes.
  if (fs::is_regular_file(fs::symlink_status(path)) && users != text) write_file_atomically(path, users);
  return false;
}

}  // namespace lengen
