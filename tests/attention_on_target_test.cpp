// Attention on the target and attention maps: the recorded weights against a dense computation
// of the full attention matrices on a small model, the heatmap data files against the weights of
// the sample asked for, pooling, the report's section and `lengen attention`'s errors.
#include "lengen/attention_on_target.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_runner.h"
#include "lengen/atomic_write.h"
#include "lengen/attention_capture.h"
#include "lengen/attention_maps.h"
#include "lengen/checkpoint.h"
#include "lengen/config_io.h"
#include "lengen/data_streams.h"
#include "lengen/evaluation.h"
#include "lengen/json_file.h"
#include "lengen/report.h"
#include "lengen/run_folder.h"
#include "lengen/sequence.h"
#include "lengen/trainer.h"
#include "lengen/training_data.h"
#include "trained_run.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;

// The first `max_samples` of `samples` measured with `model` as it is, one forward pass each, as
// the evaluation measures them.
AttentionOnTarget measure_attention_on_target(Decoder& model, const Task& task,
                                              const std::vector<Sample>& samples, int64_t max_samples) {
  torch::NoGradGuard no_grad;
  model->eval();
  AttentionOnTargetMeter meter(task, model->config(), max_samples);  // it stops at max_samples
  for (size_t s = 0; s < samples.size() && meter.wants_more(); ++s) {
    meter.measure(model, {samples[s]}, [&] { forward_sample(model, samples[s]); });
  }
  return meter.result();
}

Config small_config(const std::string& task, const std::string& normalizer, const std::string& scaling) {
  const std::string params = task == "parity" ? "{}" : R"({"vocab": 5})";
  return config_from_string(R"({
      "task": {"name": ")" + task +
                                R"(", "params": )" + params + R"(, "len_min": 2, "len_max": 6},
      "model": {"layers": 2, "d_model": 32, "heads": 2, "d_head": 16, "d_mlp": 64,
                "attention": {"normalizer": ")" +
                                normalizer + R"(", "scaling": ")" + scaling + R"(",
                              "positions": "nape"}},
      "train": {"steps": 2, "batch_size": 4, "warmup": 1, "log_every": 1, "eval_every": 2,
                "checkpoint_every": 2, "val_samples": 4},
      "eval": {"lengths": [6, 9], "samples": 5, "batch_size": 4}
    })",
                            "attention_test");
}

// Every layer's full weights [H, T, T] for one sequence, all queries in one chunk: the dense
// reference the chunked, target-rows-only measurement must agree with.
std::vector<torch::Tensor> full_attention(Decoder& model, const Sample& sample) {
  torch::NoGradGuard no_grad;
  model->eval();
  model->set_query_chunk(0);
  std::vector<torch::Tensor> maps(static_cast<size_t>(model->config().layers));
  for (size_t layer = 0; layer < maps.size(); ++layer) {
    model->block(layer)->attention()->set_weight_observer(
        [&maps, layer](const torch::Tensor& weights, const torch::Tensor&, const torch::Tensor&) {
          maps[layer] = weights[0].to(torch::kDouble).clone();
        });
  }
  const auto input = encode(sample).input;
  model->forward(torch::tensor(input, torch::kInt).to(torch::kLong).unsqueeze(0));
  for (size_t layer = 0; layer < maps.size(); ++layer)
    model->block(layer)->attention()->set_weight_observer(nullptr);
  return maps;
}

TEST(AttentionOnTargetReport, NamesRunsWithoutAKnownTargetInsteadOfScoringThem) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("lengen_target_report_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const auto run_with = [](const std::string& task, const TargetAttention& target) {
    ResultsFile results;
    results.task = task;
    results.train_len_max = 16;
    results.method = {"softmax", "none", "nape"};
    results.trained_with = {{"task", {{"name", task}}}, {"train", nlohmann::json::object()}};
    ResultEntry& entry = results.results["teacher_forced"][16];
    entry.length = 16;
    entry.decode = "teacher_forced";
    entry.exact_match = 1.0;
    entry.attention_on_target = target;
    return results;
  };
  TargetAttention copy;
  copy.known = true;
  copy.samples = 8;
  copy.queries = 128;
  copy.layers = {{{0.25, 0.75}, 1, 0.75, 0.5}};
  TargetAttention parity;
  parity.note = "parity names no key";
  fs::create_directories(dir / "copy_run");
  fs::create_directories(dir / "parity_run");
  write_results_file((dir / "copy_run" / "results.json").string(), run_with("copy", copy));
  write_results_file((dir / "parity_run" / "results.json").string(), run_with("parity", parity));
  ReportOptions options;
  options.gnuplot = "";
  const std::string report = write_report(dir.string(), options);
  EXPECT_NE(report.find("8 evaluation sample(s) per length"), std::string::npos) << report;
  EXPECT_NE(report.find("| 0.75 ± 0.00 (n=1) |"), std::string::npos) << report;
  EXPECT_NE(report.find("| 0.50 ± 0.00 (n=1) |"), std::string::npos) << report;
  EXPECT_NE(
      report.find("No known target (no evaluated target symbol has a key that answers it): parity_run."),
      std::string::npos)
      << report;
  fs::remove_all(dir);
}

class AttentionOnTargetMeasure : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(AttentionOnTargetMeasure, EqualsTheDenseWeightsOnTheAnsweringKeys) {
  const auto& [task_name, normalizer] = GetParam();
  const Config config = small_config(task_name, normalizer, normalizer == "softmax" ? "none" : "asentmax");
  auto task = make_task(config.task.name, config.task.params, config.task.seed);
  torch::manual_seed(3);
  Decoder model(config.model, vocab_size(task->num_symbols()));
  const auto samples = fixed_samples(*task, 9, 4, 17);

  // By hand, per sample: for each target symbol j, the weight of the row that predicts it on
  // its answers, summed over the sample's symbols, per layer and head.
  std::vector<torch::Tensor> sums;
  std::vector<int64_t> queries;
  for (const Sample& sample : samples) {
    const auto maps = full_attention(model, sample);
    const auto sources = *task->answer_sources(sample);
    auto sum = torch::zeros({2, 2}, torch::kDouble);
    for (size_t j = 0; j < sample.trg.size(); ++j) {
      const int64_t row = static_cast<int64_t>(sample.src.size()) + 1 + static_cast<int64_t>(j);
      for (int64_t layer = 0; layer < 2; ++layer) {
        for (int64_t head = 0; head < 2; ++head) {
          for (int64_t i : sources[j]) sum[layer][head] += maps[layer][head][row][i + 1];
        }
      }
    }
    sums.push_back(sum);
    queries.push_back(static_cast<int64_t>(sample.trg.size()));
  }
  model->set_query_chunk(3);  // several chunks, so a sample's rows arrive in pieces
  for (int64_t bound : {3, 10}) {
    SCOPED_TRACE(bound);
    const AttentionOnTarget measured = measure_attention_on_target(model, *task, samples, bound);
    const int64_t used = std::min<int64_t>(bound, 4);
    ASSERT_TRUE(measured.known);
    EXPECT_EQ(measured.samples, used);
    auto sum = torch::zeros({2, 2}, torch::kDouble);
    int64_t count = 0;
    for (int64_t s = 0; s < used; ++s) {
      sum += sums[static_cast<size_t>(s)];
      count += queries[static_cast<size_t>(s)];
    }
    EXPECT_EQ(measured.queries, count);
    ASSERT_EQ(measured.heads.size(), 2u);
    for (int64_t layer = 0; layer < 2; ++layer) {
      ASSERT_EQ(measured.heads[static_cast<size_t>(layer)].size(), 2u);
      for (int64_t head = 0; head < 2; ++head) {
        EXPECT_NEAR(measured.heads[static_cast<size_t>(layer)][static_cast<size_t>(head)],
                    sum[layer][head].item<double>() / static_cast<double>(count), 1e-6)
            << "layer " << layer << " head " << head;
      }
    }
  }
  const AttentionOnTarget all = measure_attention_on_target(model, *task, samples, 10);
  const auto json = to_json(target_attention(all, task_name));
  EXPECT_EQ(json["known"], true);
  EXPECT_EQ(json["samples"], 4);
  const auto& layer1 = json["layers"][1];
  const double best = std::max(all.heads[1][0], all.heads[1][1]);
  EXPECT_DOUBLE_EQ(layer1["best"].get<double>(), best);
  EXPECT_EQ(layer1["best_head"], all.heads[1][0] >= all.heads[1][1] ? 0 : 1);
  EXPECT_DOUBLE_EQ(layer1["mean"].get<double>(), (all.heads[1][0] + all.heads[1][1]) / 2);
}

// The evaluation records the attention on the target in its own batched forward pass: the same
// values as one pass per sample, over batches of sequences of two lengths (padding after the
// shorter) and a bound that ends inside a batch, under either kernel; and the evaluation's
// results are those of a pass without the recording.
TEST(AttentionOnTargetInEvaluation, EqualsOnePassPerSampleAndLeavesTheResultsAsTheyAre) {
  const Config config = small_config("copy", "entmax15", "asentmax");
  auto task = make_task(config.task.name, config.task.params, config.task.seed);
  torch::manual_seed(5);
  Decoder model(config.model, vocab_size(task->num_symbols()));
  std::vector<Sample> samples = fixed_samples(*task, 6, 3, 5);
  for (const Sample& sample : fixed_samples(*task, 9, 3, 17)) samples.push_back(sample);
  EvalConfig eval = config.eval;
  eval.batch_size = 4;
  model->set_query_chunk(3);
  for (AttentionKernel kernel : {AttentionKernel::kFused, AttentionKernel::kDense}) {
    SCOPED_TRACE(kernel == AttentionKernel::kFused ? "fused" : "dense");
    model->set_attention_kernel(kernel);
    const AttentionOnTarget alone = measure_attention_on_target(model, *task, samples, 5);
    AttentionOnTargetMeter meter(*task, config.model, 5);
    const LengthResult recorded = evaluate_samples(model, samples, 9, eval, {}, &meter);
    const LengthResult plain = evaluate_samples(model, samples, 9, eval);
    const AttentionOnTarget batched = meter.result();
    ASSERT_TRUE(alone.known);
    ASSERT_TRUE(batched.known);
    EXPECT_EQ(batched.samples, 5);
    EXPECT_EQ(batched.queries, alone.queries);
    ASSERT_EQ(batched.heads.size(), alone.heads.size());
    for (size_t layer = 0; layer < alone.heads.size(); ++layer) {
      for (size_t head = 0; head < alone.heads[layer].size(); ++head) {
        EXPECT_NEAR(batched.heads[layer][head], alone.heads[layer][head], 1e-6) << layer << " " << head;
      }
    }
    EXPECT_EQ(recorded.metrics.exact, plain.metrics.exact);
    EXPECT_EQ(recorded.metrics.correct_tokens, plain.metrics.correct_tokens);
    EXPECT_EQ(recorded.loss, plain.loss);
    EXPECT_EQ(recorded.mean_nonzero_per_query(), plain.mean_nonzero_per_query());
    EXPECT_EQ(recorded.mean_entropy(), plain.mean_entropy());
  }
}

INSTANTIATE_TEST_SUITE_P(, AttentionOnTargetMeasure,
                         ::testing::Values(std::make_tuple("copy", "softmax"),
                                           std::make_tuple("copy", "entmax15"),
                                           std::make_tuple("sort", "entmax15"),
                                           std::make_tuple("reverse", "softmax")));

// Reference samples whose target symbols all lack an answering key (symbols the source does not
// hold) leave nothing to average: not known, with a note, rather than a measured 0.
TEST(AttentionOnTargetUnknown, SamplesWithoutAnAnsweredSymbolAreNotScored) {
  const Config config = small_config("sort", "softmax", "none");
  auto task = make_task("sort", config.task.params, config.task.seed);
  Decoder model(config.model, vocab_size(task->num_symbols()));
  const std::vector<Sample> unanswered = {{{0, 1, 1}, {2, 3, 4}}, {{1, 0}, {4, 4}}};
  const AttentionOnTarget measured = measure_attention_on_target(model, *task, unanswered, 2);
  EXPECT_FALSE(measured.known);
  EXPECT_EQ(measured.samples, 2);
  EXPECT_EQ(measured.queries, 0);
  const auto json = to_json(target_attention(measured, "sort"));
  EXPECT_EQ(json["known"], false);
  EXPECT_FALSE(json.contains("layers"));
  EXPECT_NE(json["note"].get<std::string>().find("no target symbol of the 2 measured sample(s)"),
            std::string::npos)
      << json.dump();
}

TEST(AttentionOnTargetUnknown, ATaskWithoutAnAnswerIsNotScored) {
  const Config config = small_config("parity", "softmax", "none");
  auto task = make_task("parity", {}, config.task.seed);
  Decoder model(config.model, vocab_size(task->num_symbols()));
  const AttentionOnTarget measured =
      measure_attention_on_target(model, *task, fixed_samples(*task, 6, 2, 1), 2);
  EXPECT_FALSE(measured.known);
  const auto json = to_json(target_attention(measured, "parity"));
  EXPECT_EQ(json["known"], false);
  EXPECT_FALSE(json.contains("layers"));
  EXPECT_NE(json["note"].get<std::string>().find("parity"), std::string::npos);
}

TEST(AttentionMapPooling, KeepsEachBlocksLargestWeightAndItsZeros) {
  auto map = torch::zeros({5, 7});
  map[0][0] = 0.5;
  map[1][1] = 0.25;   // same 2 x 3 block as (0, 0): the block keeps 0.5
  map[4][6] = 0.125;  // the partial block at the corner
  const PooledMap pooled = max_pool_map(map, 4);
  EXPECT_EQ(pooled.row_block, 2);
  EXPECT_EQ(pooled.column_block, 2);
  ASSERT_EQ(pooled.weights.sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_FLOAT_EQ(pooled.weights[0][0].item<float>(), 0.5F);
  EXPECT_FLOAT_EQ(pooled.weights[2][3].item<float>(), 0.125F);
  EXPECT_EQ((pooled.weights > 0).sum().item<int64_t>(), 2);
  const PooledMap same = max_pool_map(map, 8);
  EXPECT_TRUE(torch::equal(same.weights, map));
}

// A run folder holding a barely trained model: maps are about which weights are written, not
// about what the model learnt.
class AttentionMaps : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    trained_ = new testing::TrainedRun("lengen_attention", small_config("copy", "entmax15", "asentmax"));
    dir_ = trained_->scratch();
    config_ = trained_->config();
  }
  static void TearDownTestSuite() { delete trained_; }
  static std::string run_dir() { return trained_->run_dir(); }

  // The numbers of a heatmap data file, row by row (comment lines skipped).
  static std::vector<std::vector<double>> read_matrix(const fs::path& path) {
    std::ifstream in(path);
    std::vector<std::vector<double>> rows;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream cells(line);
      rows.emplace_back();
      for (double value; cells >> value;) rows.back().push_back(value);
    }
    return rows;
  }

  int run_cli(const std::string& args) {
    const std::string command = std::string(LENGEN_CLI_PATH) + " " + args + " > " +
                                (*dir_ / "out.txt").string() + " 2> " + (*dir_ / "err.txt").string();
    const int status = std::system(command.c_str());
    std::ifstream err(*dir_ / "err.txt");
    err_ = std::string(std::istreambuf_iterator<char>(err), {});
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  static testing::TrainedRun* trained_;
  static fs::path* dir_;  // the run's scratch folder
  static Config* config_;
  std::string err_;
};

testing::TrainedRun* AttentionMaps::trained_ = nullptr;
fs::path* AttentionMaps::dir_ = nullptr;
Config* AttentionMaps::config_ = nullptr;

TEST_F(AttentionMaps, DataFilesHoldTheWeightsOfTheSampleAskedFor) {
  AttentionMapOptions options;
  options.length = 9;
  options.sample = 2;
  options.heads = {1};
  options.out_dir = (*dir_ / "maps").string();
  options.gnuplot = "";
  const std::string page = write_attention_maps({run_dir()}, options);

  auto task = make_task("copy", config_->task.params, config_->task.seed);
  Decoder model(config_->model, vocab_size(task->num_symbols()));
  load_checkpoint(resolve_checkpoint(run_dir(), "last"), model, nullptr);
  const auto samples = fixed_samples(*task, 9, 3, derive_seed(config_->task.seed, kEvalStream(9)));
  // Rows 10..18 of the dense maps: the queries that predict the 9 target symbols.
  const auto expected = full_attention(model, samples[2]);
  const auto other = full_attention(model, samples[1]);
  for (int64_t layer : {0, 1}) {
    SCOPED_TRACE(layer);
    EXPECT_FALSE(fs::exists(*dir_ / "maps" / "run" / ("layer" + std::to_string(layer) + "_head0.dat")));
    const auto rows = read_matrix(*dir_ / "maps" / "run" / ("layer" + std::to_string(layer) + "_head1.dat"));
    const auto weights = expected[static_cast<size_t>(layer)][1].narrow(0, 10, 9);
    const auto other_weights = other[static_cast<size_t>(layer)][1].narrow(0, 10, 9);
    ASSERT_EQ(static_cast<int64_t>(rows.size()), weights.size(0));  // 9 target symbols
    double differs_from_other = 0.0;
    for (int64_t r = 0; r < weights.size(0); ++r) {
      ASSERT_EQ(static_cast<int64_t>(rows[r].size()), weights.size(1));  // BOS, 9, SEP, 9
      for (int64_t c = 0; c < weights.size(1); ++c) {
        EXPECT_NEAR(rows[r][c], weights[r][c].item<double>(), 1e-6) << r << ", " << c;
        differs_from_other += std::abs(rows[r][c] - other_weights[r][c].item<double>());
        // A query never sees its future: row r predicts target r from position 10 + r.
        if (c > 10 + r) {
          EXPECT_EQ(rows[r][c], 0.0);
        }
      }
    }
    EXPECT_GT(differs_from_other, 1e-3) << "sample 1's map would pass too";
  }
  EXPECT_NE(page.find("sample 2 of length 9"), std::string::npos) << page;
  EXPECT_NE(page.find("run/layer1_head1.png"), std::string::npos) << page;
  // A map pasted into a slide names its task and sample.
  EXPECT_NE(testing::text_of(*dir_ / "maps" / "run" / "layer1_head1.gp")
                .find("title \"Attention maps of copy: sample 2 of length 9\""),
            std::string::npos);
  EXPECT_EQ(page.find("max-pooled"), std::string::npos) << page;
  EXPECT_NE(page.find("gnuplot"), std::string::npos) << "the page says the maps were not drawn";
}

TEST_F(AttentionMaps, LongMapsArePooledAndThePageSaysSo) {
  AttentionMapOptions options;
  options.length = 9;
  options.layers = {1};
  options.max_cells = 8;
  options.out_dir = (*dir_ / "pooled").string();
  options.gnuplot = "";
  const std::string page = write_attention_maps({run_dir(), run_dir()}, options);
  EXPECT_NE(page.find("max-pooled"), std::string::npos) << page;
  // Two runs of one folder name: the page says which folder each column is.
  EXPECT_NE(page.find("`run_2` is " + fs::absolute(run_dir()).lexically_normal().string()), std::string::npos)
      << page;
  const auto rows = read_matrix(*dir_ / "pooled" / "run" / "layer1_head0.dat");
  EXPECT_EQ(rows.size(), 5u);     // 9 rows in blocks of 2
  EXPECT_EQ(rows[0].size(), 7u);  // 20 positions in blocks of 3
  EXPECT_TRUE(fs::exists(*dir_ / "pooled" / "run_2" / "layer1_head0.dat"))
      << "the second run has its own folder";
}

TEST_F(AttentionMaps, CommandDrawsPngAndSvgAndRejectsBadOptionsInOneLine) {
  const std::string out = (*dir_ / "cli").string();
  if (!find_gnuplot().empty()) {
    ASSERT_EQ(run_cli("attention " + run_dir() + " --length 6 --layers 0 --heads 0 --out " + out), 0) << err_;
    EXPECT_TRUE(fs::exists(fs::path(out) / "run" / "layer0_head0.png"));
    EXPECT_TRUE(fs::exists(fs::path(out) / "run" / "layer0_head0.svg"));
    EXPECT_TRUE(fs::exists(fs::path(out) / "attention.md"));
    // A head asked for twice is drawn once, as eval --lengths takes a repeated length once.
    ASSERT_EQ(
        run_cli("attention " + run_dir() + " --length 6 --layers 0 --heads 0,0 --out " + out + "_twice"), 0)
        << err_;
    const std::string page = testing::text_of(fs::path(out + "_twice") / "attention.md");
    EXPECT_EQ(page.find("| 0 / 0 |"), page.rfind("| 0 / 0 |")) << page;
  }
  EXPECT_EQ(run_cli("attention " + run_dir() + " --length 6 --layers 2 --out " + out + "_bad"), 2);
  EXPECT_EQ(err_, "lengen: error: --layers 2 is out of range: the model has 2 layers (0..1)\n");
  EXPECT_FALSE(fs::exists(out + "_bad"));
  EXPECT_EQ(run_cli("attention " + run_dir() + " --length 6 --heads 0,,1 --out " + out + "_bad"), 2);
  EXPECT_NE(err_.find("--heads: item 2 of '0,,1' is empty"), std::string::npos) << err_;
  EXPECT_FALSE(fs::exists(out + "_bad"));
  EXPECT_EQ(run_cli("attention " + run_dir() + " --length 6 --sample 5 --out " + out + "_bad"), 2);
  EXPECT_NE(err_.find("--sample 5 is out of range"), std::string::npos) << err_;
  // Maps of every target row over 200,002 tokens would not fit in memory: one line, nothing made.
  EXPECT_EQ(run_cli("attention " + run_dir() + " --length 100000 --out " + out + "_bad"), 2);
  EXPECT_NE(err_.find("for the attention maps of one sample"), std::string::npos) << err_;
  EXPECT_FALSE(fs::exists(out + "_bad"));
}

TEST_F(AttentionMaps, KeepsAnOutputFolderPageItDidNotWrite) {
  const fs::path out = *dir_ / "notes";
  fs::create_directories(out);
  { std::ofstream(out / "attention.md") << "my notes\n"; }
  EXPECT_EQ(run_cli("attention " + run_dir() + " --length 6 --out " + out.string()), 2);
  EXPECT_EQ(
      err_.rfind("lengen: error: " + (out / "attention.md").string() + " exists and lengen did not write it",
                 0),
      0u)
      << err_;
  EXPECT_EQ(read_text_file((out / "attention.md").string()), "my notes\n");
  EXPECT_FALSE(fs::exists(out / "run"));
  { std::ofstream(*dir_ / "a_file") << "x"; }
  EXPECT_EQ(run_cli("attention " + run_dir() + " --length 6 --out " + (*dir_ / "a_file").string()), 2);
  EXPECT_NE(err_.find("is a file, not a folder"), std::string::npos) << err_;
}

TEST_F(AttentionMaps, EvaluationRecordsItAndTheReportShowsIt) {
  const auto results = read_json_file(RunFolder(run_dir()).results_path());
  const auto& entry = results["results"]["teacher_forced"]["9"];
  ASSERT_TRUE(entry.contains("attention_on_target")) << entry.dump();
  EXPECT_EQ(entry["attention_on_target"]["known"], true);
  EXPECT_EQ(entry["attention_on_target"]["samples"], 5);  // eval.samples is below the default bound
  EXPECT_EQ(entry["attention_on_target"]["queries"], 5 * 9);
  ASSERT_EQ(entry["attention_on_target"]["layers"].size(), 2u);

  ReportOptions options;
  options.out_dir = (*dir_ / "report").string();
  options.gnuplot = "";
  const std::string report = write_report(run_dir(), options);
  EXPECT_NE(report.find("## Attention on the target"), std::string::npos) << report;
  EXPECT_NE(report.find("### Layer 1: best head"), std::string::npos) << report;
  const double best = entry["attention_on_target"]["layers"][1]["best"].get<double>();
  char cell[64];
  std::snprintf(cell, sizeof cell, "%.2f ± 0.00 (n=1)", best);
  EXPECT_NE(report.find(cell), std::string::npos) << cell << "\n" << report;
  EXPECT_TRUE(fs::exists(*dir_ / "report" / "attention_on_target_layer1_best.csv"));
}

}  // namespace
}  // namespace lengen
