#pragma once
// Files that are either the old or the new content, never a torn mix of both.
#include <string>

namespace lengen {

// Writes `text` to `path` through PATH.tmp and a rename, so `path` is either the old or the
// new content. A failed write or rename (a full disk, a read-only target) removes PATH.tmp and
// throws UserError "cannot write PATH: reason".
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace lengen
