#pragma once
// Files lengen writes into a folder the user names (--out). DIR/.lengen_outputs lists lengen's
// names; a file under any other name is the user's and is never replaced or removed.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lengen/folder_lock.h"

namespace lengen {

constexpr const char* kOutputListName = ".lengen_outputs";

// UserError unless lengen may write each of `names` (relative to `dir`); writes nothing.
void check_output_files(const std::string& dir, const std::vector<std::string>& names);

// check_output_files, then lists `names` before they are written. Hold lock_output_folder.
void claim_output_files(const std::string& dir, const std::vector<std::string>& names);

// What check_output_files checks of DIR itself: not the root (an --out built from an unset
// variable), and a folder or one it can become ("--out DIR is a file, not a WHAT").
void check_output_folder_path(const std::string& dir, const std::string& what = "folder");

// Removes the listed files (only those `which` accepts, when given) and folders they leave empty.
void remove_listed_output_files(const std::string& dir,
                                const std::function<bool(const std::string&)>& which = nullptr);

// Creates DIR when missing and takes its lock: one writer of an output folder at a time.
std::unique_ptr<FolderLock> lock_output_folder(const std::string& dir);

// claim_output_files(dir, {name}), then DIR/NAME written atomically.
void write_output_file(const std::string& dir, const std::string& name, const std::string& text);

}  // namespace lengen
