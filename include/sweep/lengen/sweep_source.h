#pragma once
// Where a sweep comes from: a sweep file, with `--set`s for every run, or the command line alone
// (`--base CONFIG --grid KEY=V1,V2 --set KEY=VALUE`). Both become the JSON a sweep file holds and
// expand by that file's rules (lengen/sweep.h), so a sweep typed out names its runs as a file would.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lengen/sweep.h"

namespace lengen {

struct SweepSource {
  std::string path;               // a sweep file; "" for a sweep from the command line
  std::string base;               // --base CONFIG: the config every run starts from
  std::vector<std::string> grid;  // --grid KEY=V1,V2: one axis each, in order, first outermost
  std::vector<std::string> set;   // --set KEY=VALUE: applied to every run (over a file's "set")
};

// The sweep file `source` stands for: the file with the --sets put into its "set", or
// {"description", "base", "grid", "set"} built from the options. A value is typed as `--set`
// types it; a grid's values are split at the commas outside brackets, braces and quotes.
nlohmann::ordered_json sweep_json_of(const SweepSource& source);

// The sweep as load_sweep expands and checks a file.
Sweep load_sweep(const SweepSource& source);

}  // namespace lengen
