#include "lengen/sweep_manifest.h"

#include <algorithm>

#include "lengen/errors.h"
#include "lengen/json_file.h"

namespace lengen {

nlohmann::json read_sweep_manifest(const std::string& dir) {
  const std::string path = dir + "/" + kSweepManifestName;
  nlohmann::json manifest = read_json_file(path);
  // A run's name is a folder of the sweep folder: never a path that leads out of it.
  const auto is_run = [](const nlohmann::json& entry) {
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string()) return false;
    const std::string name = entry["name"].get<std::string>();
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
  };
  if (!manifest.is_object() || !manifest.contains("runs") || !manifest["runs"].is_array() ||
      !std::all_of(manifest["runs"].begin(), manifest["runs"].end(), is_run)) {
    throw UserError(path +
                    " is not a lengen sweep manifest (expected {\"runs\": [{\"name\": ...}, ...]}, each name "
                    "a folder of its "
                    "own); "
                    "lengen did not write it");
  }
  return manifest;
}

}  // namespace lengen
