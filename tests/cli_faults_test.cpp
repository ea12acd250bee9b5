// The CLI under faults a careless user or an adversary causes, outside evaluation (see
// cli_eval_faults_test.cpp): each ends with one line on stderr and exit code 2, and nothing the
// user wrote is deleted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_folder_test.h"
#include "cli_runner.h"
#include "temp_folder.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;

class CliFaults : public testing::CliFolderTest {
 protected:
  CliFaults() : CliFolderTest("lengen_cli_faults") {}
};

// A run named "." or ".." would be the sweep folder or its parent, and the sweep would pass
// --force to it.
TEST_F(CliFaults, SweepRunNamesMustBeOnePlainFolderName) {
  for (const std::string name : {".", "..", "a/b", ""}) {
    SCOPED_TRACE("name '" + name + "'");
    const fs::path out = root_ / "sweep_out";
    fs::create_directories(out / "finished");
    std::ofstream(out / "finished" / "results.json") << "{}";
    std::ofstream(at("sweep.json")) << R"({"base": "base.json", "list": [{"name": "a"}, {"name": ")" << name
                                    << R"("}]})";
    const CliResult result = lengen("sweep " + at("sweep.json") + " --out " + out.string());
    EXPECT_EQ(result.code, 2) << result.out << result.err;
    EXPECT_EQ(result.err_lines(), 1) << result.err;
    EXPECT_NE(result.err.find("plain folder name"), std::string::npos) << result.err;
    EXPECT_TRUE(fs::exists(out / "finished" / "results.json"));
    EXPECT_TRUE(fs::exists(root_ / "base.json"));
    EXPECT_FALSE(fs::exists(out / "a"));
  }
}

TEST_F(CliFaults, ForceDeletesOnlyARunFolderLengenWrote) {
  const fs::path theirs = root_ / "photos";
  fs::create_directories(theirs);
  std::ofstream(theirs / "holiday.jpg") << "jpeg";
  CliResult result = lengen("train " + base() + " --out " + theirs.string() + " --force");
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find("not a lengen run folder"), std::string::npos) << result.err;
  EXPECT_TRUE(fs::exists(theirs / "holiday.jpg"));

  std::ofstream(at("notes.txt")) << "notes";
  for (const std::string flag : {"", " --force", " --resume"}) {
    result = lengen("train " + base() + " --out " + at("notes.txt") + flag);
    EXPECT_EQ(result.code, 2) << result.err;
    EXPECT_EQ(result.err_lines(), 1) << result.err;
    EXPECT_NE(result.err.find("is a file"), std::string::npos) << result.err;
  }
  result = lengen("train " + base() + " --out " + at("notes.txt") + "/run");
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find("Not a directory"), std::string::npos) << result.err;
  std::ifstream notes(at("notes.txt"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(notes), {}), "notes");

  ASSERT_EQ(lengen("train " + base() + " --out " + at("run")).code, 0);
  result = lengen("train " + base() + " --out " + at("run") + " --force --set train.steps=3");
  EXPECT_EQ(result.code, 0) << result.err;
}

TEST_F(CliFaults, OutOfRangeValuesAreRefusedBeforeAnythingIsWritten) {
  for (const std::string set : {"train.threads=100000", "train.batch_size=1e15", "eval.lengths=10000000"}) {
    SCOPED_TRACE(set);
    const CliResult result = lengen("train " + base() + " --out " + at("run") + " --set " + set);
    EXPECT_EQ(result.code, 2) << result.err;
    EXPECT_EQ(result.err_lines(), 1) << result.err;
    EXPECT_NE(result.err.find(set.substr(0, set.find('='))), std::string::npos) << result.err;
    EXPECT_FALSE(fs::exists(at("run")));
  }
  const CliResult utf8 = lengen("config show " + base() + " --set 'description=\xff'");
  EXPECT_EQ(utf8.code, 2) << utf8.err;
  EXPECT_EQ(utf8.err_lines(), 1) << utf8.err;
  EXPECT_NE(utf8.err.find("UTF-8"), std::string::npos) << utf8.err;
}

// Only a launched worker above rank 0 keeps a user error to itself: the variable left set in a
// shell silences nothing.
TEST_F(CliFaults, QuietUserErrorsOnlyForALaunchedWorkerAboveRankZero) {
  const CliResult shell =
      lengen("train " + at("missing.json") + " --out " + at("run"), "LENGEN_QUIET_USER_ERRORS=1");
  EXPECT_EQ(shell.code, 2);
  EXPECT_EQ(shell.err_lines(), 1) << shell.err;
  const CliResult worker =
      lengen("train " + at("missing.json") + " --out " + at("run"), "LENGEN_QUIET_USER_ERRORS=1 RANK=1");
  EXPECT_EQ(worker.code, 2);
  EXPECT_EQ(worker.err, "");
}

TEST_F(CliFaults, SweepBaseThatIsAFolderAndCommentsInSweeps) {
  fs::create_directories(root_ / "configs");
  std::ofstream(at("sweep.json")) << "{\"base\": \"configs\"}";
  CliResult result = lengen("sweep " + at("sweep.json") + " --out " + at("out") + " --dry-run");
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find("not a regular file (a directory"), std::string::npos) << result.err;

  std::ofstream(at("commented.json"))
      << "// seeds\n{\"base\": \"base.json\", \"grid\": {\"train.seed\": [1, 2]}}";
  result = lengen("sweep " + at("commented.json") + " --out " + at("out") + " --dry-run");
  EXPECT_EQ(result.code, 0) << result.err;
  std::ofstream(at("broken.json")) << "{\n\"base\": \"base.json\",,\n}";
  result = lengen("sweep " + at("broken.json") + " --out " + at("out") + " --dry-run");
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find(at("broken.json") + ":2:"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("json.exception"), std::string::npos) << result.err;
}

// A disk that fills up while a checkpoint is written; the file size limit fails the write the
// same way without privileges.
TEST_F(CliFaults, AFailedCheckpointWriteIsOneLineAndLeavesNoTempFile) {
  const CliResult result = lengen("train " + base() + " --out " + at("run"), "ulimit -f 16; trap '' XFSZ;");
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find("cannot write " + at("run") + "/checkpoints/"), std::string::npos) << result.err;
  for (const auto& entry : fs::directory_iterator(at("run") + "/checkpoints")) {
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
  }
}

TEST_F(CliFaults, CommandLineMistakesAreOneLine) {
  CliResult result = lengen("trian " + base());
  EXPECT_EQ(result.code, 2);
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find("unknown command 'trian' (did you mean 'train'?)"), std::string::npos)
      << result.err;
  result = lengen("train " + base());
  EXPECT_EQ(result.code, 2);
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find("--out"), std::string::npos) << result.err;
  result = lengen("train " + base() + " --out " + at("run") + " --steps 5");
  EXPECT_EQ(result.code, 2);
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  // An unknown inner command is named, not reported as a missing one.
  result = lengen("bench stpe");
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("unknown lengen bench command 'stpe' (did you mean 'step'?)"), std::string::npos)
      << result.err;
}

// A path that cannot be created is one line saying what, where and why.
TEST_F(CliFaults, AnOutputFolderThatCannotBeCreatedIsNamedWithItsReason) {
  CliResult result = lengen("train " + base() + " --out " + at(std::string(300, 'a')));
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find(": File name too long"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("filesystem error"), std::string::npos) << result.err;
}

// launch's grace period: negative, not a number, NaN or beyond an hour (a deadline past the
// clock's range) is one line naming the value, before any worker starts.
TEST_F(CliFaults, LaunchGraceOutsideZeroToAnHourIsOneLine) {
  for (const std::string grace : {"-1", "abc", "nan", "1e308", "3601"}) {
    const CliResult result =
        lengen("launch --grace " + grace + " --nproc 1 -- train " + base() + " --out " + at("run"));
    EXPECT_EQ(result.code, 2) << grace;
    EXPECT_EQ(result.err_lines(), 1) << result.err;
    EXPECT_NE(result.err.find("--grace: '" + grace + "' is not a number of seconds from 0 to 3600"),
              std::string::npos)
        << result.err;
    EXPECT_FALSE(std::filesystem::exists(at("run"))) << grace;
  }
}

// Training lengths below what the task can generate: one line naming task.len_min, no run folder.
TEST_F(CliFaults, TrainingLengthBelowTheTasksMinimumIsOneLine) {
  const std::string config = std::string(LENGEN_SOURCE_DIR) + "/configs/quick/mqmtar.json";
  const CliResult result = lengen("train " + config + " --out " + at("run") +
                                  " --set task.len_min=2 --set train.steps=1 --set train.warmup=0");
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find("task.len_min 2 is shorter than mqmtar allows"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(at("run")));
}

// Numbers beyond double's range in any JSON lengen reads, and beyond float's range in a config,
// are one line naming the file or key, before a run folder exists.
TEST_F(CliFaults, NumbersOutOfRangeAreOneLine) {
  std::string config = testing::tiny_copy_json();
  config.replace(config.find("\"batch_size\": 4"), 15, "\"lr\": 1e400, \"batch_size\": 4");
  std::ofstream(at("huge.json")) << config;
  CliResult result = lengen("train " + at("huge.json") + " --out " + at("run"));
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find(at("huge.json")), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("internal error"), std::string::npos) << result.err;
  for (const std::string set :
       {"train.lr=1e39", "model.init_std=1e300", "model.d_model=2000000000", "train.steps=100000000"}) {
    SCOPED_TRACE(set);
    result = lengen("train " + base() + " --out " + at("run") + " --set " + set);
    EXPECT_EQ(result.code, 2) << result.err;
    EXPECT_EQ(result.err_lines(), 1) << result.err;
    EXPECT_NE(result.err.find(set.substr(0, set.find('='))), std::string::npos) << result.err;
  }
  EXPECT_FALSE(fs::exists(at("run")));
  std::ofstream(at("sweep.json")) << R"({"base": "base.json", "grid": {"train.lr": [1e400]}})";
  result = lengen("sweep " + at("sweep.json") + " --out " + at("out") + " --dry-run");
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  fs::create_directories(at("r"));
  std::ofstream(at("r/results.json")) << R"({"task": "copy", "train_len_min": 1e400})";
  result = lengen("report " + at("r"));
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
}

// A sweep.json another tool wrote is named, not read as lengen's manifest.
TEST_F(CliFaults, ReportOnAForeignSweepManifestIsOneLine) {
  fs::create_directories(at("s"));
  for (const std::string manifest : {"{}", R"({"runs": [1]})", "[1]", R"({"runs": [{"name": 2}]})"}) {
    SCOPED_TRACE(manifest);
    std::ofstream(at("s/sweep.json")) << manifest;
    const CliResult result = lengen("report " + at("s"));
    EXPECT_EQ(result.code, 2) << result.err;
    EXPECT_EQ(result.err_lines(), 1) << result.err;
    EXPECT_NE(result.err.find("not a lengen sweep manifest"), std::string::npos) << result.err;
  }
}

// A sweep.json of another sweep lists runs that are not here: said so, not "no evaluated run".
TEST_F(CliFaults, ReportOnASweepManifestListingNoRunHereSaysSo) {
  fs::create_directories(at("s2/mine"));
  std::ofstream(at("s2/sweep.json")) << R"({"runs": [{"name": "elsewhere"}]})";
  const CliResult result = lengen("report " + at("s2"));
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find("holds no evaluated run of the runs its sweep.json lists"), std::string::npos)
      << result.err;
  // A sweep stopped before its first evaluation: its runs are here, started, none evaluated.
  fs::create_directories(at("s2/elsewhere/checkpoints"));
  const CliResult stopped = lengen("report " + at("s2"));
  testing::expect_one_line_refusal(
      stopped,
      "holds no evaluated run of the runs its sweep.json lists (a sweep stopped before its first run");
  // One run still training (a run.json, checkpoints, no results.json): said, not a bare "none".
  std::ofstream(at("s2/elsewhere/run.json")) << R"({"run_id": "a"})";
  testing::expect_one_line_refusal(
      lengen("report " + at("s2/elsewhere")),
      "holds no evaluated run (no results.json yet: train writes it once trained)");
}

// A training step whose attention alone needs more than the machine's memory would be killed by
// the kernel partway: refused in one line before a run folder is made.
TEST_F(CliFaults, ATrainingStepLargerThanTheMachineIsRefused) {
  const CliResult result = lengen("train " + base() + " --out " + at("big") +
                                  " --set train.batch_size=1048576 --set task.len_min=1048576 "
                                  "--set task.len_max=1048576 --set eval.lengths=8");
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find("(task.len_max=1048576) needs at least "), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(at("big")));
  // At short lengths it is the activations of a large batch that do not fit.
  const CliResult wide = lengen("train " + base() + " --out " + at("wide") +
                                " --set train.batch_size=1048576 --set model.d_model=8192");
  EXPECT_EQ(wide.code, 2) << wide.err;
  EXPECT_EQ(wide.err_lines(), 1) << wide.err;
  EXPECT_NE(wide.err.find("GiB activations"), std::string::npos) << wide.err;
  EXPECT_FALSE(fs::exists(at("wide")));
  // And a model whose weights and optimizer state alone do not fit, at batch 1.
  const CliResult heavy =
      lengen("train " + base() + " --out " + at("heavy") +
             " --set train.batch_size=1 --set model.d_model=65536 --set model.d_mlp=65536");
  EXPECT_EQ(heavy.code, 2) << heavy.err;
  EXPECT_EQ(heavy.err_lines(), 1) << heavy.err;
  EXPECT_NE(heavy.err.find("GiB parameters)"), std::string::npos) << heavy.err;
  EXPECT_FALSE(fs::exists(at("heavy")));
}

// An environment number past what a clock can add is one line naming it.
TEST_F(CliFaults, AnEnvironmentTimeoutBeyondAWeekIsOneLine) {
  const CliResult result =
      lengen("train " + base() + " --out " + at("run"),
             "WORLD_SIZE=2 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29511 LENGEN_DIST_TIMEOUT=1e300");
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find("LENGEN_DIST_TIMEOUT='1e300'"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(at("run")));
}

// An evaluation length the task cannot generate is named as eval.lengths before training starts.
TEST_F(CliFaults, AnEvaluationLengthBelowTheTasksMinimumIsFoundBeforeTraining) {
  const std::string config = std::string(LENGEN_SOURCE_DIR) + "/configs/quick/mqmtar.json";
  const CliResult result = lengen("train " + config + " --out " + at("run") +
                                  " --set 'eval.lengths=[2]' --set train.steps=1 --set train.warmup=0");
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find("eval.lengths entry 2 is shorter than mqmtar allows"), std::string::npos)
      << result.err;
  EXPECT_FALSE(fs::exists(at("run")));
}

// A dry run refuses the --out the sweep itself would refuse, instead of listing new runs there.
TEST_F(CliFaults, ASweepDryRunRefusesWhatTheSweepRefuses) {
  std::ofstream(at("seeds.json")) << R"({"base": "base.json", "grid": {"train.seed": [1, 2]}})";
  std::ofstream(at("a_file")) << "mine";
  const CliResult on_file = lengen("sweep " + at("seeds.json") + " --out " + at("a_file") + " --dry-run");
  EXPECT_EQ(on_file.code, 2) << on_file.out << on_file.err;
  EXPECT_NE(on_file.err.find("is a file, not a sweep folder"), std::string::npos) << on_file.err;
  expect_one_line_refusal(lengen("sweep " + at("seeds.json") + " --out / --dry-run"),
                          "--out / is the filesystem root");
}

// A sweep whose base is another sweep file names that file, not each of its runs.
TEST_F(CliFaults, ASweepWhoseBaseIsASweepFileNamesIt) {
  std::ofstream(at("inner.json")) << R"({"base": "base.json", "grid": {"train.lr": [0.002]}})";
  std::ofstream(at("outer.json")) << R"({"base": "inner.json", "grid": {"train.lr": [0.003]}})";
  const CliResult result = lengen("sweep " + at("outer.json") + " --out " + at("out") + " --dry-run");
  EXPECT_EQ(result.code, 2) << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find("inner.json (the base of " + at("outer.json") + ") is a sweep file"),
            std::string::npos)
      << result.err;
}

// A dry run names a run's folder holding a user's files as one the sweep will not train into
// (its --force refuses folders lengen did not make), not as a new run.
TEST_F(CliFaults, ASweepDryRunNamesARunFolderHoldingUserFiles) {
  std::ofstream(at("seeds.json")) << R"({"base": "base.json", "grid": {"train.seed": [1, 2]}})";
  fs::create_directories(at("out/seed1"));
  std::ofstream(at("out/seed1/thesis.tex")) << "mine";
  const CliResult result = lengen("sweep " + at("seeds.json") + " --out " + at("out") + " --dry-run");
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.out.find("seed1  [not a lengen run folder (no run.json); the sweep refuses it]"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("seed2  [new]"), std::string::npos) << result.out;
  EXPECT_TRUE(fs::exists(at("out/seed1/thesis.tex")));
}

// A key set twice with --set is refused, not taken at its last value.
TEST_F(CliFaults, AKeySetTwiceIsRefused) {
  expect_one_line_refusal(
      lengen("train " + base() + " --out " + at("run") + " --set train.steps=20 --set train.steps=30"),
      "--set train.steps is given twice (--set train.steps=20, --set train.steps=30); give it once");
  EXPECT_FALSE(fs::exists(at("run")));
  // By its path and again inside a section's (or task.params') object.
  expect_one_line_refusal(
      lengen("train " + base() + " --out " + at("run") +
             R"( --set train.steps=10 --set 'train={"steps":30}')"),
      R"(--set train.steps is given twice (--set train.steps=10, --set train={"steps":30}); give it once)");
  expect_one_line_refusal(
      lengen("config show " + base() + R"( --set 'task.params={"vocab":5}' --set task.params.vocab=6)"),
      "--set task.params.vocab is given twice");
  // Or twice inside one object.
  expect_one_line_refusal(
      lengen("train " + base() + " --out " + at("run") + R"( --set 'train={"steps":10,"steps":30}')"),
      R"(--set train={"steps":10,"steps":30}: duplicate key 'steps')");
  EXPECT_FALSE(fs::exists(at("run")));
  ASSERT_EQ(lengen("train " + base() + " --out " + at("run")).code, 0);
  expect_one_line_refusal(lengen("eval " + at("run") + " --set eval.samples=4 --set eval.samples=5"),
                          "--set eval.samples is given twice");
  expect_one_line_refusal(lengen("eval " + at("run") + " --samples 3 --set eval.long_from=16"),
                          "--set eval.long_from is given twice");
}

}  // namespace
}  // namespace lengen
