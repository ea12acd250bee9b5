// Checkpoint files: progress reads back exactly, a checkpoint of another model or a damaged
// file is refused with a clear message, a failed write leaves nothing behind, and the weights
// hash identifies the weights.
#include "lengen/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <torch/torch.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "lengen/errors.h"
#include "lengen/sequence.h"
#include "temp_folder.h"
#include "tiny_copy_config.h"
#include "user_error_message.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;

class CheckpointTest : public testing::TempFolderTest {
 protected:
  CheckpointTest() : TempFolderTest("lengen_checkpoint") {}

  std::string path(const std::string& name) const { return (root_ / name).string(); }

  static Decoder model_of(const Config& config) {
    torch::manual_seed(1);
    return Decoder(config.model, vocab_size(8));
  }
};

using testing::user_error_message;

TEST_F(CheckpointTest, ProgressReadsBackExactly) {
  const Config config = testing::tiny_copy_config();
  Decoder model = model_of(config);
  TrainingProgress progress;
  progress.step = 7;
  progress.best_validation = 0.03125;
  progress.best_step = 5;
  progress.window_loss = 1.25;
  progress.window_steps = 3;
  progress.window_tokens = 96;
  save_checkpoint(path("a.pt"), model, nullptr, progress);
  Decoder other = model_of(config);
  const TrainingProgress back = load_checkpoint(path("a.pt"), other, nullptr);
  EXPECT_EQ(back.step, 7);
  EXPECT_EQ(back.best_validation, 0.03125);
  EXPECT_EQ(back.best_step, 5);
  EXPECT_EQ(back.window_loss, 1.25);
  EXPECT_EQ(back.window_steps, 3);
  EXPECT_EQ(back.window_tokens, 96);
  EXPECT_EQ(weights_hash(other), weights_hash(model));
}

// A checkpoint stores its model section, so another model (or a config.json edited after
// training) is named by the config key that differs, which the user can look up; the tensors are
// compared too, for what the section does not hold (the task's vocabulary).
TEST_F(CheckpointTest, AnotherModelsCheckpointNamesTheFirstMismatchedKeyThenParameter) {
  Config config = testing::tiny_copy_config();
  Decoder model = model_of(config);
  save_checkpoint(path("small.pt"), model, nullptr, {});
  Config wider = config;
  wider.model.d_model = 48;
  Decoder wide = model_of(wider);
  const std::string message = user_error_message([&] { load_checkpoint(path("small.pt"), wide, nullptr); });
  EXPECT_NE(message.find("does not fit this model: it was trained with model.d_model=" +
                         std::to_string(config.model.d_model) + ", this run has 48"),
            std::string::npos)
      << message;
  // Another vocabulary is caught the same way (it used to fail later, inside the embedding).
  Decoder other_vocab(config.model, vocab_size(20));
  const std::string vocab_message =
      user_error_message([&] { load_checkpoint(path("small.pt"), other_vocab, nullptr); });
  EXPECT_NE(vocab_message.find("does not fit this model: parameter "), std::string::npos) << vocab_message;
}

// A checkpoint of another method that holds every parameter of this model and more (ASEntmax's
// scaling projections read into a softmax model) is refused by name, never loaded as if it were
// this model's (it would be scored and labelled as softmax): named by the config key that differs
// (a checkpoint without its model section: by the parameter this model does not have).
TEST_F(CheckpointTest, ACheckpointWithParametersThisModelLacksIsRefused) {
  Config config = testing::tiny_copy_config();
  config.model.attention.normalizer = "entmax15";
  config.model.attention.scaling = "asentmax";
  Decoder asentmax = model_of(config);
  save_checkpoint(path("asentmax.pt"), asentmax, nullptr, {});
  Config softmax_config = testing::tiny_copy_config();
  softmax_config.model.attention.normalizer = "softmax";
  softmax_config.model.attention.scaling = "none";
  Decoder softmax = model_of(softmax_config);
  const std::string message =
      user_error_message([&] { load_checkpoint(path("asentmax.pt"), softmax, nullptr); });
  EXPECT_NE(
      message.find("does not fit this model: it was trained with model.attention.normalizer=\"entmax15\", "
                   "this run has \"softmax\""),
      std::string::npos)
      << message;
}

// How the model was initialised is part of the run: a config.json whose init_std was edited after
// training would label (and group) the results as another initialisation's.
TEST_F(CheckpointTest, ACheckpointOfAnotherInitialisationIsRefused) {
  Config config = testing::tiny_copy_config();
  Decoder trained = model_of(config);
  save_checkpoint(path("trained.pt"), trained, nullptr, {});
  config.model.init_std = 0.07;
  Decoder edited = model_of(config);
  const std::string message =
      user_error_message([&] { load_checkpoint(path("trained.pt"), edited, nullptr); });
  EXPECT_NE(message.find("it was trained with model.init_std=0.02, this run has 0.07"), std::string::npos)
      << message;
  // The evaluation's chunk size is free to change.
  config = testing::tiny_copy_config();
  config.model.prefill_chunk = 3;
  Decoder chunked = model_of(config);
  EXPECT_NO_THROW(load_checkpoint(path("trained.pt"), chunked, nullptr));
}

TEST_F(CheckpointTest, DamagedFilesAreUnreadableNotOfAnotherModel) {
  const Config config = testing::tiny_copy_config();
  Decoder model = model_of(config);
  save_checkpoint(path("good.pt"), model, nullptr, {});
  std::ifstream in(path("good.pt"), std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  std::ofstream(path("truncated.pt"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::ofstream(path("random.pt"), std::ios::binary) << std::string(4096, '\x5a');
  for (const char* name : {"truncated.pt", "random.pt"}) {
    SCOPED_TRACE(name);
    try {
      load_checkpoint(path(name), model, nullptr);
      FAIL() << "expected CheckpointUnreadable";
    } catch (const CheckpointUnreadable& e) {
      EXPECT_NE(std::string(e.what()).find("is unreadable or truncated"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

TEST_F(CheckpointTest, NonFiniteWeightsAreNeverWritten) {
  const Config config = testing::tiny_copy_config();
  Decoder model = model_of(config);
  {
    torch::NoGradGuard no_grad;
    model->parameters().front().view(-1)[0] = std::numeric_limits<float>::infinity();
  }
  EXPECT_FALSE(weights_are_finite(model));
  EXPECT_NE(
      user_error_message([&] { save_checkpoint(path("inf.pt"), model, nullptr, {}); }).find("not finite"),
      std::string::npos);
  EXPECT_FALSE(fs::exists(path("inf.pt")));
}

// A disk that fills up mid-write: the file size limit makes the write fail the same way
// (EFBIG instead of ENOSPC) without privileges.
TEST_F(CheckpointTest, AFailedWriteIsOneClearErrorAndLeavesNoTempFile) {
  const Config config = testing::tiny_copy_config();
  Decoder model = model_of(config);
  save_checkpoint(path("step.pt"), model, nullptr, {});
  const auto size_before = fs::file_size(path("step.pt"));
  auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit previous{};
  getrlimit(RLIMIT_FSIZE, &previous);
  rlimit limited = previous;
  limited.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  const std::string message = user_error_message([&] {
    TrainingProgress progress;
    progress.step = 9;
    save_checkpoint(path("step.pt"), model, nullptr, progress);
  });
  setrlimit(RLIMIT_FSIZE, &previous);
  std::signal(SIGXFSZ, previous_handler);
  EXPECT_EQ(message, "cannot write " + path("step.pt") + ": " + std::strerror(EFBIG));
  for (const auto& entry : fs::directory_iterator(fs::path(path("step.pt")).parent_path()))
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
  // The checkpoint that was there is untouched.
  EXPECT_EQ(fs::file_size(path("step.pt")), size_before);
  EXPECT_EQ(load_checkpoint(path("step.pt"), model, nullptr).step, 0);
}

}  // namespace
}  // namespace lengen
