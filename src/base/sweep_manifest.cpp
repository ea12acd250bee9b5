#include "lengen/sweep_manifest.h"

#include <algorithm>

#include "lengen/errors.h"
#include "lengen/json_file.h"

namespace lengen {

nlohmann::json read_sweep_manifest(const std::string& dir) {
  const std::string path = dir + "/" + kSweepManifestName;
  nlohmann::json manifest = read_json_file(path);
  const auto is_run = [](const nlohmann::json& entry) {
    return entry.is_object() && entry.contains("name") && entry["name"].is_string();
  };
  if (!manifest.is_object() || !manifest.contains("runs") || !manifest["runs"].is_array() ||
      !std::all_of(manifest["runs"].begin(), manifest["runs"].end(), is_run)) {
    throw UserError(path +
                    " is not a lengen sweep manifest (expected {\"runs\": [{\"name\": ...}, ...]}); lengen "
                    "did not write it");
  }
  return manifest;
}

}  // namespace lengen
