#pragma once
// Removing a set of files one by one (a --force restart, a report's earlier pages): when one
// cannot go, the message names it and what went before it, so a removal that stopped halfway
// says where the folder stands.
#include <filesystem>
#include <string>
#include <vector>

namespace lengen {

class FileRemoval {
 public:
  // `what` names the whole removal in the message ("--force", "the earlier report's pages").
  explicit FileRemoval(std::string what) : what_(std::move(what)) {}

  // Removes `file`; UserError "cannot remove FILE: reason; WHAT stopped there, after removing
  // A, B, ..." when it cannot.
  void remove(const std::filesystem::path& file);

 private:
  std::string what_;
  std::vector<std::string> removed_;
};

}  // namespace lengen
