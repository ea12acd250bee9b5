// A short run from a long config: `--set train.steps=N` alone scales the warmup, validation and
// checkpoint intervals the config wrote for its own length, says so, and trains; a shipped config
// as written resolves exactly as it did before (tests/data/shipped_configs_resolved.json).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"
#include "temp_folder.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;
using testing::run_lengen;

const std::string kCopy = std::string(LENGEN_SOURCE_DIR) + "/configs/quick/copy.json";

TEST(StepScaling, StepsBelowTheConfigsScaleWarmupAndIntervals) {
  std::string note;
  const Config config = load_config(kCopy, {"train.steps=200"}, &note);
  EXPECT_EQ(config.train.steps, 200);
  EXPECT_EQ(config.train.warmup, 13);  // 1000 of 16000 steps: 6.25%, rounded
  EXPECT_EQ(config.train.eval_every, 20);
  EXPECT_EQ(config.train.checkpoint_every, 20);
  EXPECT_EQ(config.train.log_every, 20);  // a short run's loss curve has points to draw
  EXPECT_EQ(note,
            "train.steps=200 is below the config's 16000: scaled train.warmup 1000 -> 13, train.eval_every "
            "500 -> 20, train.checkpoint_every 500 -> 20, train.log_every 50 -> 20 (--set any of them to "
            "choose it yourself)");
}

TEST(StepScaling, KeysSetOnTheCommandLineAreLeftAsGiven) {
  std::string note;
  const Config config = load_config(kCopy, {"train.steps=200", "train.eval_every=50"}, &note);
  EXPECT_EQ(config.train.eval_every, 50);
  EXPECT_EQ(config.train.checkpoint_every, 20);
  EXPECT_EQ(config.train.warmup, 13);
  // A warmup set past the steps is the user's own mistake: named, not scaled away.
  try {
    load_config(kCopy, {"train.steps=200", "train.warmup=300"});
    FAIL() << "warmup 300 over 200 steps was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("train.warmup (300) must be <= train.steps (200)"),
              std::string::npos);
  }
}

TEST(StepScaling, NothingChangesWithoutAShorterRun) {
  std::string note = "unset";
  const Config as_written = load_config(kCopy, {}, &note);
  EXPECT_EQ(note, "");
  const Config longer = load_config(kCopy, {"train.steps=32000"}, &note);
  EXPECT_EQ(note, "");
  EXPECT_EQ(longer.train.warmup, as_written.train.warmup);
  EXPECT_EQ(longer.train.eval_every, as_written.train.eval_every);
  // Shorter, but long enough for what the config asks: nothing to scale.
  const Config shorter = load_config(kCopy, {"train.steps=8000"}, &note);
  EXPECT_EQ(note, "");
  EXPECT_EQ(shorter.train.warmup, 1000);
  EXPECT_EQ(shorter.train.checkpoint_every, 500);
}

// Each shipped config resolves as recorded: `lengen config show` of it is unchanged by any of
// this. After a deliberate change, LENGEN_UPDATE_GOLDEN=1 rewrites the record.
TEST(StepScaling, ShippedConfigsResolveAsRecorded) {
  const fs::path golden = fs::path(LENGEN_TEST_DATA_DIR) / "shipped_configs_resolved.json";
  nlohmann::json resolved = nlohmann::json::object();
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(LENGEN_SOURCE_DIR) / "configs")) {
    const fs::path path = entry.path();
    if (!entry.is_regular_file() || path.extension() != ".json" || path.parent_path().filename() == "sweeps")
      continue;
    const std::string name = fs::relative(path, LENGEN_SOURCE_DIR).string();
    resolved[name] = config_to_json(load_config(path.string()));
  }
  if (std::getenv("LENGEN_UPDATE_GOLDEN") != nullptr) std::ofstream(golden) << resolved.dump(1) << "\n";
  const nlohmann::json recorded = read_json_file(golden.string());
  for (const auto& [name, config] : resolved.items()) {
    ASSERT_TRUE(recorded.contains(name)) << name << " is not in " << golden;
    EXPECT_EQ(recorded[name], config)
        << name << " differs first at " << first_config_difference(recorded[name], config, {});
  }
  EXPECT_EQ(recorded.size(), resolved.size());
}

class StepScalingCli : public testing::TempFolderTest {
 protected:
  StepScalingCli() : TempFolderTest("lengen_step_scaling") {}
};

TEST_F(StepScalingCli, TrainWithOnlyStepsSetTrainsAndSaysWhatItScaled) {
  const fs::path run = root_ / "run";
  const auto result =
      run_lengen(root_, "train " + kCopy + " --out " + run.string() +
                            " --set train.steps=20 --set eval.lengths=16 --set eval.samples=4");
  ASSERT_EQ(result.code, 0) << result.err;
  const std::string said = result.out + result.err;  // spdlog's info lines
  EXPECT_NE(said.find("train.steps=20 is below the config's 16000: scaled train.warmup 1000 -> 1, "
                      "train.eval_every 500 -> 2, train.checkpoint_every 500 -> 2, train.log_every 50 -> 2"),
            std::string::npos)
      << said;
  const nlohmann::json saved = read_json_file((run / "config.json").string());
  EXPECT_EQ(saved["train"]["warmup"], 1);
  EXPECT_TRUE(fs::exists(run / "results.json"));
}

}  // namespace
}  // namespace lengen
