// Training under faults: a blown-up step never becomes a checkpoint, a resume logs what an
// uninterrupted run logs and skips a damaged checkpoint, and bad inputs are refused before the
// run folder is touched.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "lengen/checkpoint.h"
#include "lengen/errors.h"
#include "lengen/run_folder.h"
#include "lengen/sequence.h"
#include "lengen/trainer.h"
#include "temp_folder.h"
#include "tiny_copy_config.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;

class TrainerFaultsTest : public testing::TempFolderTest {
 protected:
  TrainerFaultsTest() : TempFolderTest("lengen_trainer_faults") {}

  TrainOptions options(const std::string& name) const {
    TrainOptions result;
    result.run_dir = (root_ / name).string();
    return result;
  }

  static Config config(int64_t steps) {
    Config config = testing::tiny_copy_config();
    config.train.steps = steps;
    config.train.warmup = 2;
    config.train.log_every = 4;
    config.train.eval_every = 100;
    config.train.checkpoint_every = 3;
    config.train.keep_checkpoints = 10;
    config.train.val_samples = 8;
    return config;
  }
};

std::string diverged_message(const std::function<void()>& action) {
  try {
    action();
  } catch (const TrainingDiverged& e) {
    return e.what();
  }
  return "";
}

std::vector<nlohmann::json> logged_losses(const std::string& path) {
  std::vector<nlohmann::json> records;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto record = nlohmann::json::parse(line);
    if (record.contains("loss")) records.push_back(record);
  }
  return records;
}

TEST_F(TrainerFaultsTest, ABlownUpStepIsNeverCheckpointed) {
  Config blow_up = config(12);
  blow_up.train.lr = 1e30;
  blow_up.train.grad_clip = 0;
  blow_up.train.checkpoint_every = 1;
  const auto run_options = options("blow_up");
  const std::string message = diverged_message([&] { train(blow_up, run_options); });
  ASSERT_NE(message, "") << "expected the run to diverge";
  EXPECT_NE(message.find("no checkpoint was written"), std::string::npos) << message;
  // Whatever was written loads into a model with finite weights.
  for (const std::string& path : RunFolder(run_options.run_dir).checkpoints()) {
    Decoder model(blow_up.model, vocab_size(8));
    load_checkpoint(path, model, nullptr);
    EXPECT_TRUE(weights_are_finite(model)) << path;
  }
}

TEST_F(TrainerFaultsTest, ADivergedRunNamesItsLastGoodCheckpoint) {
  auto faulty = options("nan");
  faulty.loss_hook = [](int64_t step, torch::Tensor& loss) {
    if (step == 7) loss = loss * std::numeric_limits<float>::quiet_NaN();
  };
  const std::string message = diverged_message([&] { train(config(12), faulty); });
  EXPECT_NE(message.find("the last good checkpoint is " + RunFolder(faulty.run_dir).checkpoint_path(6)),
            std::string::npos)
      << message;
  // The eighth step (index 7) is "step 8", as the log and the checkpoints count.
  EXPECT_NE(message.find("non-finite loss at step 8"), std::string::npos) << message;
}

// A checkpoint in the middle of a log window: the resumed run logs the same mean loss there as
// the run that never stopped.
TEST_F(TrainerFaultsTest, AResumeLogsTheSameLossesAsAnUninterruptedRun) {
  const Config run_config = config(12);
  train(run_config, options("whole"));
  auto killed = options("resumed");
  killed.loss_hook = [](int64_t step, torch::Tensor&) {
    if (step == 7) throw std::runtime_error("killed");
  };
  EXPECT_THROW(train(run_config, killed), std::runtime_error);  // last checkpoint: step 6
  auto resumed = options("resumed");
  resumed.resume = true;
  train(run_config, resumed);
  const auto whole = logged_losses(RunFolder(options("whole").run_dir).log_path());
  const auto again = logged_losses(RunFolder(resumed.run_dir).log_path());
  ASSERT_EQ(whole.size(), 3u);
  ASSERT_EQ(again.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(again[i]["step"], whole[i]["step"]);
    EXPECT_EQ(again[i]["loss"].get<double>(), whole[i]["loss"].get<double>()) << "step " << whole[i]["step"];
  }
}

TEST_F(TrainerFaultsTest, ResumeSkipsADamagedNewestCheckpoint) {
  const Config run_config = config(12);
  auto killed = options("run");
  killed.loss_hook = [](int64_t step, torch::Tensor&) {
    if (step == 10) throw std::runtime_error("killed");
  };
  EXPECT_THROW(train(run_config, killed), std::runtime_error);
  RunFolder run(killed.run_dir);
  ASSERT_EQ(run.latest_checkpoint(), run.checkpoint_path(9));
  fs::resize_file(run.checkpoint_path(9), fs::file_size(run.checkpoint_path(9)) / 2);
  // A refused resume (every checkpoint unreadable) sets nothing aside.
  const std::vector<std::string> before = run.checkpoints();
  for (const std::string& checkpoint : before) {
    if (checkpoint != run.checkpoint_path(9)) fs::copy_file(checkpoint, checkpoint + ".whole");
    fs::resize_file(checkpoint, 10);
  }
  auto refused = options("run");
  refused.resume = true;
  EXPECT_THROW(train(run_config, refused), UserError);
  EXPECT_EQ(run.checkpoints(), before);
  EXPECT_FALSE(fs::exists(run.checkpoint_path(9) + ".unreadable"));
  for (const std::string& checkpoint : before) {
    if (checkpoint != run.checkpoint_path(9)) fs::rename(checkpoint + ".whole", checkpoint);
  }
  auto resumed = options("run");
  resumed.resume = true;
  EXPECT_EQ(train(run_config, resumed).steps_done, 12);
  EXPECT_TRUE(fs::exists(run.checkpoint_path(9) + ".unreadable"));
  Decoder model(run_config.model, vocab_size(8));
  EXPECT_EQ(load_checkpoint(run.latest_checkpoint(), model, nullptr).step, 12);
}

TEST_F(TrainerFaultsTest, EmptyTrainingDataIsRefusedBeforeTheRunFolderExists) {
  const fs::path data = root_ / "data";
  fs::create_directories(data);
  std::ofstream(data / "train.src").close();
  std::ofstream(data / "train.trg").close();
  auto run_options = options("run");
  run_options.data_dir = data.string();
  try {
    train(config(4), run_options);
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), (data / "train.src").string() + ": no samples to train on");
  }
  EXPECT_FALSE(fs::exists(run_options.run_dir));
}

TEST_F(TrainerFaultsTest, ForceReplacesOnlyRunFoldersLengenWrote) {
  const fs::path theirs = root_ / "theirs";
  fs::create_directories(theirs);
  std::ofstream(theirs / "data.csv") << "1,2,3";
  auto force = options("theirs");
  force.force = true;
  EXPECT_THROW(train(config(4), force), UserError);
  EXPECT_TRUE(fs::exists(theirs / "data.csv"));
  const fs::path file = root_ / "file";
  std::ofstream(file) << "text";
  auto onto_file = options("file");
  onto_file.force = true;
  EXPECT_THROW(train(config(4), onto_file), UserError);
  EXPECT_TRUE(fs::is_regular_file(file));
  // A run.json of the user's (not a run record) does not make the folder a run: its checkpoint stays.
  fs::create_directories(theirs / "checkpoints");
  std::ofstream(theirs / "checkpoints" / "step_00000010.pt") << "mine";
  std::ofstream(theirs / "run.json") << R"({"experiment": "mine"})";
  EXPECT_THROW(train(config(4), force), UserError);
  std::ifstream kept(theirs / "checkpoints" / "step_00000010.pt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "mine");
  // A run folder lengen wrote is replaced.
  train(config(4), options("mine"));
  auto again = options("mine");
  again.force = true;
  EXPECT_EQ(train(config(6), again).steps_done, 6);
}

}  // namespace
}  // namespace lengen
