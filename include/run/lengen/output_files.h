#pragma once
// Files lengen writes into a folder the user names (`report --out`, `attention --out`, `data --out`), where
// the user's own files may sit beside them. DIR/.lengen_outputs lists the names lengen wrote
// there, each with the content hash of what it wrote once written (sealed); a file that exists
// under a name not on the list, or whose bytes are not the sealed ones, is the user's and is
// never replaced or removed.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lengen/folder_lock.h"
#include "lengen/run_lock.h"

namespace lengen {

// The list's file name inside an output folder.
constexpr const char* kOutputListName = ".lengen_outputs";

// Checks that lengen may write each of `names` (paths relative to `dir`), writing nothing: a
// name whose file exists but is not on the list, or is not what lengen sealed, or that goes
// through a file of the user's, throws UserError naming it.
void check_output_files(const std::string& dir, const std::vector<std::string>& names);

// Checks as check_output_files, then adds `names` to the list, unsealed, before they are written,
// so that the next run may replace them. Creates `dir` when missing. Call it holding the folder
// (OutputFolderLock), which seals them when it lets go.
void claim_output_files(const std::string& dir, const std::vector<std::string>& names);

// Seals every name this process claimed whose file exists (records the hash of its bytes) and
// unlists those whose file does not (claimed, not written); names others left unsealed stay so.
void seal_output_files(const std::string& dir);

// UserError "--out DIR is the filesystem root; ..." when `dir` is "/" (an --out built from an
// unset variable, "$OUT/", is one typo away from it).
void check_out_is_not_root(const std::string& dir);

// What check_output_files checks of DIR itself, with no list to read: it is not the root and is,
// or can become, a folder. For an --out that is no folder yet, before the writer makes it (and
// takes its lock): the list of a writer that made it meanwhile is read under the lock only.
void check_output_folder_path(const std::string& dir);

// Takes `names` off DIR/.lengen_outputs: temporary files lengen wrote and renamed (NAME.part), so
// that a file of the user's made under that name later is not taken for lengen's.
void release_output_files(const std::string& dir, const std::vector<std::string>& names);

// True when DIR/.lengen_outputs lists `name`: lengen wrote that file and may replace or remove it.
bool listed_output_file(const std::string& dir, const std::string& name);

// A report or attention page belongs beside what it describes: `out_dir` may be one of
// `own_runs` (the run folders it describes) or a folder of no run, but not another run's folder,
// a folder inside a run folder (its checkpoints/) or a data folder `lengen data` wrote, where it
// would be taken for theirs. Throws UserError "--out DIR is ...".
void check_out_is_not_anothers(const std::string& out_dir, const std::vector<std::string>& own_runs);

// The run-folder half of it, for commands whose --out is no run's (data, sweep): `out_dir` may not
// be a run folder or lie inside one (its checkpoints/), unless it is one of `own_runs`.
void check_out_is_not_in_a_run(const std::string& out_dir, const std::vector<std::string>& own_runs = {});

// Data and sweeps keep apart: `lengen data` refuses a sweep's folder and a sweep refuses a data
// folder lengen data wrote, where each one's files would be taken for part of the other. Throws
// UserError "--out DIR is ...".
void check_out_is_not_a_sweep_folder(const std::string& out_dir);
void check_out_is_not_a_data_folder(const std::string& out_dir);

// Removes the files DIR/.lengen_outputs lists (relative names only, nothing through a link out of
// DIR, no file whose bytes are not the sealed ones: that one is kept and unlisted) and the
// folders they leave empty: with `which`, those whose names it accepts, taken off
// the list (a report's pages before a new report replaces them, so that none of an earlier report
// stays beside it); without, all of them and the list (a run that --force starts over). UserError
// when a file cannot be removed.
void remove_listed_output_files(const std::string& dir,
                                const std::function<bool(const std::string&)>& which = nullptr);

// One writer of an output folder's pages at a time (two reports into one --out would mix their
// files): the run's lock when the folder is a run folder, else an flock on the folder. UserError
// in one line when another process holds it. Creates the folder when missing; seals its list
// (seal_output_files) when it lets go, however the writer ends short of being killed.
class OutputFolderLock {
 public:
  explicit OutputFolderLock(const std::string& dir);
  ~OutputFolderLock();
  OutputFolderLock(const OutputFolderLock&) = delete;
  OutputFolderLock& operator=(const OutputFolderLock&) = delete;

 private:
  std::string dir_;
  std::unique_ptr<RunLock> run_lock_;
  std::unique_ptr<FolderLock> folder_lock_;
};

// claim_output_files(dir, {name}), then DIR/NAME written atomically.
void write_output_file(const std::string& dir, const std::string& name, const std::string& text);

}  // namespace lengen
