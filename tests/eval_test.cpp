// Evaluation: metric arithmetic, a trained copy model scored both ways, results.json merging and
// `lengen eval --data` on reference-format files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "lengen/checkpoint.h"
#include "lengen/config_io.h"
#include "lengen/data_streams.h"
#include "lengen/decoder.h"
#include "lengen/evaluation.h"
#include "lengen/rng.h"
#include "lengen/run_folder.h"
#include "lengen/sequence.h"
#include "lengen/task.h"
#include "lengen/task_files.h"
#include "lengen/trainer.h"
#include "lengen/training_data.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;

std::vector<int32_t> tokens(const Symbols& symbols, bool eos = true) {
  std::vector<int32_t> out;
  for (int32_t s : symbols) out.push_back(symbol_to_token(s));
  if (eos) out.push_back(kEos);
  return out;
}

TEST(EvalMetrics, ScoreGeneratedComparesPositionWiseOverTheTarget) {
  const std::vector<Sample> samples = {
      {{1, 2, 3}, {1, 2, 3}}, {{1, 2, 3}, {1, 2, 3}}, {{1, 2, 3}, {1, 2, 3}}, {{1, 2, 3}, {1, 2, 3}}};
  const std::vector<std::vector<int32_t>> generated = {
      tokens({1, 2, 3}),  // right
      tokens({1, 0, 3}),  // one wrong symbol: 3 of 4 tokens
      tokens({1, 2}),     // stops early: EOS where 3 should be, 2 of 4
      {symbol_to_token(1), symbol_to_token(2), symbol_to_token(3), symbol_to_token(3), kEos}};  // runs on
  const SequenceMetrics m = score_generated(generated, samples);
  EXPECT_EQ(m.samples, 4);
  EXPECT_EQ(m.exact, 1);
  EXPECT_EQ(m.tokens, 16);
  EXPECT_EQ(m.correct_tokens, 4 + 3 + 2 + 3);
  EXPECT_DOUBLE_EQ(m.exact_match(), 0.25);
  EXPECT_DOUBLE_EQ(m.token_accuracy(), 12.0 / 16.0);
}

TEST(EvalMetrics, CountMatchesOnlyScoresMaskedPositions) {
  auto target = torch::tensor({{5, 6, 7}, {5, 6, 7}}, torch::kLong);
  auto predictions = torch::tensor({{9, 6, 7}, {5, 6, 8}}, torch::kLong);
  auto mask = torch::tensor({{false, true, true}, {false, true, true}});
  const SequenceMetrics m = count_matches(predictions, target, mask);
  EXPECT_EQ(m.exact, 1);  // row 0 is wrong only outside the mask
  EXPECT_EQ(m.tokens, 4);
  EXPECT_EQ(m.correct_tokens, 3);
}

// A target of several answers (mqmtar: QSEP v1 v2 per query, then EOS) counts each answer right
// only when all its symbols are; teacher-forced and generated scoring count them alike.
TEST(EvalMetrics, AnswersCountWhenEverySymbolIsRight) {
  constexpr int32_t kMarker = 2;
  const std::vector<Sample> samples = {{{7}, {kMarker, 5, 6, kMarker, 8, 9}}, {{7}, {kMarker, 5, 6, kMarker, 8, 9}}};
  const std::vector<std::vector<int32_t>> generated = {
      tokens({kMarker, 5, 6, kMarker, 8, 9}),  // both answers right
      tokens({kMarker, 5, 6, kMarker, 8, 1})};  // the second answer's last symbol wrong
  const SequenceMetrics m = score_generated(generated, samples, kMarker);
  EXPECT_EQ(m.answers, 4);
  EXPECT_EQ(m.correct_answers, 3);
  EXPECT_DOUBLE_EQ(m.answer_accuracy(), 0.75);
  EXPECT_EQ(score_generated(generated, samples).answers, 0);  // a task without a marker

  // The same targets as a batch scored by argmax predictions: the first position (the source) is
  // outside the mask; the EOS closes the last answer and belongs to none.
  const int64_t m_token = symbol_to_token(kMarker);
  const auto t = [](int32_t symbol) { return static_cast<int64_t>(symbol_to_token(symbol)); };
  const int64_t eos = kEos;
  auto target = torch::tensor({{t(7), m_token, t(5), t(6), m_token, t(8), t(9), eos},
                               {t(7), m_token, t(5), t(6), m_token, t(8), t(9), eos}}, torch::kLong);
  auto predictions = target.clone();
  predictions[0][3] = t(1);  // row 0: first answer wrong
  predictions[1][7] = t(1);  // row 1: only the EOS wrong, both answers right
  auto mask = torch::ones({2, 8}, torch::kBool);
  mask.index_put_({torch::indexing::Slice(), 0}, false);
  const SequenceMetrics forced = count_matches(predictions, target, mask, kMarker);
  EXPECT_EQ(forced.answers, 4);
  EXPECT_EQ(forced.correct_answers, 3);
  EXPECT_EQ(forced.exact, 0);
}

TEST(EvalMetrics, DefaultLengthsAndGreedyCap) {
  Config config;
  config.task.len_max = 16;
  EXPECT_EQ(evaluation_lengths(config), (std::vector<int64_t>{16, 32, 64, 128}));
  config.eval.lengths = {20};
  EXPECT_EQ(evaluation_lengths(config), (std::vector<int64_t>{20}));
  config.eval.lengths = {32, 16, 32, 16, 8};  // each once, in the order given
  EXPECT_EQ(evaluation_lengths(config), (std::vector<int64_t>{32, 16, 8}));
  // Source + generated symbols <= ceil(2.2 * 10) = 22, so 12 symbols and the EOS.
  EXPECT_EQ(greedy_token_cap(10, 2.2), 13);
  EXPECT_EQ(greedy_token_cap(10, 0.5), 1);
}

TEST(EvalMetrics, TheResultsTableWritesMultiplesAsAReaderWould) {
  std::vector<LengthResult> results(3);
  results[0].length = 96;
  results[1].length = 4096;
  results[2].length = 65536;
  const std::string table = results_table(results, 64);
  EXPECT_NE(table.find(" 1.5x "), std::string::npos) << table;
  EXPECT_NE(table.find(" 64x "), std::string::npos) << table;
  EXPECT_NE(table.find(" 1024x "), std::string::npos) << table;
  EXPECT_EQ(table.find("e+"), std::string::npos) << table;
}

TEST(EvalMetrics, LongLengthsTakeTheirOwnSampleCountAsAPrefixOfTheSameSamples) {
  Config config = config_from_string(R"({
    "task": {"name": "copy", "params": {"vocab": 4}, "len_min": 2, "len_max": 6},
    "eval": {"lengths": [6, 12, 24], "samples": 10, "long_from": 12, "long_samples": 3}
  })",
                                     "long_samples");
  const auto task = make_task(config.task.name, config.task.params, config.task.seed);
  const auto sets = evaluation_sets(*task, config, "");
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_EQ(sets[0].samples.size(), 10u);
  EXPECT_EQ(sets[1].samples.size(), 3u);
  EXPECT_EQ(sets[2].samples.size(), 3u);
  EXPECT_EQ(sets[1].data.at("samples"), 3);
  // The long sets are the first samples of what eval.samples would give: results stay comparable.
  config.eval.long_from = 0;
  config.eval.long_samples = 0;
  const auto all = evaluation_sets(*task, config, "");
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(sets[1].samples[i].src, all[1].samples[i].src);
}

// Files written by the reference generator (tests/data/reference_tasks) evaluate as they are,
// with the parameters that wrote them: mqmtar's haystacks, n-back's leading "nothing", local
// count's sources of any length.
TEST(EvalMetrics, ReferenceFilesOfEveryTaskAreRead) {
  const std::map<std::string, std::string> params = {
      {"copy", R"({"vocab": 32})"},
      {"reverse", R"({"vocab": 32})"},
      {"sort", R"({"vocab": 32})"},
      {"parity", "{}"},
      {"flip_flop", "{}"},
      {"n_back", "{}"},
      {"local_count", R"({"max_reps": 8})"},
      {"mqmtar", R"({"alphabet": 16, "key_len": 2, "value_len": 2, "num_pairs": 64, "num_queries": 4})"}};
  for (const auto& [name, task_params] : params) {
    SCOPED_TRACE(name);
    const Config config = config_from_string(R"({"task": {"name": ")" + name + R"(", "params": )" +
                                                 task_params + R"(, "len_min": 32, "len_max": 64}})",
                                             name);
    const auto task = make_task(config.task.name, config.task.params, config.task.seed);
    const auto sets =
        evaluation_sets(*task, config, std::string(LENGEN_TEST_DATA_DIR) + "/reference_tasks/" + name);
    ASSERT_EQ(sets.size(), name == "mqmtar" ? 2u : 1u);
    EXPECT_EQ(sets[0].length, 64);
    EXPECT_EQ(sets[0].samples.size(), 200u);
    for (const Sample& sample : sets[0].samples) EXPECT_EQ(sample.framing, task->framing());
  }
}

// Labels predicted in place are read off one pass: greedy and teacher-forced evaluation agree,
// label for label, and score every label of the sequence.
TEST(EvalMetrics, LabelledTasksScoreEveryLabelInBothModes) {
  Config config = config_from_string(R"({
    "task": {"name": "n_back", "len_min": 8, "len_max": 16},
    "model": {"layers": 1, "d_model": 16, "heads": 2, "d_head": 8, "d_mlp": 32},
    "eval": {"lengths": [16], "samples": 6}
  })",
                                     "n_back");
  const auto task = make_task(config.task.name, config.task.params, config.task.seed);
  torch::manual_seed(0);
  Decoder model(config.model, vocab_size(task->num_symbols()));
  const auto samples = evaluation_sets(*task, config, "").front().samples;
  config.eval.decode = DecodeMode::kGreedy;
  const LengthResult greedy = evaluate_samples(model, samples, 16, config.eval);
  config.eval.decode = DecodeMode::kTeacherForced;
  const LengthResult forced = evaluate_samples(model, samples, 16, config.eval);
  EXPECT_EQ(greedy.metrics.tokens, 6 * 17) << "a label per source symbol (the leading 'nothing' too)";
  EXPECT_EQ(greedy.metrics.tokens, forced.metrics.tokens);
  EXPECT_EQ(greedy.metrics.correct_tokens, forced.metrics.correct_tokens);
  EXPECT_EQ(greedy.metrics.exact, forced.metrics.exact);
}

// One small copy model trained once for the tests below (a few seconds on a CPU).
class TrainedCopy : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::path(::testing::TempDir()) / ("lengen_eval_" + std::to_string(getpid())));
    fs::remove_all(*dir_);
    config_ = new Config(config_from_string(R"({
      "task": {"name": "copy", "params": {"vocab": 4}, "len_min": 2, "len_max": 6},
      "model": {"layers": 2, "d_model": 32, "heads": 2, "d_head": 16, "d_mlp": 64,
                "attention": {"normalizer": "entmax15", "scaling": "asentmax", "positions": "nape"}},
      "train": {"steps": 250, "batch_size": 32, "lr": 3e-3, "warmup": 25, "log_every": 250,
                "eval_every": 250, "checkpoint_every": 250, "val_samples": 32},
      "eval": {"lengths": [6, 8], "samples": 48, "batch_size": 16}
    })",
                                            "eval_test"));
    TrainOptions options;
    options.run_dir = run_dir();
    train(*config_, options);
    evaluate_run(*config_, run_dir(), "last");  // what `lengen train` does at the end
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete config_;
  }
  static std::string run_dir() { return (*dir_ / "run").string(); }

  static Decoder load_model() {
    auto task = make_task("copy", config_->task.params, config_->task.seed);
    Decoder model(config_->model, vocab_size(task->num_symbols()));
    load_checkpoint(resolve_checkpoint(run_dir(), "last"), model, nullptr);
    model->set_query_chunk(3);  // several chunks even at these lengths
    return model;
  }

  int run_cli(const std::string& args) {
    const std::string command = std::string(LENGEN_CLI_PATH) + " " + args + " > " +
                                (*dir_ / "out.txt").string() + " 2> " + (*dir_ / "err.txt").string();
    const int status = std::system(command.c_str());
    std::ifstream out(*dir_ / "out.txt"), err(*dir_ / "err.txt");
    out_ = std::string(std::istreambuf_iterator<char>(out), {});
    err_ = std::string(std::istreambuf_iterator<char>(err), {});
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  static fs::path* dir_;
  static Config* config_;
  std::string out_, err_;
};

fs::path* TrainedCopy::dir_ = nullptr;
Config* TrainedCopy::config_ = nullptr;

TEST_F(TrainedCopy, TeacherForcedExactMatchEqualsGreedy) {
  Decoder model = load_model();
  auto task = make_task("copy", config_->task.params, config_->task.seed);
  for (int64_t length : {6, 8}) {
    SCOPED_TRACE(length);
    const auto samples =
        fixed_samples(*task, length, 48, derive_seed(config_->task.seed, kEvalStream(length)));
    EvalConfig eval = config_->eval;
    const LengthResult forced = evaluate_samples(model, samples, length, eval);
    eval.decode = DecodeMode::kGreedy;
    const LengthResult greedy = evaluate_samples(model, samples, length, eval);
    EXPECT_EQ(forced.metrics.samples, 48);
    EXPECT_EQ(greedy.metrics.samples, 48);
    EXPECT_EQ(forced.metrics.exact, greedy.metrics.exact);
    EXPECT_DOUBLE_EQ(forced.loss, greedy.loss);
    if (length == 6) {
      EXPECT_GT(forced.metrics.exact_match(), 0.5) << "the copy model did not learn in-distribution";
    }
    ASSERT_EQ(forced.attention.size(), 2u);
    ASSERT_EQ(forced.attention[0].nonzero_per_query.size(), 2u);
    // A query sees at most its prefix: BOS src SEP trg has 2 * length + 2 tokens.
    EXPECT_GE(forced.mean_nonzero_per_query(), 1.0);
    EXPECT_LE(forced.mean_nonzero_per_query(), 2.0 * length + 2);
    EXPECT_GE(forced.mean_entropy(), 0.0);
  }
}

// A batch holds eval.batch_size sequences unless that many of the longest would pass
// eval.batch_tokens; then fewer, never none.
TEST(EvalMetrics, LongSequencesTakeFewerPerBatch) {
  EvalConfig eval;
  eval.batch_size = 32;
  eval.batch_tokens = 1000;
  const auto samples_of = [](size_t src, size_t trg) {
    return std::vector<Sample>{{Symbols(src, 1), Symbols(trg, 1)}, {Symbols(3, 1), Symbols(3, 1)}};
  };
  EXPECT_EQ(sequences_per_batch(eval, samples_of(10, 10)), 32);  // 32 x 20 tokens fit
  EXPECT_EQ(sequences_per_batch(eval, samples_of(90, 10)), 10);  // the longest (100 tokens) decides
  EXPECT_EQ(sequences_per_batch(eval, samples_of(5000, 5000)), 1);
  EXPECT_EQ(sequences_per_batch(eval, {}), 32);
}

// Batches bounded by tokens give the same results as whole batches: one sequence per batch here.
TEST_F(TrainedCopy, ATokenBoundedBatchGivesTheSameResults) {
  Decoder model = load_model();
  auto task = make_task("copy", config_->task.params, config_->task.seed);
  const int64_t length = 16;
  const auto samples = fixed_samples(*task, length, 24, derive_seed(config_->task.seed, kEvalStream(length)));
  EvalConfig eval = config_->eval;
  const LengthResult whole = evaluate_samples(model, samples, length, eval);
  eval.batch_tokens = 1;
  ASSERT_EQ(sequences_per_batch(eval, samples), 1);
  const LengthResult single = evaluate_samples(model, samples, length, eval);
  EXPECT_EQ(single.metrics.samples, whole.metrics.samples);
  EXPECT_EQ(single.metrics.exact, whole.metrics.exact);
  EXPECT_EQ(single.metrics.correct_tokens, whole.metrics.correct_tokens);
  EXPECT_NEAR(single.loss, whole.loss, 1e-5 * std::max(1.0, whole.loss));
  EXPECT_NEAR(single.mean_nonzero_per_query(), whole.mean_nonzero_per_query(), 1e-6);
}

// Greedy attention statistics count the queries of unfinished rows only: a row that emitted EOS
// keeps its place in the batch but adds no queries, so the statistics do not depend on the batch.
TEST_F(TrainedCopy, GreedyAttentionStatisticsDoNotDependOnTheBatch) {
  Decoder model = load_model();
  auto task = make_task("copy", config_->task.params, config_->task.seed);
  for (const int64_t length : {16, 48}) {  // past the training lengths rows end at different steps
    SCOPED_TRACE(length);
    const auto samples =
        fixed_samples(*task, length, 24, derive_seed(config_->task.seed, kEvalStream(length)));
    EvalConfig eval = config_->eval;
    eval.decode = DecodeMode::kGreedy;
    const LengthResult whole = evaluate_samples(model, samples, length, eval);
    eval.batch_tokens = 1;
    const LengthResult single = evaluate_samples(model, samples, length, eval);
    EXPECT_EQ(single.metrics.exact, whole.metrics.exact);
    EXPECT_NEAR(single.mean_nonzero_per_query(), whole.mean_nonzero_per_query(), 1e-6);
    EXPECT_NEAR(single.mean_entropy(), whole.mean_entropy(), 1e-6);
  }
}

// The trained model's decisions are the same from both attention kernels, at the training
// length and past it, teacher-forced and greedy.
TEST_F(TrainedCopy, FusedAndDenseKernelsDecideTheSameOnTheSameSamples) {
  Decoder model = load_model();
  auto task = make_task("copy", config_->task.params, config_->task.seed);
  for (int64_t length : {6, 16, 40}) {
    SCOPED_TRACE(length);
    const auto samples =
        fixed_samples(*task, length, 32, derive_seed(config_->task.seed, kEvalStream(length)));
    for (const DecodeMode decode : {DecodeMode::kTeacherForced, DecodeMode::kGreedy}) {
      SCOPED_TRACE(name_of(decode));
      EvalConfig eval = config_->eval;
      eval.decode = decode;
      model->set_attention_kernel(AttentionKernel::kDense);
      const LengthResult dense = evaluate_samples(model, samples, length, eval);
      model->set_attention_kernel(AttentionKernel::kFused);
      const LengthResult fused = evaluate_samples(model, samples, length, eval);
      EXPECT_EQ(fused.metrics.exact, dense.metrics.exact);
      EXPECT_EQ(fused.metrics.correct_tokens, dense.metrics.correct_tokens);
      EXPECT_NEAR(fused.loss, dense.loss, 1e-4 * std::max(1.0, dense.loss));
      EXPECT_NEAR(fused.mean_nonzero_per_query(), dense.mean_nonzero_per_query(), 1e-3);
      EXPECT_NEAR(fused.mean_entropy(), dense.mean_entropy(), 1e-4);
    }
  }
}

TEST_F(TrainedCopy, EvalMergesResultsAndReadsReferenceFiles) {
  // The end-of-training evaluation wrote teacher-forced results at 6 and 8.
  auto task = make_task("copy", config_->task.params, config_->task.seed);
  const fs::path data = *dir_ / "data";
  fs::create_directories(data);
  Rng rng(7);
  std::vector<Sample> samples;
  for (int i = 0; i < 5; ++i) samples.push_back(task->sample(rng, 7));
  write_samples(eval_split_stem(data.string(), 0, 7), samples);

  ASSERT_EQ(run_cli("eval " + run_dir() + " --data " + data.string() + " --decode greedy"), 0) << err_;
  EXPECT_NE(out_.find("greedy"), std::string::npos) << out_;
  ASSERT_EQ(run_cli("eval " + run_dir() + " --lengths 12 --samples 10 --checkpoint best"), 0) << err_;
  const auto results = read_json_file(RunFolder(run_dir()).results_path());
  EXPECT_EQ(results["task"], "copy");
  EXPECT_EQ(results["train_len_max"], 6);
  EXPECT_EQ(results["method"]["normalizer"], "entmax15");
  const auto& forced = results["results"]["teacher_forced"];
  EXPECT_TRUE(forced.contains("6"));  // from the end of training, kept
  EXPECT_TRUE(forced.contains("8"));
  EXPECT_EQ(forced["12"]["samples"], 10);
  EXPECT_EQ(forced["12"]["checkpoint"], "best.pt");
  // Results on --data files are kept apart from those on generated data.
  EXPECT_FALSE(results["results"].contains("greedy"));
  const auto& on_data = results["results_on_files"][fs::absolute(data).lexically_normal().string()];
  EXPECT_EQ(on_data["greedy"]["7"]["samples"], 5);
  EXPECT_EQ(on_data["greedy"]["7"]["attention"]["layers"].size(), 2u);

  EXPECT_EQ(run_cli("eval " + run_dir() + " --checkpoint " + (*dir_ / "missing.pt").string()), 2);
  EXPECT_NE(err_.find("missing.pt"), std::string::npos) << err_;
}

}  // namespace
}  // namespace lengen
