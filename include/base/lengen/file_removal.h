#pragma once
#include <filesystem>

namespace lengen {

// Removes `file` (nothing when it is not there); UserError "cannot remove FILE: reason" when it
// cannot go, so that a removal stopped halfway names where it stopped.
void remove_file(const std::filesystem::path& file);

}  // namespace lengen
