#include "filesystem_error_line.h"

namespace lengen::cli {

namespace fs = std::filesystem;

std::string filesystem_error_line(const fs::filesystem_error& error) {
  std::string what = error.what();
  const std::string prefix = "filesystem error: ";
  if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
  std::string reason = error.code().message();
  const size_t reason_at = what.find(": " + reason);
  if (error.path1().empty() || reason_at == std::string::npos) return what;
  std::string paths = error.path1().string();
  if (!error.path2().empty()) paths += " and " + error.path2().string();
  std::error_code ignored;
  if (fs::is_symlink(error.path1(), ignored) && !fs::exists(error.path1(), ignored)) {
    reason =
        "it is a link to " + fs::read_symlink(error.path1(), ignored).string() + ", which does not exist";
  }
  return what.substr(0, reason_at) + " " + paths + ": " + reason;
}

}  // namespace lengen::cli
