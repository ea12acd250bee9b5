// `lengen data` end to end: runs the built binary into a temporary directory.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "lengen/data_record.h"
#include "lengen/data_streams.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"
#include "lengen/rng.h"
#include "lengen/task.h"
#include "lengen/task_files.h"
#include "lengen/training_data.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;

class CliData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("lengen_cli_data_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `lengen data ARGS`; returns the exit code, keeping stderr in err_.
  int run(const std::string& args) { return lengen("data " + args); }

  // Trains a tiny copy model (vocab 4, lengths len_min-4) on --data `data` into OUT/run; returns
  // the exit code, keeping stderr in err_.
  int train_copy_on(const std::string& data, int len_min) {
    std::ofstream(out("copy.json")) << R"({
  "task": {"name": "copy", "params": {"vocab": 4}, "len_min": )"
                                    << len_min << R"(, "len_max": 4},
  "model": {"layers": 1, "d_model": 16, "heads": 2, "d_head": 8, "d_mlp": 32},
  "train": {"steps": 2, "batch_size": 4, "warmup": 1, "threads": 1},
  "eval": {"lengths": [4], "samples": 4, "batch_size": 4}
})";
    return lengen("train " + out("copy.json") + " --out " + out("run") + " --data " + data);
  }

  int lengen(const std::string& args) {
    const fs::path err_path = dir_ / "stderr.txt";
    std::string command = std::string(LENGEN_CLI_PATH) + " " + args + " > " + (dir_ / "stdout.txt").string() +
                          " 2> " + err_path.string();
    int status = std::system(command.c_str());
    std::ifstream in(err_path);
    err_ = std::string(std::istreambuf_iterator<char>(in), {});
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string out(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
  std::string err_;
};

TEST_F(CliData, WritesEveryTasksSplits) {
  for (const auto& name : task_names()) {
    SCOPED_TRACE(name);
    ASSERT_EQ(run("--task " + name + " --seed 3 --out " + out(name) +
                  " --train 20 --len-min 32 --len-max 40 --eval-lengths 64,128 --eval-size 5"),
              0)
        << err_;
    auto task = make_task(name, {}, 3);
    std::vector<Sample> train = read_samples(out(name) + "/train", task->num_symbols());
    ASSERT_EQ(train.size(), 20u);
    for (const Sample& sample : train) {
      EXPECT_GE(sample.src.size(), static_cast<size_t>(task->source_length(32).value_or(32)));
      EXPECT_LE(sample.src.size(), static_cast<size_t>(task->source_length(40).value_or(40)));
    }
    std::vector<EvalSplit> splits = list_eval_splits(out(name));
    ASSERT_EQ(splits.size(), 2u);
    EXPECT_EQ(splits[0].stem, eval_split_stem(out(name), 0, 64));
    EXPECT_EQ(splits[1].stem, eval_split_stem(out(name), 1, 128));
    for (const auto& split : splits) {
      std::vector<Sample> samples = read_samples(split.stem, task->num_symbols());
      ASSERT_EQ(samples.size(), 5u);
      for (const Sample& sample : samples) {
        EXPECT_EQ(static_cast<int64_t>(sample.src.size()),
                  task->source_length(split.length).value_or(split.length));
      }
    }
  }
}

// The folder records the task its files come from: training or evaluating another task (or the
// same task with another parameter) on them is refused in one line naming the record.
TEST_F(CliData, FilesOfAnotherTaskAreRefusedByTheirRecord) {
  ASSERT_EQ(run("--task reverse --param vocab=4 --seed 3 --out " + out("reverse") +
                " --train 20 --len-min 2 --len-max 4 --eval-lengths 4 --eval-size 4"),
            0)
      << err_;
  auto reverse = make_task("reverse", {{"vocab", 4}}, 3);
  EXPECT_NO_THROW(check_data_record(out("reverse"), *reverse));
  EXPECT_EQ(train_copy_on(out("reverse"), 2), 2);
  const std::string message = err_;
  EXPECT_NE(message.find("holds data of task reverse (" + out("reverse") +
                         "/data.json), but the config's task is copy"),
            std::string::npos)
      << message;
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  EXPECT_FALSE(fs::exists(out("run") + "/checkpoints"));
  // The refusal is all it says: not first what a short --set train.steps scaled.
  EXPECT_EQ(lengen("train " + out("copy.json") + " --out " + out("run") + " --data " + out("reverse") +
                   " --set train.steps=1"),
            2);
  std::ifstream said(dir_ / "stdout.txt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(said), {}), "");
  try {
    check_data_record(out("reverse"), *make_task("reverse", {{"vocab", 5}}, 3));
    ADD_FAILURE() << "another vocab accepted";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("with vocab=4 ("), std::string::npos) << error.what();
  }
  // A folder without a record (files made by another tool) is read as it is.
  fs::remove(out("reverse") + "/data.json");
  EXPECT_NO_THROW(check_data_record(out("reverse"), *make_task("copy", {{"vocab", 4}}, 3)));
}

// One `lengen data` writes a folder at a time: a second one finds it held and writes nothing.
TEST_F(CliData, AFolderBeingWrittenIsRefused) {
  fs::create_directories(out("held"));
  const std::string held = "flock -o " + out("held/.lengen_lock") + " ";
  const std::string command = held + std::string(LENGEN_CLI_PATH) + " data --task copy --out " + out("held") +
                              " --train 5 --len-min 2 --len-max 4 --eval-lengths 4 --eval-size 2 2> " +
                              out("held_err.txt");
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  std::ifstream err_in(out("held_err.txt"));
  const std::string message(std::istreambuf_iterator<char>(err_in), {});
  EXPECT_NE(message.find(out("held") + " is in use by another lengen process"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(out("held/train.src")));
}

TEST_F(CliData, SameSeedWritesTheSameFiles) {
  const std::string args =
      " --task mqmtar --seed 5 --train 10 --len-min 32 --len-max 64 --eval-lengths 96 --eval-size 4";
  ASSERT_EQ(run("--out " + out("a") + args), 0) << err_;
  ASSERT_EQ(run("--out " + out("b") + args), 0) << err_;
  for (const std::string file : {"train.src", "train.trg", "test_0_96.src", "test_0_96.trg"}) {
    std::ifstream a(out("a/" + file)), b(out("b/" + file));
    std::stringstream text_a, text_b;
    text_a << a.rdbuf();
    text_b << b.rdbuf();
    EXPECT_EQ(text_a.str(), text_b.str()) << file;
  }
}

// The files hold what training and evaluation draw in-process from the same seed, split by split
// (mqmtar draws its vocabularies per split), and mqmtar's keys carry a value per sample.
TEST_F(CliData, FilesHoldTheSamplesTrainingAndEvaluationDraw) {
  const TaskParams params = {{"alphabet", 8}, {"num_pairs", 64}, {"num_queries", 1}};
  ASSERT_EQ(
      run("--task mqmtar --param alphabet=8 --param num_pairs=64 --param num_queries=1 --seed 5 --out " +
          out("m") + " --train 300 --len-min 64 --len-max 64 --eval-lengths 96 --eval-size 4"),
      0)
      << err_;
  auto task = make_task("mqmtar", params, 5);
  const std::vector<Sample> test = read_samples(out("m") + "/test_0_96", task->num_symbols());
  const std::vector<Sample> in_process = fixed_samples(*task, 96, 4, derive_seed(5, kEvalStream(96)));
  ASSERT_EQ(test.size(), in_process.size());
  for (size_t i = 0; i < test.size(); ++i) {
    EXPECT_EQ(test[i].src, in_process[i].src) << i;
    EXPECT_EQ(test[i].trg, in_process[i].trg) << i;
  }
  // A key (first two symbols of each 5-symbol record "k k KVSEP v v") and the values it carries.
  std::map<Symbols, std::set<Symbols>> values;
  for (const Sample& sample : read_samples(out("m") + "/train", task->num_symbols())) {
    for (size_t i = 2; i + 2 < sample.src.size(); ++i) {
      if (sample.src[i] != 1) continue;
      values[{sample.src[i - 2], sample.src[i - 1]}].insert({sample.src[i + 1], sample.src[i + 2]});
    }
  }
  size_t most = 0;
  for (const auto& [key, seen] : values) most = std::max(most, seen.size());
  EXPECT_EQ(values.size(), 64u);
  EXPECT_GT(most, 20u) << "a key carries a different value from sample to sample";
}

TEST_F(CliData, BadParameterIsOneLineAndExitCodeTwo) {
  EXPECT_EQ(run("--task copy --param vocb=3 --out " + out("x") + " --train 5 --len-min 4 --len-max 8"), 2);
  EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << err_;
  EXPECT_NE(err_.find("'vocb'"), std::string::npos) << err_;
  EXPECT_NE(err_.find("did you mean 'vocab'"), std::string::npos) << err_;
  EXPECT_FALSE(fs::exists(out("x/train.src")));
}

// Counts and lengths outside what lengen can write are one line naming the option, before any
// file: a negative seed is not read as 2^64 - 1, a length of 2^63 - 1 is not allocated, a length
// given twice is not two splits of one length, an empty item of a list is not skipped.
TEST_F(CliData, OutOfRangeOptionsAreOneLineAndWriteNothing) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--seed -1 --train 5 --len-min 4 --len-max 8",
       "--seed: '-1' is not a whole number from 0 to 18446744073709551615"},
      {"--seed 18446744073709551616 --train 5 --len-min 4 --len-max 8", "is not a whole number from 0 to"},
      {"--train -3 --len-min 4 --len-max 8", "--train: '-3' is not a whole number, 0 or more"},
      {"--eval-lengths 9223372036854775807",
       "--eval-lengths: '9223372036854775807' is not a whole number from 1 to 1048576"},
      {"--train 5 --len-min 4 --len-max 2000000",
       "--len-max: '2000000' is not a whole number from 1 to 1048576"},
      {"--eval-lengths 16 --eval-size 0", "--eval-size: '0' is not a whole number from 1 to 1048576"},
      {"--eval-lengths 6,6", "--eval-lengths names 6 twice"},
      {"--eval-lengths 8,,16", "--eval-lengths: item 2 of '8,,16' is empty"},
      {"--eval-lengths 8 --param vocab=16 --param vocab=32", "--param vocab is given twice"},
      {"--eval-lengths 8 --param vocab=0x10", "--param vocab=0x10: '0x10' is not a number"},
      {"--eval-lengths 8 --param vocab=inf", "--param vocab=inf: 'inf' is not a number"},
      {"--eval-lengths 8 --param \"vocab= 16\"", "' 16' is not a number"},
      {"--eval-lengths 8,16,", "--eval-lengths: item 3 of '8,16,' is empty"},
      {"--eval-lengths 8,x", "--eval-lengths: item 2 of '8,x': 'x' is not a whole number from 1 to 1048576"}};
  for (const auto& [args, expected] : cases) {
    SCOPED_TRACE(args);
    fs::remove_all(out("x"));
    EXPECT_EQ(run("--task copy --out " + out("x") + " " + args), 2);
    EXPECT_NE(err_.find(expected), std::string::npos) << err_;
    EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << err_;
    EXPECT_FALSE(fs::exists(out("x/train.src")));
    EXPECT_FALSE(fs::exists(out("x/test_0_6.src")));
  }
}

// Every seed a config takes, up to 2^64 - 1, writes its data.
TEST_F(CliData, TheLargestSeedWritesData) {
  EXPECT_EQ(run("--task copy --seed 18446744073709551615 --out " + out("big") +
                " --train 3 --len-min 4 --len-max 8"),
            0)
      << err_;
  EXPECT_TRUE(fs::exists(out("big/train.src")));
}

// --force replaces what lengen data wrote, never a user's files beside them.
TEST_F(CliData, ForceLeavesTheUsersFilesAlone) {
  fs::create_directories(out("d"));
  std::ofstream(out("d/test_9_99.src")) << "1 2\n";
  std::ofstream(out("d/test_9_99.trg")) << "1 2\n";
  EXPECT_EQ(run("--task copy --out " + out("d") + " --eval-lengths 16 --force"), 2);
  EXPECT_NE(err_.find("test_9_99.src exists and lengen did not write it"), std::string::npos) << err_;
  EXPECT_TRUE(fs::exists(out("d/test_9_99.src")));
  EXPECT_FALSE(fs::exists(out("d/test_0_16.src")));
  fs::remove(out("d/test_9_99.src"));
  fs::remove(out("d/test_9_99.trg"));
  std::ofstream(out("d/train.src")) << "mine\n";
  EXPECT_EQ(run("--task copy --out " + out("d") + " --train 3 --len-min 4 --len-max 8 --force"), 2);
  EXPECT_NE(err_.find("train.src exists and lengen did not write it"), std::string::npos) << err_;
  std::ifstream kept(out("d/train.src"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "mine\n");
}

// SIGTERM (twice, as an impatient user or a scheduler sends it) stops a long write with exit 130
// and leaves no .part file behind, nor the splits it had yet to write; under --force, nor the old
// files it was replacing (an old train split beside none of the new test splits would pass for
// this command's data).
TEST_F(CliData, AStopSignalLeavesNoPartialFiles) {
  const std::string data = out("d");
  ASSERT_EQ(run("--task copy --out " + data + " --eval-lengths 4 --train 10 --len-min 4 --len-max 8"), 0)
      << err_;
  const std::string script = "(" + std::string(LENGEN_CLI_PATH) +
                             " data --task copy --force --seed 7 --out " + data +
                             " --eval-lengths 4 --train 200000000 --len-min 4 --len-max 8 > /dev/null 2> " +
                             out("stderr.txt") + " & pid=$!; for i in $(seq 600); do [ -e " + data +
                             "/train.src.part ] && break; sleep 0.1; done; kill -TERM $pid; kill -TERM $pid; "
                             "wait $pid; echo $? > " +
                             out("rc.txt") + ")";
  ASSERT_EQ(std::system(script.c_str()), 0);
  std::ifstream rc(out("rc.txt")), err(out("stderr.txt"));
  int code = -1;
  rc >> code;
  const std::string message(std::istreambuf_iterator<char>(err), {});
  EXPECT_EQ(code, 130) << message;
  EXPECT_NE(message.find("lengen: data stopped;"), std::string::npos) << message;
  EXPECT_NE(message.find("the files it was replacing are removed too"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(data + "/train.src.part"));
  EXPECT_FALSE(fs::exists(data + "/train.trg.part"));
  EXPECT_FALSE(fs::exists(data + "/train.src"));
  EXPECT_FALSE(fs::exists(data + "/test_0_4.src"));
}

TEST_F(CliData, RefusesToOverwriteWithoutForce) {
  const std::string args =
      " --task copy --out " + out("d") + " --train 5 --len-min 4 --len-max 8 --eval-lengths 16";
  ASSERT_EQ(run("--seed 1" + args), 0) << err_;
  std::ifstream before_file(out("d/train.src"));
  std::stringstream before;
  before << before_file.rdbuf();
  EXPECT_EQ(run("--seed 2" + args), 2);
  EXPECT_NE(err_.find("--force"), std::string::npos) << err_;
  std::ifstream after_file(out("d/train.src"));
  std::stringstream after;
  after << after_file.rdbuf();
  EXPECT_EQ(before.str(), after.str()) << "nothing lost";
  EXPECT_EQ(run("--seed 2 --force" + args), 0) << err_;
}

// The run records task.len_min and task.len_max as the lengths it trained on: training files with
// a source shorter than len_min (or longer than len_max) are refused by line, before a step.
TEST_F(CliData, TrainingFilesOutsideTheConfiguredLengthsAreRefused) {
  ASSERT_EQ(run("--task copy --param vocab=4 --seed 3 --out " + out("short") +
                " --train 20 --len-min 2 --len-max 4 --eval-lengths 4 --eval-size 4"),
            0)
      << err_;
  EXPECT_EQ(train_copy_on(out("short"), 3), 2);
  const std::string message = err_;
  EXPECT_NE(message.find("symbols, fewer than the 3 of a source at task.len_min=3"), std::string::npos)
      << message;
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  EXPECT_FALSE(fs::exists(out("run") + "/checkpoints"));
}

// data.json speaks for every split in the folder: a folder holding data is written anew as a whole,
// so no split of another task or seed stays beside the new record.
TEST_F(CliData, AFolderHoldingDataIsWrittenAnewAsAWhole) {
  ASSERT_EQ(run("--task copy --param vocab=4 --seed 1 --train 20 --len-min 2 --len-max 4 --out " + out("d")),
            0)
      << err_;
  const std::string reverse = "--task reverse --param vocab=4 --seed 1 --eval-lengths 4 --eval-size 2 --out ";
  EXPECT_EQ(run(reverse + out("d")), 2);
  EXPECT_NE(err_.find(out("d") + " already holds data (train.src); use --force"), std::string::npos) << err_;
  ASSERT_EQ(run(reverse + out("d") + " --force"), 0) << err_;
  EXPECT_FALSE(fs::exists(out("d/train.src")));
  EXPECT_TRUE(fs::exists(out("d/test_0_4.src")));
  EXPECT_EQ(read_json_file(out("d/data.json"))["task"], "reverse");
}

// Training on --data with test splits evaluates those splits: other eval.lengths are not
// evaluated, and the run says so (the same lengths say nothing).
TEST_F(CliData, EvalLengthsBesideTestSplitsAreNamed) {
  ASSERT_EQ(
      run("--task copy --param vocab=4 --train 32 --len-min 2 --len-max 4 --eval-lengths 4 --eval-size 2 "
          "--out " +
          out("d")),
      0)
      << err_;
  ASSERT_EQ(train_copy_on(out("d"), 2), 0) << err_;
  const auto printed = [&] {
    std::ifstream in(dir_ / "stdout.txt");
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(printed().find("is not what the evaluation after training scores"), std::string::npos)
      << printed();
  ASSERT_EQ(lengen("train " + out("copy.json") + " --out " + out("other") + " --data " + out("d") +
                   " --set eval.lengths=4,8"),
            0)
      << err_;
  EXPECT_NE(
      printed().find("eval.lengths [4,8] is not what the evaluation after training scores: it scores the "
                     "test splits of --data " +
                     out("d") + " (lengths 4)"),
      std::string::npos)
      << printed();
}

}  // namespace
}  // namespace lengen
