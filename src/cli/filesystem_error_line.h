#pragma once
// The one line a filesystem error becomes: what lengen could not do, to which path, and why.
#include <filesystem>
#include <string>

namespace lengen::cli {

// "cannot create directories PATH: File name too long" from libstdc++'s "filesystem error:
// cannot create directories: File name too long [PATH]"; a link whose target is missing says so,
// where the system's reason ("File exists") would mislead.
std::string filesystem_error_line(const std::filesystem::filesystem_error& error);

}  // namespace lengen::cli
