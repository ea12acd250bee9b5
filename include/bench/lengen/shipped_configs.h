#pragma once
// The configs/quick/*.json files compiled into the program, so benchmarks time their shapes.
#include <string>
#include <vector>

#include "lengen/config.h"

namespace lengen {

// "copy", "mqmtar", ...: the file names without .json, sorted.
std::vector<std::string> shipped_quick_config_names();

// configs/quick/NAME.json, parsed and validated; UserError naming the known names otherwise.
Config shipped_quick_config(const std::string& name);

}  // namespace lengen
