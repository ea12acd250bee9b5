// Which runs a report reads: a sweep's listed runs, one run, or a folder of runs; and the runs it
// names instead of showing (not evaluated, failed, not listed, in folders further down).
#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "lengen/errors.h"
#include "lengen/report.h"
#include "lengen/run_folder.h"
#include "lengen/sweep_manifest.h"
#include "run_groups.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// The run names DIR/sweep.json lists, in its order; none without it.
std::vector<std::string> listed_names(const std::string& dir) {
  std::vector<std::string> names;
  if (!fs::exists(fs::path(dir) / kSweepManifestName)) return names;
  const nlohmann::json manifest = read_sweep_manifest(dir);  // kept: the loop reads into it
  for (const auto& entry : manifest.at("runs")) names.push_back(entry.at("name").get<std::string>());
  return names;
}

// Every run's results under `dir`, as collect_runs reads them.
std::vector<ReadRun> read_runs(const std::string& dir, bool on_files, const std::string& decode) {
  std::vector<ReadRun> runs;
  const auto read = [&](const std::string& name, const fs::path& folder) {
    for (ReadRun& one : read_run(name, (folder / "results.json").string(), on_files, decode))
      runs.push_back(std::move(one));
  };
  const fs::path root(dir);
  if (fs::exists(root / kSweepManifestName)) {
    for (const std::string& name : listed_names(dir)) {
      if (fs::exists(root / name / "results.json")) read(name, root / name);
    }
  } else if (fs::exists(root / "results.json")) {
    read(root.filename().string(), root);
  } else if (fs::is_directory(root)) {
    std::vector<fs::path> folders;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (fs::exists(entry.path() / "results.json")) folders.push_back(entry.path());
    }
    std::sort(folders.begin(), folders.end());
    for (const auto& folder : folders) read(folder.filename().string(), folder);
  }
  return runs;
}

// Why `dir` holds no run to read, as an error.
[[noreturn]] void throw_no_runs(const std::string& dir) {
  const fs::path root(dir);
  if (fs::exists(root / kSweepManifestName)) {
    // A sweep stopped before its first evaluation has started runs here; a sweep.json copied
    // from another sweep lists runs that are not here.
    const std::vector<std::string> listed = listed_names(dir);
    std::set<std::string> started;
    for (const std::string& name : listed) {
      std::error_code error;
      if (fs::is_directory(root / name, error)) started.insert(name);
    }
    if (!started.empty()) {
      throw UserError(dir + " holds no evaluated run yet: " + std::to_string(started.size()) + " of the " +
                      std::to_string(listed.size()) + " runs its " + kSweepManifestName +
                      " lists are started, none evaluated (a sweep stopped before its first run ended? run "
                      "the sweep again to resume it, or lengen eval DIR/NAME)");
    }
    throw UserError(dir + " holds no evaluated run of the runs its " + kSweepManifestName +
                    " lists (no NAME/results.json for any of them; a sweep.json of another sweep?)");
  }
  // Runs a level or more down (a folder of sweeps) are named: report one of them.
  const std::vector<std::string> below = folders_of_runs_below(dir);
  throw UserError(dir + " holds no evaluated run (no results.json)" +
                  (below.empty()
                       ? std::string()
                       : "; folders of runs below it: " + fmt::format("{}", fmt::join(below, ", "))));
}

}  // namespace

std::vector<RunResults> collect_runs(const std::string& dir, bool on_files,
                                     std::vector<std::string>* left_out, const std::string& decode) {
  std::vector<ReadRun> runs = read_runs(dir, on_files, decode);
  if (runs.empty()) throw_no_runs(dir);
  std::vector<std::string> named;
  // A run evaluated only on the other kind of data has no row here: it is named, not shown as a
  // row of "-" under an empty label.
  std::vector<ReadRun> evaluated;
  for (ReadRun& run : runs) {
    if (!run.run.results.empty()) {
      evaluated.push_back(std::move(run));
    } else {
      named.push_back(run.run.name + (on_files
                                          ? " (no results on --data files)"
                                          : " (results on --data files only: lengen report --on-files)"));
    }
  }
  if (evaluated.empty()) {
    throw UserError(dir + " holds no run evaluated on " + (on_files ? "--data files" : "generated data") +
                    (on_files ? "" : " (results on --data files: lengen report --on-files)"));
  }
  // A run without results of the decode mode reported is in no row, and labels none (its checkpoint
  // or decode cap would tell the rows apart); kept when no run has them, for the caller to say so.
  const auto has_decode = [&](const ReadRun& run) { return run.run.results.count(decode) > 0; };
  if (!decode.empty() && std::any_of(evaluated.begin(), evaluated.end(), has_decode)) {
    std::vector<ReadRun> with_decode;
    for (ReadRun& run : evaluated) {
      if (has_decode(run))
        with_decode.push_back(std::move(run));
      else
        named.push_back(run.run.name + " (no " + decode + " results)");
    }
    evaluated = std::move(with_decode);
  }
  std::vector<ReadRun> kept = without_repeats(std::move(evaluated), named);
  if (left_out != nullptr) *left_out = std::move(named);
  return with_variants(std::move(kept));
}

std::vector<std::string> runs_left_out(const std::string& dir) {
  std::vector<std::string> left_out;
  const fs::path root(dir);
  if (!fs::exists(root / kSweepManifestName)) {
    // A folder of runs: a run folder without results (in training, stopped, diverged) is named.
    if (fs::exists(root / "results.json")) return left_out;
    std::vector<std::string> unevaluated;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(root, error)) {
      if (RunFolder(entry.path().string()).is_lengen_run() && !fs::exists(entry.path() / "results.json"))
        unevaluated.push_back(printable(entry.path().filename().string()) +
                              " (a run folder without results.json)");
    }
    std::sort(unevaluated.begin(), unevaluated.end());
    return unevaluated;
  }
  // Run folders the sweep does not list (a run trained into the folder by hand, a copy) are not
  // the sweep's: named, not reported.
  const std::vector<std::string> names = listed_names(dir);
  const std::set<std::string> listed(names.begin(), names.end());
  std::vector<std::string> unlisted;
  for (const auto& entry : fs::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (listed.count(name) == 0 && fs::exists(entry.path() / "results.json")) unlisted.push_back(name);
  }
  std::sort(unlisted.begin(), unlisted.end());
  for (const std::string& name : unlisted) {
    left_out.push_back(name + " (a run folder " + kSweepManifestName + " does not list: lengen report " +
                       (root / name).string() + ")");
  }
  for (const std::string& name : names) {
    if (fs::exists(root / name / "results.json")) continue;
    const fs::path failure = root / (name + kSweepFailureSuffix);
    if (fs::exists(failure)) {
      std::ifstream in(failure);
      std::string first_line;
      std::getline(in, first_line);
      left_out.push_back(name + " (failed: " + first_line + "; see " + failure.filename().string() + ")");
    } else if (fs::is_directory(root / name)) {
      left_out.push_back(name + " (not evaluated: no results.json yet)");
    } else {
      left_out.push_back(name + " (no run folder)");
    }
  }
  return left_out;
}

std::vector<std::string> folders_of_runs_below(const std::string& dir) {
  std::vector<std::string> folders;
  const fs::path root(dir);
  if (fs::exists(root / "results.json")) return folders;
  // In a sweep's folder, its own runs are read (or named by runs_left_out).
  const std::vector<std::string> names = listed_names(dir);
  const std::set<std::string> listed(names.begin(), names.end());
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(root, error)) {
    if (!entry.is_directory(error) || RunFolder(entry.path().string()).is_lengen_run() ||
        fs::exists(entry.path() / "results.json") || listed.count(entry.path().filename().string()) > 0)
      continue;
    // Runs at any depth below it (a few levels: a sweep folder inside a folder of projects).
    constexpr int kDepth = 4;
    bool holds_runs = fs::exists(entry.path() / kSweepManifestName);
    for (auto inner = fs::recursive_directory_iterator(entry.path(), error);
         !holds_runs && !error && inner != fs::recursive_directory_iterator(); inner.increment(error)) {
      if (inner.depth() >= kDepth) inner.disable_recursion_pending();
      holds_runs = inner->path().filename() == "results.json";
    }
    if (holds_runs)
      folders.push_back(printable(entry.path().filename().string()) + " (lengen report " +
                        printable(entry.path().string()) + ")");
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

}  // namespace lengen
