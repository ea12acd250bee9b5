#pragma once
// Command-line tests in a fresh folder holding a tiny copy config (base.json): lengen runs there
// as a user would run it, and the test reads what it printed and wrote.
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "cli_runner.h"
#include "temp_folder.h"

namespace lengen::testing {

class CliFolderTest : public TempFolderTest {
 protected:
  explicit CliFolderTest(std::string prefix) : TempFolderTest(std::move(prefix)) {}

  void SetUp() override {
    TempFolderTest::SetUp();
    std::ofstream(root_ / "base.json") << tiny_copy_json();
  }
  // `lengen ARGS` run from the folder, after `prefix` (an environment, a wrapper).
  CliResult lengen(const std::string& args, const std::string& prefix = "") {
    return run_lengen(root_, args, prefix);
  }
  std::string base() const { return (root_ / "base.json").string(); }
  std::string at(const std::string& name) const { return (root_ / name).string(); }

  // A tiny run trained (and evaluated) from base.json at ROOT/NAME, with `extra` options.
  std::string trained(const std::string& name, const std::string& extra = "") {
    const CliResult result = lengen("train " + base() + " --out " + at(name) + extra);
    EXPECT_EQ(result.code, 0) << result.err;
    return at(name);
  }
};

}  // namespace lengen::testing
