// configs/quick/*.json compiled in: CMakeLists.txt writes shipped_quick_configs.inc at configure time.
#include "lengen/shipped_configs.h"

#include "lengen/config_io.h"
#include "lengen/errors.h"

namespace lengen {
namespace {

struct ShippedConfig {
  const char* name;
  const char* text;
};

constexpr ShippedConfig kShippedQuickConfigs[] = {
#include "shipped_quick_configs.inc"
};

}  // namespace

std::vector<std::string> shipped_quick_config_names() {
  std::vector<std::string> names;
  for (const ShippedConfig& shipped : kShippedQuickConfigs) names.emplace_back(shipped.name);
  return names;
}

Config shipped_quick_config(const std::string& name) {
  for (const ShippedConfig& shipped : kShippedQuickConfigs) {
    if (name == shipped.name) {
      Config config = config_from_string(shipped.text, "configs/quick/" + name + ".json");
      validate_config(config, "configs/quick/" + name + ".json");
      return config;
    }
  }
  throw UserError(unknown_name_message("shipped quick config", name, shipped_quick_config_names()));
}

}  // namespace lengen
