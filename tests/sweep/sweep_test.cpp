// Sweeps: grid expansion and naming, shards, and `lengen sweep` end to end with a failing run
// and a resumed one.
#include "lengen/sweep.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/run_folder.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

std::vector<std::string> names(const Sweep& sweep) {
  std::vector<std::string> out;
  for (const auto& run : sweep.runs) out.push_back(run.name);
  return out;
}

TEST(SweepExpansion, GridIsACartesianProductInFileOrderWithReadableNames) {
  const auto json = ordered_json::parse(R"({
    "description": "methods x positions x seeds",
    "base": {"task": {"name": "copy"}},
    "set": {"train.steps": 400},
    "grid": {
      "method": [
        {"name": "softmax", "model.attention.normalizer": "softmax"},
        {"name": "asentmax", "model.attention.normalizer": "entmax15", "model.attention.scaling": "asentmax"}],
      "model.attention.positions": ["nape", "rope"],
      "train.seed": [1, 2]
    },
    "list": [{"model.attention.normalizer": "sparsemax", "task.params.vocab": 8},
             {"model.attention.positions": "a b"}, {"model.attention.positions": "a_b"}]
  })");
  const Sweep sweep = sweep_from_json(json, ".");
  EXPECT_EQ(sweep.description, "methods x positions x seeds");
  EXPECT_EQ(names(sweep),
            (std::vector<std::string>{"softmax-nape-seed1", "softmax-nape-seed2", "softmax-rope-seed1",
                                      "softmax-rope-seed2", "asentmax-nape-seed1", "asentmax-nape-seed2",
                                      "asentmax-rope-seed1", "asentmax-rope-seed2", "sparsemax-vocab8",
                                      "a_b", "a_b-2"}));  // names made from settings are made unique
  const SweepRun& run = sweep.runs[5];
  ASSERT_EQ(run.overrides.size(), 5u);
  EXPECT_EQ(run.overrides[0], SweepOverride("train.steps", 400));  // "set" first
  EXPECT_EQ(run.overrides[1], SweepOverride("model.attention.normalizer", "entmax15"));
  EXPECT_EQ(run.overrides[2], SweepOverride("model.attention.scaling", "asentmax"));
  EXPECT_EQ(run.overrides[4], SweepOverride("train.seed", 2));

  const Config config = run_config(sweep, run);
  EXPECT_EQ(config.model.attention.normalizer, "entmax15");
  EXPECT_EQ(config.model.attention.scaling, "asentmax");
  EXPECT_EQ(config.model.attention.positions, "nape");
  EXPECT_EQ(config.train.seed, 2u);
  EXPECT_EQ(config.train.steps, 400);
  EXPECT_EQ(config.description, "methods x positions x seeds [sweep run asentmax-nape-seed2]");
  EXPECT_EQ(run_config(sweep, sweep.runs[8]).task.params.at("vocab"), 8);

  const auto manifest = sweep_manifest(sweep);
  EXPECT_EQ(manifest["runs"].size(), 11u);
  EXPECT_EQ(manifest["runs"][5]["overrides"]["train.seed"], 2);
}

TEST(SweepExpansion, OverrideNamesAndInvalidValues) {
  EXPECT_EQ(override_name("train.lr", 0.001), "lr0.001");
  EXPECT_EQ(override_name("model.attention.learn_alpha", true), "learn_alpha-true");
  EXPECT_EQ(override_name("eval.lengths", nlohmann::json::array({16, 32})), "lengths16_32");
  EXPECT_EQ(override_name("description", "a b/c"), "a_b_c");

  const Sweep sweep =
      sweep_from_json(ordered_json::parse(R"({"base": {}, "grid": {"train.lr": [-1]}})"), ".");
  ASSERT_EQ(sweep.runs.size(), 1u);
  EXPECT_THROW(run_config(sweep, sweep.runs[0]), UserError);
  EXPECT_THROW(sweep_from_json(ordered_json::parse(R"({"base": {}, "grid": {"train.lr": []}})"), "."),
               UserError);
  EXPECT_THROW(sweep_from_json(ordered_json::parse(R"({"base": {}, "gird": {}})"), "."), UserError);
}

// The message of the UserError that expanding `text` throws, or "" when it expands.
std::string expansion_error(const std::string& text) {
  try {
    sweep_from_json(ordered_json::parse(text), ".");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// A config given as a sweep, or a sweep given as a config, is named for what it is.
TEST(SweepExpansion, AConfigAndASweepFileAreToldApart) {
  EXPECT_NE(
      expansion_error(R"({"task": {"name": "copy"}, "model": {}, "train": {}})")
          .find("unknown key 'task' (expected description, base, grid, list, set); a run config: train it "
                "with lengen train, or sweep it with --base"),
      std::string::npos);
  try {
    config_from_string(R"({"base": "copy.json", "grid": {"train.lr": [0.001]}})", "s.json");
    ADD_FAILURE() << "a sweep file read as a config";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what())
                  .find("s.json is a sweep file (it has \"base\" and \"grid\"), not a config: "
                        "run it with `lengen sweep s.json --out DIR`"),
              std::string::npos)
        << error.what();
  }
}

// A key set in two places (the later value would win while the name keeps the earlier one) is
// refused, and so are two runs of one config.
TEST(SweepExpansion, KeysSetTwiceAndRepeatedRunsAreRefused) {
  EXPECT_EQ(
      expansion_error(
          R"({"base": {}, "grid": {"train.seed": [2], "method": [{"name": "a", "train.seed": 1}]}})"),
      "sweep: run 'seed2-a' sets train.seed twice (train.seed=2, then train.seed=1); set each key in one "
      "place (set, one grid axis or one list entry)");
  EXPECT_NE(expansion_error(R"({"base": {}, "set": {"train.seed": 3}, "grid": {"train.seed": [1]}})")
                .find("sets train.seed twice (train.seed=3, then train.seed=1)"),
            std::string::npos);
  // By its path and again inside a section's object.
  EXPECT_NE(expansion_error(R"({"base": {}, "set": {"train": {"steps": 30}}, "grid": {"train.steps": [10]}})")
                .find(R"(sets train.steps twice (train={"steps":30}, then train.steps=10))"),
            std::string::npos);
  // A name the user gave is never changed to make a folder name unique.
  EXPECT_NE(
      expansion_error(
          R"({"base": {}, "list": [{"name": "a b", "train.seed": 1}, {"name": "a_b", "train.seed": 2}]})")
          .find("two runs get the folder name 'a_b'"),
      std::string::npos);
  EXPECT_NE(expansion_error(
                R"({"base": {}, "list": [{"name": "x", "train.seed": 1}, {"name": "x", "train.seed": 2}]})")
                .find("two runs get the folder name 'x'"),
            std::string::npos);
  EXPECT_EQ(expansion_error(R"({"base": {}, "list": []})"),
            "sweep: \"list\" must be a non-empty list of override objects");
  EXPECT_EQ(expansion_error(R"({"base": {}, "list": [{"name": "a", "train.seed": 2}, {"name": "b"}]})"), "");
  // Two runs of one config are one model trained twice.
  EXPECT_NE(
      expansion_error(R"({"base": {}, "list": [{"name": "a"}, {"name": "b"}]})").find("train the same config"),
      std::string::npos);
}

TEST(SweepExpansion, ShardsTakeEveryNthRun) {
  EXPECT_EQ(shard_runs(7, "1/3"), (std::vector<size_t>{1, 4}));
  EXPECT_EQ(shard_runs(7, "0/1").size(), 7u);
  EXPECT_THROW(shard_runs(7, "3/3"), UserError);
  EXPECT_THROW(shard_runs(7, "1"), UserError);
  EXPECT_THROW(shard_runs(7, "a/2"), UserError);
}

class SweepCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("lengen_sweep_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "configs");
  }
  void TearDown() override {
    // A test that stopped early leaves no sweep (or its runs) behind.
    for (pid_t pid : started_) {
      kill(-pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    fs::remove_all(dir_);
  }

  int run_cli(const std::string& args) {
    const std::string command = std::string(LENGEN_CLI_PATH) + " " + args + " > " +
                                (dir_ / "out.txt").string() + " 2> " + (dir_ / "err.txt").string();
    const int status = std::system(command.c_str());
    std::ifstream out(dir_ / "out.txt"), err(dir_ / "err.txt");
    out_ = std::string(std::istreambuf_iterator<char>(out), {});
    err_ = std::string(std::istreambuf_iterator<char>(err), {});
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // `program ARGS` in the background (exec'd, so the pid is the program's), output to out.txt,
  // in a process group of its own with the runs it starts.
  pid_t start_cli(const std::string& program, const std::string& args) {
    const std::string command =
        "exec " + program + " " + args + " > " + (dir_ / "out.txt").string() + " 2>&1";
    const pid_t pid = fork();
    if (pid == 0) {
      setpgid(0, 0);
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    if (pid > 0) started_.push_back(pid);
    return pid;
  }

  // Waits for start_cli's program; its exit code (-1 when killed by a signal), its output in out_.
  int wait_cli(pid_t pid) {
    int status = 0;
    const pid_t waited = waitpid(pid, &status, 0);
    started_.erase(std::remove(started_.begin(), started_.end(), pid), started_.end());
    if (waited != pid) return -1;
    std::ifstream out(dir_ / "out.txt");
    out_ = std::string(std::istreambuf_iterator<char>(out), {});
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Polls `done` for up to 2 minutes; whether it came true.
  template <class Done>
  static bool wait_until(const Done& done) {
    for (int i = 0; i < 12000; ++i) {
      if (done()) return true;
      usleep(10000);
    }
    return done();
  }

  static void wait_for(const fs::path& path) {
    wait_until([&] { return fs::exists(path); });
  }

  // Whether `dir` holds a step checkpoint, waiting for one (a fast run keeps only its newest few, so
  // no one step's file is sure to be seen).
  static bool wait_for_a_checkpoint(const fs::path& dir) {
    return wait_until([&] {
      std::error_code error;
      for (const auto& entry : fs::directory_iterator(dir, error)) {
        if (entry.path().filename().string().rfind("step_", 0) == 0) return true;
      }
      return false;
    });
  }

  // What a background sweep and its first run have printed so far, for a failure message.
  std::string progress_so_far(const fs::path& out) const {
    std::string text;
    for (const fs::path& file : {dir_ / "out.txt", out / "seed1.log"}) {
      std::ifstream in(file);
      text += "--- " + file.string() + (in ? "\n" : " (absent)\n") +
              std::string(std::istreambuf_iterator<char>(in), {});
    }
    return text;
  }

  void write_tiny_config(int steps) {
    std::ofstream(dir_ / "configs" / "tiny.json") << R"({
      "task": {"name": "copy", "params": {"vocab": 4}, "len_min": 2, "len_max": 4},
      "model": {"layers": 1, "d_model": 16, "heads": 2, "d_head": 8, "d_mlp": 32},
      "train": {"steps": )" << steps << R"(, "batch_size": 4, "warmup": 2, "log_every": 3, "eval_every": 3,
                "checkpoint_every": 3, "val_samples": 4, "threads": 1},
      "eval": {"lengths": [4], "samples": 4, "batch_size": 4}
    })";
    std::ofstream(dir_ / "sweep.json")
        << R"({"base": "configs/tiny.json", "grid": {"train.seed": [1, 2, 3]}})";
  }

  fs::path dir_;
  std::string out_, err_;
  std::vector<pid_t> started_;  // by start_cli, not yet waited for
};

TEST_F(SweepCli, RefusesABadRunThenRunsSkipsFinishedAndResumes) {
  std::ofstream(dir_ / "configs" / "tiny.json") << R"({
    "task": {"name": "copy", "params": {"vocab": 4}, "len_min": 2, "len_max": 4},
    "model": {"layers": 1, "d_model": 16, "heads": 2, "d_head": 8, "d_mlp": 32},
    "train": {"steps": 6, "batch_size": 4, "warmup": 2, "log_every": 3, "eval_every": 3,
              "checkpoint_every": 3, "val_samples": 4, "threads": 2},
    "eval": {"lengths": [4, 8], "samples": 4, "batch_size": 4}
  })";
  std::ofstream(dir_ / "tiny_sweep.json") << R"({
    "description": "two seeds and one bad run",
    "base": "configs/tiny.json",
    "grid": {"train.seed": [1, 2]},
    "list": [{"name": "bad", "model.attention.normalizer": "nosuchmax"}]
  })";
  const std::string sweep = (dir_ / "tiny_sweep.json").string();
  const fs::path out = dir_ / "runs";

  // A typo in one run's value is one line and exit 2, the dry run's too, before anything is trained.
  for (const char* dry : {" --dry-run", ""}) {
    EXPECT_EQ(run_cli("sweep " + sweep + " --out " + out.string() + dry), 2) << out_ << err_;
    EXPECT_NE(err_.find("sweep run bad: "), std::string::npos) << err_;
    EXPECT_NE(err_.find("nosuchmax"), std::string::npos) << err_;
    EXPECT_FALSE(fs::exists(out));
  }
  std::ofstream(dir_ / "tiny_sweep.json", std::ios::trunc) << R"({
    "description": "two seeds and one sparse run",
    "base": "configs/tiny.json",
    "grid": {"train.seed": [1, 2]},
    "list": [{"name": "sparse", "model.attention.normalizer": "sparsemax"}]
  })";
  ASSERT_EQ(run_cli("sweep " + sweep + " --out " + out.string() + " --dry-run"), 0) << err_;
  EXPECT_NE(out_.find("seed1  [new]"), std::string::npos) << out_;
  EXPECT_FALSE(fs::exists(out / "seed1"));

  EXPECT_EQ(run_cli("sweep " + sweep + " --out " + out.string() + " --jobs 2"), 0) << out_ << err_;
  for (const char* name : {"seed1", "seed2", "sparse"}) {
    EXPECT_TRUE(fs::exists(out / name / "results.json")) << name << "\n" << out_;
    EXPECT_FALSE(fs::exists(out / (std::string(name) + ".failure.txt")));
    // The two parallel jobs share the base config's two threads.
    EXPECT_EQ(read_json_file((out / name / "config.json").string())["train"]["threads"], 1);
  }
  EXPECT_EQ(read_json_file((out / "seed2" / "config.json").string())["train"]["seed"], 2);
  const auto manifest = read_json_file((out / "sweep.json").string());
  EXPECT_EQ(manifest["runs"].size(), 3u);

  // An interrupted run (checkpoint, no results) is resumed; a finished one is skipped.
  fs::remove(out / "seed2" / "results.json");
  EXPECT_EQ(run_cli("sweep " + sweep + " --out " + out.string() + " --jobs 1 --shard 0/3"), 0)
      << out_ << err_;
  EXPECT_NE(out_.find("skip seed1 (finished)"), std::string::npos) << out_;
  EXPECT_EQ(run_cli("sweep " + sweep + " --out " + out.string() + " --jobs 1 --shard 1/3"), 0)
      << out_ << err_;
  EXPECT_NE(out_.find("done seed2"), std::string::npos) << out_;
  EXPECT_TRUE(fs::exists(out / "seed2" / "results.json"));
  std::ifstream log(out / "seed2.log");
  const std::string log_text(std::istreambuf_iterator<char>(log), {});
  EXPECT_NE(log_text.find("resuming"), std::string::npos) << log_text;

  // The same run names under a changed sweep: the finished runs are not this sweep's any more.
  std::ofstream(dir_ / "changed_sweep.json") << R"({
    "base": "configs/tiny.json",
    "grid": {"train.seed": [1, 2]},
    "set": {"train.lr": 0.002}
  })";
  const std::string changed = (dir_ / "changed_sweep.json").string();
  // The dry run lists the plan, then refuses as the sweep would.
  ASSERT_EQ(run_cli("sweep " + changed + " --out " + out.string() + " --dry-run"), 2) << err_;
  EXPECT_NE(out_.find("seed1  [finished with another config: train.lr is 0.001 there, 0.002 in the sweep]"),
            std::string::npos)
      << out_;
  EXPECT_NE(err_.find((out / "seed1").string() + " finished with another config (train.lr"),
            std::string::npos)
      << err_;
  // Fewer steps from the command line also scale the intervals; the line names train.steps.
  ASSERT_EQ(run_cli("sweep " + sweep + " --out " + out.string() + " --set train.steps=2 --dry-run"), 2) << err_;
  EXPECT_NE(out_.find("seed1  [finished with another config: train.steps is 6 there, 2 in the sweep]"),
            std::string::npos)
      << out_;
  EXPECT_EQ(run_cli("sweep " + changed + " --out " + out.string()), 2) << out_ << err_;
  EXPECT_NE(err_.find((out / "seed1").string() + " finished with another config (train.lr"),
            std::string::npos)
      << err_;
  EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << err_;
  EXPECT_TRUE(fs::exists(out / "seed1" / "results.json"));
  EXPECT_EQ(read_json_file((out / "sweep.json").string())["runs"].size(), 3u);  // the first sweep's manifest
}

// A researcher rebuilds lengen while a long sweep runs: the sweep's later runs must still train,
// with the binary the sweep started with (not fail on a missing file, nor run the new build).
TEST_F(SweepCli, LaterRunsUseTheSweepsOwnBinaryAfterItsFileIsReplaced) {
  const fs::path binary = dir_ / "lengen_copy";
  fs::copy_file(LENGEN_CLI_PATH, binary);
  fs::permissions(binary, fs::perms::owner_all, fs::perm_options::add);
  write_tiny_config(6);
  const fs::path out = dir_ / "runs";
  const pid_t sweep = start_cli(binary.string(), "sweep " + (dir_ / "sweep.json").string() + " --out " +
                                                     out.string() + " --jobs 1 --shard 0/2");
  ASSERT_GT(sweep, 0);
  // As soon as the first run has started, "rebuild": a new file at the binary's path.
  wait_for(out / "seed1.log");
  EXPECT_TRUE(fs::exists(out / "seed1.log"));
  fs::remove(binary);
  std::ofstream(binary) << "#!/bin/sh\nexit 3\n";
  fs::permissions(binary, fs::perms::owner_all, fs::perm_options::add);
  EXPECT_EQ(wait_cli(sweep), 0) << out_;
  EXPECT_TRUE(fs::exists(out / "seed1" / "results.json")) << out_;
  EXPECT_TRUE(fs::exists(out / "seed3" / "results.json")) << out_;
}

// Ctrl-C stops a sweep: the running run checkpoints and is reported as interrupted (not as a
// failure, no failure file), the others as not started, and the sweep exits 130.
TEST_F(SweepCli, CtrlCReportsTheRunningRunAsInterruptedNotFailed) {
  write_tiny_config(100000);
  const fs::path out = dir_ / "runs";
  const pid_t sweep = start_cli(
      LENGEN_CLI_PATH, "sweep " + (dir_ / "sweep.json").string() + " --out " + out.string() + " --jobs 1");
  ASSERT_GT(sweep, 0);
  ASSERT_TRUE(wait_for_a_checkpoint(out / "seed1" / "checkpoints")) << progress_so_far(out);
  kill(sweep, SIGINT);
  EXPECT_EQ(wait_cli(sweep), 130) << out_;
  EXPECT_NE(out_.find("stopped seed1 (interrupted, checkpoint kept)"), std::string::npos) << out_;
  EXPECT_NE(out_.find("0 failed, 1 interrupted, 2 not started"), std::string::npos) << out_;
  EXPECT_FALSE(fs::exists(out / "seed1.failure.txt"));
  EXPECT_FALSE(fs::exists(out / "seed1" / "results.json"));
}

// A stop signal that reaches a run while it is still starting (before it can catch signals)
// ends it by the signal's default action; the sweep passed that signal on, so the run is
// interrupted, not failed, and the sweep does not claim a checkpoint it does not have.
TEST_F(SweepCli, AStopWhileARunStartsIsAnInterruptionNotAFailure) {
  write_tiny_config(100000);
  const fs::path out = dir_ / "runs";
  const pid_t sweep = start_cli(
      LENGEN_CLI_PATH, "sweep " + (dir_ / "sweep.json").string() + " --out " + out.string() + " --jobs 1");
  ASSERT_GT(sweep, 0);
  // "start seed1" is printed once the sweep catches stop signals, as it starts the run.
  const auto started = [this] {
    std::ifstream in(dir_ / "out.txt");
    return std::string(std::istreambuf_iterator<char>(in), {}).find("start seed1") != std::string::npos;
  };
  for (int i = 0; i < 12000 && !started(); ++i) usleep(1000);
  ASSERT_TRUE(started()) << progress_so_far(out);
  kill(sweep, SIGTERM);
  EXPECT_EQ(wait_cli(sweep), 130) << out_;
  EXPECT_EQ(out_.find("FAIL"), std::string::npos) << out_;
  EXPECT_NE(out_.find("0 failed, 1 interrupted, 2 not started"), std::string::npos) << out_;
  EXPECT_FALSE(fs::exists(out / "seed1.failure.txt"));
  const bool kept = fs::exists(out / "seed1" / "checkpoints") && !fs::is_empty(out / "seed1" / "checkpoints");
  EXPECT_NE(out_.find(kept ? "stopped seed1 (interrupted, checkpoint kept)"
                           : "stopped seed1 (interrupted before its first checkpoint)"),
            std::string::npos)
      << out_;
}

}  // namespace
}  // namespace lengen
