#include "lengen/output_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "lengen/atomic_write.h"
#include "lengen/errors.h"
#include "lengen/run_folder.h"
#include "lengen/sweep_manifest.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// DIR/.lengen_outputs, one name a line. A list an older lengen wrote has "NAME<TAB>HASH" lines:
// only the name is read.
std::set<std::string> read_list(const fs::path& list_path) {
  std::set<std::string> names;
  std::ifstream in(list_path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) names.insert(line.substr(0, line.find('\t')));
  }
  return names;
}

void write_list(const fs::path& list_path, const std::set<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += name + "\n";
  write_file_atomically(list_path.string(), text);
}

}  // namespace

bool listed_output_file(const std::string& dir, const std::string& name) {
  return read_list(fs::path(dir) / kOutputListName).count(name) > 0;
}

void check_output_folder_path(const std::string& dir) {
  check_out_is_not_root(dir);
  check_out_folder(dir, "folder");
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

// Takes `names` off the list: files lengen removed and does not write again.
static void release_output_files(const std::string& dir, const std::vector<std::string>& names) {
  std::set<std::string> listed = read_list(fs::path(dir) / kOutputListName);
  const size_t before = listed.size();
  for (const std::string& name : names) listed.erase(name);
  if (listed.size() != before) write_list(fs::path(dir) / kOutputListName, listed);
}

void check_out_is_not_root(const std::string& dir) {
  std::error_code error;
  const fs::path absolute = fs::absolute(dir, error).lexically_normal();
  if (!error && absolute == absolute.root_path()) {
    throw UserError("--out " + dir + " is the filesystem root; choose a folder to write into");
  }
}

void check_out_is_not_in_a_run(const std::string& out_dir, const std::vector<std::string>& own_runs) {
  std::error_code error;
  // Where the files would land: a link to (or into) a run folder is that run folder.
  const fs::path out = resolved_path(out_dir);
  const fs::path folder = run_folder_at_or_above(out);
  const bool own = std::any_of(own_runs.begin(), own_runs.end(),
                               [&](const std::string& run) { return fs::equivalent(folder, run, error); });
  if (folder.empty() || (folder == out && own)) return;
  throw UserError("--out " + out_dir +
                  (folder != out         ? " is inside the run folder " + folder.string()
                   : own_runs.empty()    ? std::string(" is a run folder")
                                         : std::string(" is the run folder of another run than the one described")) +
                  ": what is written there would be taken for that run's; choose another --out");
}

void check_out_is_not_anothers(const std::string& out_dir, const std::vector<std::string>& own_runs) {
  check_out_is_not_in_a_run(out_dir, own_runs);
  std::error_code error;
  // A sweep's folder holds its report: one of other runs written there would pass for the sweep's.
  const bool own_folder = std::any_of(own_runs.begin(), own_runs.end(),
                                      [&](const std::string& own) { return fs::equivalent(out_dir, own, error); });
  if (fs::exists(fs::path(out_dir) / kSweepManifestName, error) && !own_folder) {
    throw UserError("--out " + out_dir +
                    " is the folder of a sweep not described here: what is written there would be taken for "
                    "its report; choose another --out");
  }
}

void remove_listed_output_files(const std::string& dir,
                                const std::function<bool(const std::string&)>& which) {
  const fs::path list_path = fs::path(dir) / kOutputListName;
  std::error_code error;
  if (!fs::exists(list_path, error)) return;
  std::set<fs::path> folders;
  std::vector<std::string> removed;
  for (const std::string& name : read_list(list_path)) {
    if (which && !which(name)) continue;
    removed.push_back(name);
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
  if (which) {
    release_output_files(dir, removed);
    return;
  }
  fs::remove(list_path);
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
