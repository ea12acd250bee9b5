// The configs/quick/*.json compiled into the bench layer are the files of the source tree, all of
// them, read as `lengen train` reads them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/shipped_configs.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;

TEST(CompiledQuickConfigs, AreTheSourceTreesFilesReadAsAFileIs) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(fs::path(LENGEN_SOURCE_DIR) / "configs" / "quick")) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().stem().string());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  EXPECT_EQ(shipped_quick_config_names(), files);
  for (const std::string& name : files) {
    const std::string path = std::string(LENGEN_SOURCE_DIR) + "/configs/quick/" + name + ".json";
    EXPECT_EQ(config_to_json(shipped_quick_config(name)), config_to_json(load_config(path))) << name;
  }
}

TEST(CompiledQuickConfigs, AnUnknownNameIsNamedWithTheKnownOnes) {
  try {
    shipped_quick_config("mqmtarr");
    FAIL() << "no error";
  } catch (const UserError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("unknown shipped quick config 'mqmtarr' (did you mean 'mqmtar'?)"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace lengen
