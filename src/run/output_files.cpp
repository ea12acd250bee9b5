#include "lengen/output_files.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "lengen/atomic_write.h"
#include "lengen/errors.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// DIR/.lengen_outputs, one name a line.
std::set<std::string> read_list(const fs::path& list_path) {
  std::set<std::string> names;
  std::ifstream in(list_path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) names.insert(line);
  return names;
}

void write_list(const fs::path& list_path, const std::set<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += name + "\n";
  write_file_atomically(list_path.string(), text);
}

}  // namespace

void check_output_folder_path(const std::string& dir, const std::string& what) {
  std::error_code error;
  const fs::path absolute = fs::absolute(dir, error).lexically_normal();
  if (!error && absolute == absolute.root_path())
    throw UserError("--out " + dir + " is the filesystem root; choose a folder to write into");
  if (fs::exists(dir, error) && !fs::is_directory(dir, error))
    throw UserError("--out " + dir + " is a file, not a " + what);
}

void check_output_files(const std::string& dir, const std::vector<std::string>& names) {
  check_output_folder_path(dir);
  const fs::path list_path = fs::path(dir) / kOutputListName;
  const std::set<std::string> listed = read_list(list_path);
  std::error_code error;
  for (const std::string& name : names) {
    const fs::path path = fs::path(dir) / name;
    if (fs::exists(fs::symlink_status(path, error)) && listed.count(name) == 0) {
      throw UserError(path.string() + " exists and lengen did not write it (it is not listed in " +
                      list_path.string() +
                      "); lengen replaces only its own files: move it or choose another --out");
    }
  }
}

void claim_output_files(const std::string& dir, const std::vector<std::string>& names) {
  check_output_files(dir, names);
  std::set<std::string> listed = read_list(fs::path(dir) / kOutputListName);
  const size_t before = listed.size();
  listed.insert(names.begin(), names.end());
  if (listed.size() == before) return;
  fs::create_directories(dir);
  write_list(fs::path(dir) / kOutputListName, listed);
}

void remove_listed_output_files(const std::string& dir,
                                const std::function<bool(const std::string&)>& which) {
  const fs::path list_path = fs::path(dir) / kOutputListName;
  std::error_code error;
  if (!fs::exists(list_path, error)) return;
  std::set<fs::path> folders;
  std::set<std::string> kept;
  for (const std::string& name : read_list(list_path)) {
    if (which && !which(name)) {
      kept.insert(name);
      continue;
    }
    fs::remove(fs::path(dir) / name);
    for (fs::path above = fs::path(name).parent_path(); !above.empty(); above = above.parent_path())
      folders.insert(fs::path(dir) / above);
  }
  // Deepest first: a folder of maps, then the run's folder of them. One holding a file of the
  // user's stays.
  for (auto folder = folders.rbegin(); folder != folders.rend(); ++folder) {
    if (fs::is_directory(fs::symlink_status(*folder, error)) && fs::is_empty(*folder, error))
      fs::remove(*folder, error);
  }
  if (kept.empty())
    fs::remove(list_path);
  else
    write_list(list_path, kept);
}

std::unique_ptr<FolderLock> lock_output_folder(const std::string& dir) {
  fs::create_directories(dir);
  return std::make_unique<FolderLock>(dir);
}

void write_output_file(const std::string& dir, const std::string& name, const std::string& text) {
  claim_output_files(dir, {name});
  write_file_atomically((fs::path(dir) / name).string(), text);
}

}  // namespace lengen
