#include "lengen/file_removal.h"

#include "lengen/errors.h"

namespace lengen {

void FileRemoval::remove(const std::filesystem::path& file) {
  std::error_code error;
  const bool removed = std::filesystem::remove(file, error);
  if (!error) {
    if (removed) removed_.push_back(file.string());
    return;
  }
  std::string message =
      "cannot remove " + file.string() + ": " + error.message() + "; " + what_ + " stopped there";
  if (removed_.empty()) {
    message += ", before removing anything";
  } else {
    constexpr size_t kNamed = 6;
    message += ", after removing";
    for (size_t i = 0; i < removed_.size() && i < kNamed; ++i) message += (i ? ", " : " ") + removed_[i];
    if (removed_.size() > kNamed) message += " and " + std::to_string(removed_.size() - kNamed) + " more";
  }
  throw UserError(message);
}

}  // namespace lengen
