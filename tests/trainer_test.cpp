// Training end to end on tiny configs: the loss falls, the run folder is complete, a
// resumed run ends bitwise equal to an uninterrupted one, and bad situations are refused.
#include "lengen/trainer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "lengen/checkpoint.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/run_folder.h"
#include "lengen/sequence.h"

namespace fs = std::filesystem;

#include "temp_folder.h"
#include "tiny_copy_config.h"

namespace lengen {
namespace {

Config tiny_copy_config(const std::string& normalizer, const std::string& scaling) {
  Config config = testing::tiny_copy_config();
  config.model.attention.normalizer = normalizer;
  config.model.attention.scaling = scaling;
  config.model.attention.positions = "nape";
  config.train.steps = 200;
  config.train.warmup = 20;
  config.train.log_every = 20;
  config.train.eval_every = 100;
  config.train.checkpoint_every = 50;
  config.train.val_samples = 32;
  return config;
}

class TrainerTest : public testing::TempFolderTest {
 protected:
  TrainerTest() : TempFolderTest("lengen_trainer") {}

  TrainOptions options(const std::string& name) {
    TrainOptions result;
    result.run_dir = (root_ / name).string();
    return result;
  }
};

std::vector<nlohmann::json> read_log(const std::string& path) {
  std::vector<nlohmann::json> records;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) records.push_back(nlohmann::json::parse(line));
  return records;
}

TEST_F(TrainerTest, SoftmaxRunLearnsAndWritesARunFolder) {
  auto config = tiny_copy_config("softmax", "none");
  auto result = train(config, options("softmax"));
  EXPECT_EQ(result.steps_done, 200);
  EXPECT_LT(result.final_loss, result.first_loss / 4) << result.first_loss << " -> " << result.final_loss;

  RunFolder run(options("softmax").run_dir);
  EXPECT_EQ(config_to_json(config), read_json_file(run.config_path()));
  auto log = read_log(run.log_path());
  ASSERT_FALSE(log.empty());
  bool saw_validation = false;
  for (const auto& record : log) {
    if (record.contains("val_exact_match")) saw_validation = true;
    if (record.contains("loss")) {
      for (const char* key : {"lr", "grad_norm", "tokens_per_s"}) EXPECT_TRUE(record.contains(key)) << key;
    }
  }
  EXPECT_TRUE(saw_validation);
  // keep_checkpoints (2) step checkpoints remain, the last one at the final step.
  auto checkpoints = run.checkpoints();
  ASSERT_EQ(checkpoints.size(), 2u);
  EXPECT_EQ(checkpoints.back(), run.checkpoint_path(200));
  Decoder model(config.model, vocab_size(8));
  EXPECT_EQ(load_checkpoint(checkpoints.back(), model, nullptr).step, 200);
  EXPECT_TRUE(fs::exists(run.best_checkpoint_path()));
}

TEST_F(TrainerTest, AsentmaxNapeRunLearns) {
  auto config = tiny_copy_config("entmax15", "asentmax");
  auto result = train(config, options("asentmax"));
  EXPECT_LT(result.final_loss, result.first_loss / 4) << result.first_loss << " -> " << result.final_loss;
}

// train.dtype "bfloat16" runs the forward's matrix products in bf16 (autocast): the run learns,
// takes a different path from the float32 run, and keeps float32 weights.
TEST_F(TrainerTest, Bfloat16RunLearnsWithFloat32Weights) {
  auto config = tiny_copy_config("entmax15", "asentmax");
  config.train.steps = 100;
  const auto fp32 = train(config, options("fp32"));
  config.train.dtype = TrainDtype::kBfloat16;
  const auto bf16 = train(config, options("bf16"));
  EXPECT_LT(bf16.final_loss, bf16.first_loss / 2) << bf16.first_loss << " -> " << bf16.final_loss;
  EXPECT_NE(bf16.final_loss, fp32.final_loss);
  Decoder model(config.model, vocab_size(8));
  load_checkpoint(RunFolder(options("bf16").run_dir).checkpoints().back(), model, nullptr);
  for (const auto& parameter : model->parameters()) EXPECT_EQ(parameter.scalar_type(), torch::kFloat);
}

TEST_F(TrainerTest, ResumedRunEndsBitwiseEqualToAnUninterruptedOne) {
  auto config = tiny_copy_config("entmax15", "asentmax");
  config.train.steps = 60;
  config.train.checkpoint_every = 25;
  config.train.keep_checkpoints = 10;
  train(config, options("whole"));

  // A run "killed" after its checkpoint at step 25 (and some logged steps past it) ...
  auto interrupted = options("interrupted");
  interrupted.loss_hook = [](int64_t step, torch::Tensor&) {
    if (step == 40) throw std::runtime_error("killed");
  };
  EXPECT_THROW(train(config, interrupted), std::runtime_error);
  // ... resumed from its latest checkpoint.
  auto resumed = options("interrupted");
  resumed.resume = true;
  train(config, resumed);

  Decoder whole(config.model, vocab_size(8)), again(config.model, vocab_size(8));
  load_checkpoint(RunFolder(options("whole").run_dir).latest_checkpoint(), whole, nullptr);
  load_checkpoint(RunFolder(resumed.run_dir).latest_checkpoint(), again, nullptr);
  auto a = whole->named_parameters(), b = again->named_parameters();
  for (const auto& item : a) EXPECT_TRUE(torch::equal(item.value(), b[item.key()])) << item.key();
  // The log tells one history: every step logged once.
  std::vector<int64_t> steps;
  for (const auto& record : read_log(RunFolder(resumed.run_dir).log_path())) {
    if (record.contains("loss")) steps.push_back(record["step"].get<int64_t>());
  }
  EXPECT_EQ(steps, (std::vector<int64_t>{20, 40, 60}));
}

TEST_F(TrainerTest, RefusesToOverwriteARunFolder) {
  auto config = tiny_copy_config("softmax", "none");
  config.train.steps = 5;
  train(config, options("run"));
  const auto config_before = read_json_file(RunFolder(options("run").run_dir).config_path());
  config.train.lr = 1e-2;
  try {
    train(config, options("run"));
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("--resume"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_json_file(RunFolder(options("run").run_dir).config_path()), config_before);
  // Resuming with a different model is refused too, naming the key.
  auto resume = options("run");
  resume.resume = true;
  try {
    train(config, resume);
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("train.lr"), std::string::npos) << e.what();
  }
  auto force = options("run");
  force.force = true;
  EXPECT_NO_THROW(train(config, force));
}

TEST_F(TrainerTest, NonFiniteLossStopsTheRunAndKeepsTheLastCheckpoint) {
  auto config = tiny_copy_config("softmax", "none");
  config.train.steps = 30;
  config.train.checkpoint_every = 10;
  auto faulty = options("nan");
  faulty.loss_hook = [](int64_t step, torch::Tensor& loss) {
    if (step == 15) loss = loss * std::numeric_limits<float>::quiet_NaN();
  };
  try {
    train(config, faulty);
    FAIL() << "expected TrainingDiverged";
  } catch (const TrainingDiverged& e) {
    // Hook index 15 is the sixteenth step: "step 16", as the log counts.
    EXPECT_NE(std::string(e.what()).find("non-finite loss at step 16"), std::string::npos) << e.what();
  }
  RunFolder run(faulty.run_dir);
  ASSERT_EQ(run.latest_checkpoint(), run.checkpoint_path(10));
  Decoder model(config.model, vocab_size(8));
  EXPECT_EQ(load_checkpoint(run.latest_checkpoint(), model, nullptr).step, 10);
  for (const auto& p : model->parameters()) EXPECT_TRUE(torch::isfinite(p).all().item<bool>());
}

}  // namespace
}  // namespace lengen
