// A shipped quick config, trained from the CLI for a few hundred steps: the loss falls and the
// end-of-training evaluation writes every configured length. Sort, because it leaves its initial
// plateau within 300 steps (3.2 -> 0.34); copy's 1024-symbol vocabulary needs ~1k. The full quick sweeps are
// experiments (REPORT.md), not tests.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "lengen/config_io.h"
#include "lengen/run_folder.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;

TEST(QuickConfig, SortTrainsForAFewHundredStepsAndEvaluates) {
  const std::string config = std::string(LENGEN_SOURCE_DIR) + "/configs/quick/sort.json";
  const fs::path dir = fs::path(::testing::TempDir()) / ("lengen_quick_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string command = std::string(LENGEN_CLI_PATH) + " train " + config + " --out " + dir.string() +
                              " --set train.steps=300 --set train.warmup=30 --set train.log_every=50" +
                              " --set eval.samples=32 > " + dir.string() + ".out 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "see " << dir.string() << ".out";

  std::ifstream log(dir / "log.jsonl");
  double first = -1, last = -1;
  for (std::string line; std::getline(log, line);) {
    const auto record = nlohmann::json::parse(line);
    if (!record.contains("loss") || !record.contains("steps_per_s")) continue;  // validation lines
    if (first < 0) first = record["loss"].get<double>();
    last = record["loss"].get<double>();
  }
  ASSERT_GT(first, 0) << "no training loss in log.jsonl";
  EXPECT_LT(last, 0.75 * first) << "first " << first << ", last " << last;

  const auto results = read_json_file((dir / "results.json").string());
  const auto& forced = results["results"]["teacher_forced"];
  for (int64_t length : load_config(config).eval.lengths) {
    ASSERT_TRUE(forced.contains(std::to_string(length))) << length;
    EXPECT_EQ(forced[std::to_string(length)]["samples"], 32);
  }
  fs::remove_all(dir);
  fs::remove(dir.string() + ".out");
}

}  // namespace
}  // namespace lengen
