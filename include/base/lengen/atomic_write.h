#pragma once
// Files that are either the old or the new content, never a torn mix of both.
#include <string>

namespace lengen {

// A temporary name beside `path`, unique to this process and call: PATH.PID-N.tmp.
std::string temporary_path_for(const std::string& path);

// Writes `text` to `path` through a temporary file and a rename; a failure removes the temporary
// file and throws UserError "cannot write PATH: reason".
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace lengen
