#include "lengen/output_files.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "lengen/atomic_write.h"
#include "lengen/errors.h"
#include "lengen/run_folder.h"
#include "lengen/run_lock.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

std::set<std::string> listed_names(const fs::path& list_path) {
  std::set<std::string> ours;
  std::ifstream in(list_path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) ours.insert(line);
  }
  return ours;
}

}  // namespace

bool listed_output_file(const std::string& dir, const std::string& name) {
  return listed_names(fs::path(dir) / kOutputListName).count(name) > 0;
}

void claim_output_files(const std::string& dir, const std::vector<std::string>& names) {
  // The root holds the system, not a report or a data set (an --out built from an unset
  // variable, "$OUT/", is one typo away from it).
  std::error_code root_error;
  const fs::path absolute = fs::absolute(dir, root_error).lexically_normal();
  if (!root_error && absolute == absolute.root_path()) {
    throw UserError("--out " + dir + " is the filesystem root; choose a folder to write into");
  }
  check_out_folder(dir, "folder");
  // A run folder that is being trained or evaluated has one writer, and it is not this one.
  if (run_in_use_elsewhere(dir)) {
    throw UserError(dir + " is a run folder in use by another lengen process; write into it when that ends, or "
                          "choose another --out");
  }
  const fs::path list_path = fs::path(dir) / kOutputListName;
  std::set<std::string> ours = listed_names(list_path);
  std::error_code error;
  for (const std::string& name : names) {
    const fs::path path = fs::path(dir) / name;
    if (fs::exists(fs::symlink_status(path, error)) && ours.count(name) == 0) {
      throw UserError(path.string() + " exists and lengen did not write it (it is not listed in " +
                      list_path.string() + "); lengen replaces only its own files: move it or choose another --out");
    }
  }
  const size_t before = ours.size();
  ours.insert(names.begin(), names.end());
  if (ours.size() == before && fs::exists(list_path, error)) return;
  fs::create_directories(dir);
  std::ostringstream text;
  for (const std::string& name : ours) text << name << "\n";
  write_file_atomically(list_path.string(), text.str());
}

void write_output_file(const std::string& dir, const std::string& name, const std::string& text) {
  claim_output_files(dir, {name});
  write_file_atomically((fs::path(dir) / name).string(), text);
}

}  // namespace lengen
