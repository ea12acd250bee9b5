#include "lengen/output_files.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "lengen/atomic_write.h"
#include "lengen/content_hash.h"
#include "lengen/errors.h"
#include "lengen/file_removal.h"
#include "lengen/run_folder.h"
#include "lengen/run_lock.h"
#include "lengen/sweep_manifest.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// DIR/.lengen_outputs, one name a line: "NAME" while lengen is writing it (claimed), "NAME<TAB>HASH"
// once written (sealed), HASH being the content hash of what lengen wrote. A sealed file whose
// bytes differ is no longer lengen's: someone wrote their own file under that name.
using OutputList = std::map<std::string, std::string>;  // name -> content hash, "" while unsealed

OutputList read_list(const fs::path& list_path) {
  OutputList list;
  std::ifstream in(list_path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos)
      list[line] = "";
    else
      list[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return list;
}

void write_list(const fs::path& list_path, const OutputList& list) {
  std::ostringstream text;
  for (const auto& [name, hash] : list) text << name << (hash.empty() ? "" : "\t" + hash) << "\n";
  write_file_atomically(list_path.string(), text.str());
}

// A listed name as a path inside DIR, or "" when it leads elsewhere: a list edited to name files
// elsewhere (absolute, "../", through a link) is not followed out of DIR.
fs::path listed_path(const std::string& dir, const std::string& name) {
  const fs::path relative = fs::path(name).lexically_normal();
  if (relative.is_absolute() || relative.empty() || *relative.begin() == "..") return {};
  std::error_code error;
  for (fs::path above = relative.parent_path(); !above.empty(); above = above.parent_path()) {
    if (fs::is_symlink(fs::path(dir) / above, error)) return {};
  }
  return fs::path(dir) / relative;
}

std::string hash_of_file(const fs::path& path) {
  ContentHash hash;
  hash.add_file(path.string());
  return hash.hex();
}

// The files this process claimed (absolute paths): written by it since, before it seals them.
std::set<std::string>& claimed_here() {
  static std::set<std::string> claimed;
  return claimed;
}

std::string absolute_text(const fs::path& path) {
  std::error_code error;
  return fs::absolute(path, error).lexically_normal().string();
}

// True when the file at `path` is not provably what lengen wrote under `hash`: another file (a
// link, a folder, other bytes) stands there now, or the name is unsealed (listed by an older
// lengen, or by one killed while writing) and this process did not claim it. No file is not.
bool changed_since_written(const fs::path& path, const std::string& hash) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path, error);
  if (!fs::exists(status)) return false;
  if (hash.empty()) return claimed_here().count(absolute_text(path)) == 0;
  if (!fs::is_regular_file(status)) return true;
  try {
    return hash_of_file(path) != hash;
  } catch (const UserError&) {
    return true;  // unreadable: not provably lengen's
  }
}

// Why a listed file that changed_since_written is not provably lengen's, in words.
std::string why_not_lengens(const fs::path& path, const std::string& hash) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path, error);
  if (fs::is_symlink(status)) return "it is a link now";
  if (fs::is_directory(status)) return "it is a folder now";
  if (!fs::is_regular_file(status)) return "it is not a plain file now";
  return hash.empty() ? "listed without the hash of what lengen wrote" : "its bytes changed since";
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
  // A run folder that is being trained or evaluated has one writer, and it is not this one.
  if (run_in_use_elsewhere(dir)) {
    throw UserError(dir +
                    " is a run folder in use by another lengen process; write into it when that ends, or "
                    "choose another --out");
  }
  const fs::path list_path = fs::path(dir) / kOutputListName;
  const OutputList list = read_list(list_path);
  std::error_code error;
  for (const std::string& name : names) {
    const fs::path path = fs::path(dir) / name;
    // A folder the name goes through (a run's maps in OUT/RUN/) that is a file of the user's.
    for (fs::path above = fs::path(name).parent_path(); !above.empty(); above = above.parent_path()) {
      const fs::file_status status = fs::symlink_status(fs::path(dir) / above, error);
      if (fs::exists(status) && !fs::is_directory(status)) {
        throw UserError((fs::path(dir) / above).string() + " is not a folder, and lengen writes " + name +
                        " there; move it or choose another --out");
      }
    }
    const auto listed = list.find(name);
    if (fs::exists(fs::symlink_status(path, error)) && listed == list.end()) {
      throw UserError(path.string() + " exists and lengen did not write it (it is not listed in " +
                      list_path.string() +
                      "); lengen replaces only its own files: move it or choose another --out");
    }
    if (listed != list.end() && changed_since_written(path, listed->second)) {
      throw UserError(
          path.string() +
          (listed->second.empty()
               ? " is listed in " + list_path.string() +
                     " without the hash of what lengen wrote (by an older lengen, or one stopped while "
                     "writing), so lengen cannot tell it from a file of yours: delete it if it is "
                     "lengen's, or choose another --out"
               : " is not the file lengen wrote there (" + why_not_lengens(path, listed->second) +
                     "); lengen replaces only its own files: move it or choose another --out"));
    }
  }
}

void claim_output_files(const std::string& dir, const std::vector<std::string>& names) {
  check_output_files(dir, names);
  const fs::path list_path = fs::path(dir) / kOutputListName;
  OutputList list = read_list(list_path);
  std::error_code error;
  bool changed = !fs::exists(list_path, error);
  for (const std::string& name : names) {
    claimed_here().insert(absolute_text(fs::path(dir) / name));
    auto [entry, added] = list.emplace(name, "");
    changed = changed || added || !entry->second.empty();
    entry->second = "";  // about to be written again: sealed when written
  }
  if (!changed) return;
  fs::create_directories(dir);
  write_list(list_path, list);
}

void seal_output_files(const std::string& dir) {
  const fs::path list_path = fs::path(dir) / kOutputListName;
  std::error_code error;
  if (!fs::is_regular_file(fs::symlink_status(list_path, error))) return;
  OutputList list = read_list(list_path);
  bool changed = false;
  for (auto it = list.begin(); it != list.end();) {
    const fs::path path = listed_path(dir, it->first);
    const fs::file_status status = fs::symlink_status(path, error);
    // Only what this process claimed is sealed: a name an older lengen (or one stopped while
    // writing) left unsealed may hold a file of the user's now.
    if (!it->second.empty() || path.empty() || claimed_here().count(absolute_text(path)) == 0) {
      ++it;
    } else if (!fs::is_regular_file(status)) {
      // Claimed but not written (a plot without gnuplot), or no file of lengen's (a link): what
      // stands under that name later is not lengen's.
      it = list.erase(it);
      changed = true;
    } else {
      it->second = hash_of_file(path);
      ++it;
      changed = true;
    }
  }
  if (changed) write_list(list_path, list);
}

void release_output_files(const std::string& dir, const std::vector<std::string>& names) {
  const fs::path list_path = fs::path(dir) / kOutputListName;
  OutputList list = read_list(list_path);
  const size_t before = list.size();
  for (const std::string& name : names) list.erase(name);
  if (list.size() == before) return;
  write_list(list_path, list);
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
  const fs::path out = fs::weakly_canonical(fs::absolute(out_dir, error), error);
  if (error) return;  // claim_output_files names a folder it cannot use
  const auto is_own = [&](const fs::path& folder) {
    return std::any_of(own_runs.begin(), own_runs.end(),
                       [&](const std::string& run) { return fs::equivalent(folder, run, error); });
  };
  const fs::path folder = run_folder_at_or_above(out);
  if (folder.empty() || (folder == out && is_own(folder))) return;
  throw UserError("--out " + out_dir +
                  (folder != out ? " is inside the run folder " + folder.string()
                   : own_runs.empty()
                       ? std::string(" is a run folder")
                       : std::string(" is the run folder of another run than the one described")) +
                  ": what is written there would be taken for that run's; choose another --out");
}

namespace {

bool is_sweep_folder(const fs::path& out) {
  std::error_code error;
  return fs::exists(out / kSweepManifestName, error);
}

void refuse_data_folder(const std::string& out_dir, const fs::path& out) {
  std::error_code error;
  if (fs::exists(out / "data.json", error) && listed_output_file(out.string(), "data.json")) {
    throw UserError("--out " + out_dir +
                    " is a data folder lengen data wrote: what is written there would be taken for part of "
                    "the data; choose another --out");
  }
}

}  // namespace

void check_out_is_not_anothers(const std::string& out_dir, const std::vector<std::string>& own_runs) {
  check_out_is_not_in_a_run(out_dir, own_runs);
  std::error_code error;
  const fs::path out = fs::absolute(out_dir, error).lexically_normal();
  if (error) return;
  // A sweep's folder holds its report: one of other runs written there would pass for the sweep's.
  const bool own_folder = std::any_of(own_runs.begin(), own_runs.end(), [&](const std::string& own) {
    return fs::equivalent(out, own, error);
  });
  if (is_sweep_folder(out) && !own_folder) {
    throw UserError(
        "--out " + out_dir +
        " is the folder of a sweep not described here: what is written there would be taken for its "
        "report; choose another --out");
  }
  refuse_data_folder(out_dir, out);
}

void check_out_is_not_a_sweep_folder(const std::string& out_dir) {
  std::error_code error;
  const fs::path out = fs::absolute(out_dir, error).lexically_normal();
  if (!error && is_sweep_folder(out)) {
    throw UserError("--out " + out_dir +
                    " is a sweep's folder: data written there would sit among the sweep's runs; choose "
                    "another --out");
  }
}

void check_out_is_not_a_data_folder(const std::string& out_dir) {
  std::error_code error;
  const fs::path out = fs::absolute(out_dir, error).lexically_normal();
  if (!error) refuse_data_folder(out_dir, out);
}

void remove_listed_output_files(const std::string& dir,
                                const std::function<bool(const std::string&)>& which) {
  const fs::path list_path = fs::path(dir) / kOutputListName;
  std::error_code error;
  if (!fs::is_regular_file(fs::symlink_status(list_path, error))) return;
  std::set<fs::path> folders;
  std::vector<std::string> removed;
  FileRemoval removal("the removal of the earlier pages " + list_path.string() + " lists");
  for (const auto& [name, hash] : read_list(list_path)) {
    if (which && !which(name)) continue;
    removed.push_back(name);
    const fs::path file = listed_path(dir, name);
    if (file.empty()) continue;
    if (fs::is_directory(fs::symlink_status(file, error))) continue;  // a folder is not a file lengen wrote
    // Someone's own file under a name lengen wrote is theirs now: kept, and taken off the list.
    if (changed_since_written(file, hash)) {
      // Not provably lengen's: kept, and said, since it stands beside what is written now.
      spdlog::warn(
          "kept {}: it is not the file lengen wrote there ({}), so it is not removed with the "
          "pages it was listed with; it is no longer lengen's",
          file.string(), why_not_lengens(file, hash));
      continue;
    }
    removal.remove(file);
    for (fs::path above = fs::path(name).lexically_normal().parent_path(); !above.empty();
         above = above.parent_path())
      folders.insert(fs::path(dir) / above);
  }
  // Deepest first: a folder of maps, then the run's folder of them.
  for (auto folder = folders.rbegin(); folder != folders.rend(); ++folder) {
    if (fs::is_directory(fs::symlink_status(*folder, error)) && fs::is_empty(*folder, error))
      fs::remove(*folder, error);
  }
  if (which) {
    release_output_files(dir, removed);
    return;
  }
  fs::remove(list_path, error);
  if (error) throw UserError("cannot remove " + list_path.string() + ": " + error.message());
}

OutputFolderLock::OutputFolderLock(const std::string& dir) : dir_(dir) {
  std::error_code error;
  // A link whose target is gone: create_directories says only "File exists".
  if (fs::is_symlink(fs::symlink_status(dir, error)) && !fs::exists(dir, error)) {
    throw UserError("cannot create " + dir + ": it is a link to " + fs::read_symlink(dir, error).string() +
                    ", which does not exist (create the folder it leads to, or remove the link)");
  }
  fs::create_directories(dir, error);
  if (error) throw UserError("cannot create " + dir + ": " + error.message());
  if (RunFolder(dir).is_lengen_run()) {
    run_lock_ = std::make_unique<RunLock>(dir);
  } else {
    folder_lock_ = std::make_unique<FolderLock>(
        dir, "the output folder", FolderLock::WhenHeld::kRefuse,
        dir +
            " is being written by another lengen process (a report, attention page or data); wait for it to "
            "end, or choose another --out");
  }
}

OutputFolderLock::~OutputFolderLock() {
  // What the writer wrote is sealed, and names it claimed but did not write (it failed or was
  // refused halfway) are unlisted, so a file put there later is not taken for lengen's.
  try {
    seal_output_files(dir_);
  } catch (const std::exception&) {  // unreadable now: the names stay unsealed, trusted as before
  }
}

void write_output_file(const std::string& dir, const std::string& name, const std::string& text) {
  claim_output_files(dir, {name});
  write_file_atomically((fs::path(dir) / name).string(), text);
}

}  // namespace lengen
