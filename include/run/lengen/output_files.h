#pragma once
// Files lengen writes into a folder the user names (`report --out`, `attention --out`, `data --out`),
// where the user's own files may sit beside them. DIR/.lengen_outputs lists the names lengen wrote
// there, one a line: a file under a listed name is lengen's, replaced and removed as lengen
// needs; a file under any other name is the user's and is never replaced or removed.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lengen/folder_lock.h"

namespace lengen {

// The list's file name inside an output folder.
constexpr const char* kOutputListName = ".lengen_outputs";

// Checks that lengen may write each of `names` (paths relative to `dir`), writing nothing: a
// name whose file exists but is not on the list, or that goes through a file of the user's,
// throws UserError naming it.
void check_output_files(const std::string& dir, const std::vector<std::string>& names);

// Checks as check_output_files, then adds `names` to the list before they are written. Creates
// `dir` when missing. Call it holding the folder's lock (lock_output_folder).
void claim_output_files(const std::string& dir, const std::vector<std::string>& names);

// UserError "--out DIR is the filesystem root; ..." when `dir` is "/" (an --out built from an
// unset variable, "$OUT/", is one typo away from it).
void check_out_is_not_root(const std::string& dir);

// What check_output_files checks of DIR itself: it is not the root and is, or can become, a
// folder. For an --out that may be no folder yet, before lock_output_folder makes it.
void check_output_folder_path(const std::string& dir);

// Takes `names` off DIR/.lengen_outputs: files lengen removed and does not write again, so that a
// file of the user's made under that name later is not taken for lengen's.
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

// Removes the files DIR/.lengen_outputs lists and the folders they leave empty: with `which`,
// those whose names it accepts, taken off the list (a report's pages before a new report replaces
// them, so that none of an earlier report stays beside it); without, all of them and the list (a
// run that --force starts over). UserError when a file cannot be removed.
void remove_listed_output_files(const std::string& dir,
                                const std::function<bool(const std::string&)>& which = nullptr);

// Creates DIR when missing and takes its lock (lengen/folder_lock.h): one writer of an output
// folder's files at a time (two reports into one --out would mix their files). FolderInUse in one
// line when another process holds it.
std::unique_ptr<FolderLock> lock_output_folder(const std::string& dir);

// claim_output_files(dir, {name}), then DIR/NAME written atomically.
void write_output_file(const std::string& dir, const std::string& name, const std::string& text);

}  // namespace lengen
