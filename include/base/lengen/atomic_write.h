#pragma once
// Files that are either the old or the new content, never a torn mix of both.
#include <filesystem>
#include <string>

namespace lengen {

// A temporary name beside `path`, unique to this process and call: PATH.PID-N.tmp.
std::string temporary_path_for(const std::string& path);

// Writes `text` to `path` through a temporary file and a rename; a failure removes the temporary
// file and throws UserError "cannot write PATH: reason".
void write_file_atomically(const std::string& path, const std::string& text);

// Removes `file` (nothing when it is not there); UserError "cannot remove FILE: reason" when it
// cannot go, so that a removal stopped halfway names where it stopped.
void remove_file(const std::filesystem::path& file);

}  // namespace lengen
