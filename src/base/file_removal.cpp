#include "lengen/file_removal.h"

#include "lengen/errors.h"

namespace lengen {

void remove_file(const std::filesystem::path& file) {
  std::error_code error;
  std::filesystem::remove(file, error);
  if (error) throw UserError("cannot remove " + file.string() + ": " + error.message());
}

}  // namespace lengen
