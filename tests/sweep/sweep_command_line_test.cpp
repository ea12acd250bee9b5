// A sweep typed on the command line (--base, --grid, --set) is the sweep file it stands for:
// the same runs under the same names; `--set` on a sweep file applies to every run; the same
// command again resumes (finished runs skipped).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"
#include "lengen/sweep.h"
#include "temp_folder.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

class SweepCommandLine : public testing::TempFolderTest {
 protected:
  SweepCommandLine() : TempFolderTest("lengen_sweep_command_line") {}
  void SetUp() override {
    TempFolderTest::SetUp();
    config_ = (root_ / "tiny.json").string();
    std::ofstream(config_) << testing::tiny_copy_json(3);
  }
  std::string config_;
};

std::vector<std::pair<std::string, std::string>> runs_of(const Sweep& sweep) {
  std::vector<std::pair<std::string, std::string>> runs;
  for (const SweepRun& run : sweep.runs) {
    nlohmann::json overrides = nlohmann::json::object();
    for (const auto& [key, value] : run.overrides) overrides[key] = value;
    runs.emplace_back(run.name, overrides.dump());
  }
  return runs;
}

TEST_F(SweepCommandLine, ExpandsAsTheSweepFileWithThatBaseAndGrid) {
  std::ofstream(root_ / "sweep.json") << R"({"base": "tiny.json",
    "grid": {"model.attention.normalizer": ["softmax", "entmax15"], "train.seed": [1, 2],
             "eval.lengths": [[4, 8], [4]]},
    "set": {"train.lr": 0.002}})";
  const Sweep from_file = load_sweep(SweepSource{(root_ / "sweep.json").string(), "", {}, {}});
  SweepSource source;
  source.base = config_;
  source.grid = {"model.attention.normalizer=softmax,entmax15", "train.seed=1,2", "eval.lengths=[4,8],[4]"};
  source.set = {"train.lr=0.002"};
  const Sweep typed = load_sweep(source);
  EXPECT_EQ(runs_of(typed), runs_of(from_file));
  EXPECT_EQ(typed.runs.front().name, "softmax-seed1-lengths4_8");
  EXPECT_NE(typed.description.find("--grid train.seed=1,2"), std::string::npos) << typed.description;
}

TEST_F(SweepCommandLine, SetAppliesToEveryRunOfAFileOverItsOwnSet) {
  std::ofstream(root_ / "sweep.json")
      << R"({"base": "tiny.json", "grid": {"train.seed": [1, 2]}, "set": {"train.lr": 0.002}})";
  SweepSource source;
  source.path = (root_ / "sweep.json").string();
  source.set = {"train.lr=0.003", "model.attention.positions=rope"};
  const Sweep sweep = load_sweep(source);
  ASSERT_EQ(sweep.runs.size(), 2u);
  for (const SweepRun& run : sweep.runs) {
    EXPECT_EQ(run_config(sweep, run).train.lr, 0.003) << run.name;
    EXPECT_EQ(run_config(sweep, run).model.attention.positions, "rope") << run.name;
  }
  source.set = {"train.lr=0.003", "train.lr=0.004"};
  EXPECT_THROW(load_sweep(source), UserError);
  source.set = {"train.seed=3"};  // the grid sets it too: which one was meant is not known
  EXPECT_THROW(load_sweep(source), UserError);
}

// A researcher's first sweep is short: `--set train.steps=200` scales the schedule the config wrote
// for its own length, as `lengen train --set train.steps=200` does; a sweep file's own steps do not.
TEST_F(SweepCommandLine, SetStepsScalesEachRunsScheduleAsTrainDoes) {
  const std::string copy = std::string(LENGEN_SOURCE_DIR) + "/configs/quick/copy.json";
  std::ofstream(root_ / "sweep.json") << R"({"base": ")" << copy << R"(", "grid": {"train.seed": [1, 2]}})";
  SweepSource source;
  source.path = (root_ / "sweep.json").string();
  source.set = {"train.steps=200"};
  const Sweep sweep = load_sweep(source);
  std::string scaled;
  const Config config = run_config(sweep, sweep.runs[1], &scaled);
  const Config by_train = load_config(copy, {"train.steps=200"});
  EXPECT_EQ(config.train.warmup, by_train.train.warmup);
  EXPECT_EQ(config.train.eval_every, by_train.train.eval_every);
  EXPECT_EQ(config.train.checkpoint_every, by_train.train.checkpoint_every);
  EXPECT_NE(scaled.find("scaled train.warmup 1000 -> 13"), std::string::npos) << scaled;
  // The same steps written in the sweep file are the file's: validated as written.
  std::ofstream(root_ / "steps.json")
      << R"({"base": ")" << copy << R"(", "grid": {"train.seed": [1, 2]}, "set": {"train.steps": 200}})";
  source.path = (root_ / "steps.json").string();
  source.set = {};
  const Sweep written = load_sweep(source);
  EXPECT_THROW(run_config(written, written.runs[0]), UserError);
  const auto result =
      testing::run_lengen(root_, "sweep " + (root_ / "sweep.json").string() +
                                     " --set train.steps=200 --dry-run --out " + (root_ / "runs").string());
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.out.find("train.steps=200 is below the config's 16000: scaled"), std::string::npos)
      << result.out;
}

TEST_F(SweepCommandLine, RunsAndTheSameCommandResumes) {
  const fs::path out = root_ / "runs";
  const std::string command =
      "sweep --base " + config_ + " --grid train.seed=1,2 --set train.lr=0.002 --out " + out.string();
  auto result = testing::run_lengen(root_, command + " --dry-run");
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.out.find("seed2  [new]  train.lr=0.002  train.seed=2"), std::string::npos) << result.out;
  result = testing::run_lengen(root_, command + " --jobs 2");
  ASSERT_EQ(result.code, 0) << result.out << result.err;
  for (const char* name : {"seed1", "seed2"}) {
    EXPECT_TRUE(fs::exists(out / name / "results.json")) << name;
    EXPECT_EQ(read_json_file((out / name / "config.json").string())["train"]["lr"], 0.002);
  }
  const nlohmann::json manifest = read_json_file((out / "sweep.json").string());
  EXPECT_EQ(manifest["runs"].size(), 2u);
  EXPECT_NE(manifest["description"].get<std::string>().find("--grid train.seed=1,2"), std::string::npos);
  result = testing::run_lengen(root_, command);
  ASSERT_EQ(result.code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("skip seed1 (finished)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("skip seed2 (finished)"), std::string::npos) << result.out;
  // One of its runs given as --out (a slip of the path) is refused, dry run or not: nothing nests in it.
  const std::string into_a_run =
      "sweep --base " + config_ + " --grid train.seed=1,2 --out " + (out / "seed1").string();
  for (const char* dry : {"", " --dry-run"})
    testing::expect_one_line_refusal(testing::run_lengen(root_, into_a_run + dry),
                                     "seed1 is a run folder (it holds run.json)");
  EXPECT_FALSE(fs::exists(out / "seed1" / "seed1"));
}

TEST_F(SweepCommandLine, RefusesAGridWithoutBaseAndNeitherSource) {
  testing::expect_one_line_refusal(testing::run_lengen(root_, "sweep --out " + (root_ / "o").string()),
                                   "give a sweep file or --base CONFIG");
  testing::expect_one_line_refusal(
      testing::run_lengen(root_, "sweep --grid train.seed=1,2 --out " + (root_ / "o").string()), "--grid");
  testing::expect_one_line_refusal(
      testing::run_lengen(root_,
                          "sweep --base " + config_ + " --grid train.seed --out " + (root_ / "o").string()),
      "--grid train.seed: expected KEY=VALUE1,VALUE2,...");
  testing::expect_one_line_refusal(
      testing::run_lengen(root_, "sweep --base " + config_ + R"( --grid 'method={"name":"a"' --out )" +
                                     (root_ / "o").string()),
      R"(--grid method={"name":"a": a bracket, brace or quote is left open)");
  testing::expect_one_line_refusal(
      testing::run_lengen(root_, "sweep --base " + config_ + R"( --grid 'method={"name":a}' --out )" +
                                     (root_ / "o").string()),
      R"(--grid method: {"name":a} is not a JSON object)");
  testing::expect_one_line_refusal(
      testing::run_lengen(root_, "sweep --base " + config_ + " --grid 'eval.lengths=[8,16],[32' --out " +
                                     (root_ / "o").string()),
      "--grid eval.lengths=[8,16],[32: a bracket, brace or quote is left open");
}

// docs/sweeps.md is what `lengen sweep --help` points to: its example file expands to the names it
// says, and its command-line example is that file.
TEST_F(SweepCommandLine, DocsExampleExpandsAsDocumented) {
  EXPECT_NE(testing::run_lengen(root_, "sweep --help").out.find("docs/sweeps.md"), std::string::npos);
  const std::string docs = testing::text_of(fs::path(LENGEN_SOURCE_DIR) / "docs" / "sweeps.md");
  const size_t start = docs.find("```json\n") + 8;
  const ordered_json example = ordered_json::parse(docs.substr(start, docs.find("```", start) - start));
  const Sweep sweep =
      sweep_from_json(example, std::string(LENGEN_SOURCE_DIR) + "/configs/sweeps", "docs/sweeps.md");
  ASSERT_EQ(sweep.runs.size(), 13u);
  EXPECT_EQ(sweep.runs[0].name, "softmax-nape-seed1");
  EXPECT_EQ(sweep.runs[11].name, "asentmax-rope-seed3");
  EXPECT_EQ(sweep.runs[12].name, "sparsemax");
  for (const char* names : {"softmax-nape-seed1", "softmax-nape-seed2", "asentmax-rope-seed3", "`sparsemax`"})
    EXPECT_NE(docs.find(names), std::string::npos) << names;
  SweepSource source;
  source.base = std::string(LENGEN_SOURCE_DIR) + "/configs/quick/copy.json";
  source.grid = {"model.attention.positions=nape,rope", "train.seed=1,2,3"};
  source.set = {"train.steps=2000"};
  std::vector<std::string> names;
  for (const SweepRun& run : load_sweep(source).runs) names.push_back(run.name);
  EXPECT_EQ(names, (std::vector<std::string>{"nape-seed1", "nape-seed2", "nape-seed3", "rope-seed1",
                                             "rope-seed2", "rope-seed3"}));
}

}  // namespace
}  // namespace lengen
