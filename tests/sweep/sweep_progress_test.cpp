// What a sweep shows while it runs: a line per finished run with its wall time and its exact
// match at 1x and at the longest length, and on a terminal a live line of runs done, running and
// left with elapsed time and an ETA; the run lines are kept in the sweep's sweep_progress.txt too.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "cli_runner.h"
#include "temp_folder.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;

class SweepProgressCli : public testing::TempFolderTest {
 protected:
  SweepProgressCli() : TempFolderTest("lengen_sweep_progress") {}
  void SetUp() override {
    TempFolderTest::SetUp();
    std::string config = testing::tiny_copy_json(3);
    const std::string lengths = R"("lengths": [4])";
    config.replace(config.find(lengths), lengths.size(), R"("lengths": [4, 8])");
    config_ = (root_ / "tiny.json").string();
    std::ofstream(config_) << config;
  }
  std::string command() const {
    return "sweep --base " + config_ + " --grid train.seed=1,2 --out " + (root_ / "runs").string();
  }
  std::string config_;
};

TEST_F(SweepProgressCli, EachFinishedRunSaysItsWallTimeAndExactMatchAtOneAndLongest) {
  const auto result = testing::run_lengen(root_, command());
  ASSERT_EQ(result.code, 0) << result.out << result.err;
  for (const char* name : {"seed1", "seed2"}) {
    const std::regex line(std::string("done ") + name +
                          " in [0-9ms]+: exact match [0-9]+\\.[0-9]% at 4 \\(1x\\), [0-9]+\\.[0-9]% at 8; "
                          "token accuracy [0-9]+\\.[0-9]%, [0-9]+\\.[0-9]%\n");
    EXPECT_TRUE(std::regex_search(result.out, line)) << result.out;
  }
  // Not a terminal: no live line drawn over itself.
  EXPECT_EQ(result.err.find("\033[K"), std::string::npos) << result.err;
  // The same lines stay in the sweep's folder, for a sweep run in the background.
  const std::string kept = testing::text_of(root_ / "runs" / "sweep_progress.txt");
  EXPECT_TRUE(std::regex_search(kept, std::regex("done seed1 in [0-9ms]+: exact match"))) << kept;
  EXPECT_TRUE(std::regex_search(kept, std::regex("done seed2 in [0-9ms]+: exact match"))) << kept;
  // Each ended run counts the runs ended so far against the sweep's.
  EXPECT_NE(kept.find("[1/2] done seed"), std::string::npos) << kept;
  EXPECT_NE(kept.find("[2/2] done seed"), std::string::npos) << kept;
}

TEST_F(SweepProgressCli, OnATerminalOneLiveLineCountsRunsWithAnEta) {
  if (std::system("command -v script > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "no `script` to give a terminal";
  const fs::path typescript = root_ / "terminal.txt";
  // script(1) runs the sweep on a pseudo-terminal and copies what it shows into terminal.txt.
  const std::string inner = std::string(LENGEN_CLI_PATH) + " " + command();
  const std::string shell =
      "script -qec '" + inner + "' " + typescript.string() + " > /dev/null 2>&1 < /dev/null";
  ASSERT_EQ(std::system(shell.c_str()), 0) << testing::text_of(typescript);
  const std::string shown = testing::text_of(typescript);
  EXPECT_NE(shown.find("\r\033[Ksweep: 0 done, 1 running, 1 left, "), std::string::npos) << shown;
  EXPECT_NE(shown.find("ETA after the first run ends"), std::string::npos) << shown;
  EXPECT_TRUE(
      std::regex_search(shown, std::regex("sweep: 1 done, 1 running, 0 left, [0-9ms]+ elapsed, ETA [0-9ms]+")))
      << shown;
  EXPECT_NE(shown.find("done seed2 in "), std::string::npos) << shown;
}

}  // namespace
}  // namespace lengen
