// `lengen eval` under faults: bad options, bad test files and foreign or damaged checkpoints end
// with one line and exit code 2 and leave results.json as it was; every result says what
// produced it, and results on --data files never replace results on generated data.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.h"
#include "lengen/checkpoint.h"
#include "lengen/config_io.h"
#include "lengen/evaluation.h"
#include "lengen/run_folder.h"
#include "lengen/sequence.h"
#include "lengen/trainer.h"
#include "trained_run.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;

// One tiny run, trained and evaluated once for the suite.
class CliEvalFaults : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    trained_ = new testing::TrainedRun("lengen_cli_eval_faults",
                                       config_from_string(testing::tiny_copy_json(6), "tiny"));
    dir_ = trained_->scratch();
    config_ = trained_->config();
  }
  static void TearDownTestSuite() { delete trained_; }
  static std::string run_dir() { return trained_->run_dir(); }
  static std::string results_text() { return testing::text_of(RunFolder(run_dir()).results_path()); }
  CliResult lengen(const std::string& args) { return testing::run_lengen(*dir_, args); }

  // Exit 2, one line that contains `expected`, and results.json untouched.
  void expect_refused(const std::string& args, const std::string& expected) {
    SCOPED_TRACE(args);
    const std::string before = results_text();
    testing::expect_one_line_refusal(lengen(args), expected);
    EXPECT_EQ(results_text(), before);
    for (const auto& entry : fs::directory_iterator(run_dir()))
      EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
  }

  // A folder of test files: test_0_{length} with the given source lines (targets copy them).
  static std::string data_dir(const std::string& name, int64_t length,
                              const std::vector<std::string>& lines) {
    const fs::path dir = *dir_ / name;
    fs::create_directories(dir);
    std::ofstream src(dir / ("test_0_" + std::to_string(length) + ".src"));
    std::ofstream trg(dir / ("test_0_" + std::to_string(length) + ".trg"));
    for (const auto& line : lines) {
      src << line << "\n";
      trg << line << "\n";
    }
    return dir.string();
  }

  static testing::TrainedRun* trained_;
  static fs::path* dir_;  // the run's scratch folder
  static Config* config_;
};

testing::TrainedRun* CliEvalFaults::trained_ = nullptr;
fs::path* CliEvalFaults::dir_ = nullptr;
Config* CliEvalFaults::config_ = nullptr;

TEST_F(CliEvalFaults, EmptyOrBadOptionsAreRefusedNotDefaulted) {
  expect_refused("eval " + run_dir() + " --samples 0", "eval.samples");
  expect_refused("eval " + run_dir() + " --samples -5", "samples");
  expect_refused("eval " + run_dir() + " --batch-size 0", "eval.batch_size");
  expect_refused("eval " + run_dir() + " --lengths ''", "lengths");
  expect_refused("eval " + run_dir() + " --lengths ' '", "--lengths: the value is blank");
  expect_refused("eval " + run_dir() + " --lengths 10000000", "eval.lengths");
  expect_refused("eval " + run_dir() + " --checkpoint ''", "--checkpoint: the value is empty");
  // A problem with an option's value names the option typed, never a --set nobody wrote.
  for (const auto& [args, typed] :
       std::vector<std::pair<std::string, std::string>>{{" --lengths 4,,8", "--lengths 4,,8: "},
                                                        {" --samples 0", "--samples 0: "},
                                                        {" --batch-size 0", "--batch-size 0: "},
                                                        {" --decode sideways", "--decode sideways: "}}) {
    const CliResult result = lengen("eval " + run_dir() + args);
    EXPECT_EQ(result.err.rfind("lengen: error: " + typed, 0), 0u) << result.err;
    EXPECT_EQ(result.err.find("--set"), std::string::npos) << result.err;
  }
}

// More threads than the process may hold (its memory limit, here ulimit -v 3 GB: LibTorch's two
// pools of 199 threads with 8 MiB stacks do not fit) is one line, not LibTorch waiting forever for
// a pool thread that never started.
// A folder of the user's with a config.json of their own is named as not a run, not by its JSON.
TEST_F(CliEvalFaults, AFolderLengenDidNotTrainIsNamedAsSuch) {
  const fs::path mine = *dir_ / "mine";
  fs::create_directories(mine);
  std::ofstream(mine / "config.json") << "{ my notes";
  testing::expect_one_line_refusal(lengen("eval " + mine.string()),
                                   "mine is not a lengen run folder (no run.json)");
}

TEST_F(CliEvalFaults, MoreThreadsThanTheProcessMayHoldIsOneLine) {
  const std::string before = results_text();
  const CliResult result = testing::run_lengen(*dir_, "eval " + run_dir() + " --lengths 4 --threads 200",
                                               "ulimit -v 3000000; timeout 120");
  testing::expect_one_line_refusal(result, "cannot start 200 compute threads");
  EXPECT_EQ(results_text(), before);
}

// An evaluation changes how it runs, not what the run is: results.json is labelled with the run's
// task and method, and other results there would sit under a label that is not theirs.
TEST_F(CliEvalFaults, OverridesOfTheRunsOwnKeysAreRefused) {
  for (const std::string key :
       {"task.name=reverse", "task.len_max=8", "model.attention.normalizer=softmax", "train.seed=3"}) {
    expect_refused("eval " + run_dir() + " --lengths 4 --set " + key,
                   "--set " + key.substr(0, key.find('=')) + ": lengen eval changes only eval.*");
  }
}

// The test files name their lengths: a --lengths beside them would be ignored, so it is refused.
TEST_F(CliEvalFaults, LengthsBesideTestFilesAreRefused) {
  expect_refused("eval " + run_dir() + " --data " + data_dir("with_lengths", 4, {"1 2 3 0"}) + " --lengths 8",
                 "--lengths with --data");
}

TEST_F(CliEvalFaults, EmptyTestFilesAreRefused) {
  expect_refused("eval " + run_dir() + " --data " + data_dir("empty", 4, {}), "test_0_4.src: no samples");
}

TEST_F(CliEvalFaults, TestLinesMustHaveTheLengthTheirNameSays) {
  const std::string long_line = "1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 0";
  expect_refused("eval " + run_dir() + " --data " + data_dir("mislabelled", 4, {"1 2 3 0", long_line}),
                 "test_0_4.src:2: 20 symbols, but the name says length 4");
}

TEST_F(CliEvalFaults, AnotherModelsCheckpointIsRefusedNamingTheKeyOrParameter) {
  Config wider = *config_;
  wider.model.d_model = 24;
  Decoder other(wider.model, vocab_size(4));
  const std::string path = (*dir_ / "wider.pt").string();
  save_checkpoint(path, other, nullptr, {});
  expect_refused("eval " + run_dir() + " --checkpoint " + path,
                 "does not fit this model: it was trained with model.d_model=24");
  Decoder other_vocab(config_->model, vocab_size(9));
  save_checkpoint(path, other_vocab, nullptr, {});
  expect_refused("eval " + run_dir() + " --checkpoint " + path, "does not fit this model: parameter ");
  std::ofstream((*dir_ / "random.pt").string()) << std::string(1000, 'x');
  expect_refused("eval " + run_dir() + " --checkpoint " + (*dir_ / "random.pt").string(),
                 "is unreadable or truncated");
  expect_refused("eval " + run_dir() + " --checkpoint /dev/null",
                 "checkpoint /dev/null is not a file");
}

// Another run's checkpoint whose tensors fit (softmax and sparsemax hold the same parameters) is
// still another method's model: refused by the key that differs, never scored under this run's
// label.
TEST_F(CliEvalFaults, AnotherRunsCheckpointOfAnotherMethodIsRefused) {
  Config theirs = *config_;
  theirs.model.attention.normalizer =
      config_->model.attention.normalizer == "sparsemax" ? "softmax" : "sparsemax";
  const fs::path other = *dir_ / "other_run";
  fs::create_directories(other / "checkpoints");
  std::ofstream(other / "config.json") << config_to_json(theirs).dump(2);
  Decoder model(theirs.model, vocab_size(4));
  const std::string path = (other / "checkpoints" / "step_00000006.pt").string();
  save_checkpoint(path, model, nullptr, {});
  expect_refused("eval " + run_dir() + " --checkpoint " + path,
                 "does not fit this model: it was trained with model.attention.normalizer=\"" +
                     theirs.model.attention.normalizer + "\"");
}

// A checkpoint holding NaN weights (written by another tool, or by a build without the guard):
// evaluating it must fail, not store a NaN loss.
TEST_F(CliEvalFaults, ANonFiniteLossFailsTheEvaluation) {
  Decoder model(config_->model, vocab_size(4));
  load_checkpoint(resolve_checkpoint(run_dir(), "last"), model, nullptr);
  {
    torch::NoGradGuard no_grad;
    for (auto& parameter : model->parameters()) parameter.fill_(std::numeric_limits<float>::quiet_NaN());
  }
  torch::serialize::OutputArchive archive, model_archive;
  model->save(model_archive);
  archive.write("model", model_archive);
  archive.write("step", torch::tensor(int64_t{6}));
  archive.write("best_validation", torch::tensor(0.0, torch::kDouble));
  archive.write("best_step", torch::tensor(int64_t{6}));
  for (const char* key : {"window_loss", "window_steps", "window_tokens"}) archive.write(key, torch::tensor(0.0));
  const std::string path = (*dir_ / "nan.pt").string();
  archive.save_to(path);
  expect_refused("eval " + run_dir() + " --checkpoint " + path, "non-finite loss");
}

TEST_F(CliEvalFaults, ResultsSayWhatProducedThemAndFileResultsStayApart) {
  const auto before = read_json_file(RunFolder(run_dir()).results_path());
  const auto generated = before["results"]["teacher_forced"]["4"];
  EXPECT_EQ(generated["data"]["source"], "generated");
  EXPECT_EQ(generated["data"]["task"], "copy");
  EXPECT_EQ(generated["data"]["samples"], 4);
  EXPECT_TRUE(generated["data"].contains("seed"));
  EXPECT_EQ(generated["model"]["step"], 6);
  EXPECT_EQ(generated["model"]["weights_hash"].get<std::string>().size(), 16u);

  const std::string data = data_dir("files", 4, {"1 2 3 0", "3 3 2 1", "0 1 0 1"});
  const CliResult result = lengen("eval " + run_dir() + " --data " + data);
  ASSERT_EQ(result.code, 0) << result.err;
  const auto after = read_json_file(RunFolder(run_dir()).results_path());
  EXPECT_EQ(after["results"]["teacher_forced"]["4"], generated);  // not replaced
  const auto on_files =
      after["results_on_files"][fs::absolute(data).lexically_normal().string()]["teacher_forced"]["4"];
  EXPECT_EQ(on_files["samples"], 3);
  EXPECT_EQ(on_files["data"]["source"], "files");
  EXPECT_EQ(on_files["data"]["files"][0]["name"], "test_0_4");
  EXPECT_EQ(on_files["data"]["files"][0]["hash"].get<std::string>().size(), 16u);
  EXPECT_EQ(on_files["model"]["weights_hash"], generated["model"]["weights_hash"]);

  const CliResult report = lengen("report " + run_dir() + " --out " + (*dir_ / "report").string());
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_NE(report.out.find("Data: generated"), std::string::npos) << report.out;
  const CliResult file_report =
      lengen("report " + run_dir() + " --on-files --out " + (*dir_ / "report_files").string());
  ASSERT_EQ(file_report.code, 0) << file_report.err;
  EXPECT_NE(file_report.out.find("Data: the test files"), std::string::npos) << file_report.out;
}

}  // namespace
}  // namespace lengen
