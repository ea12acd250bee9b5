// `lengen bench normalizers`, `lengen bench step` and `lengen bench eval` on tiny inputs: every
// contender is timed and the ratios are relative to the baseline of the same run. Speed itself is not
// asserted: timings belong in BENCHMARKS.md, not in tests.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <torch/cuda.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "lengen/attention_choices.h"
#include "lengen/batch.h"
#include "lengen/config_io.h"
#include "lengen/sequence.h"
#include "lengen/step_bench.h"
#include "lengen/training_data.h"

namespace lengen {
namespace {

struct Captured {
  std::string out;
  int status = 0;  // as from wait
};

// Runs a shell command and captures its stdout.
Captured capture(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  Captured captured;
  std::array<char, 4096> buffer{};
  while (size_t read = fread(buffer.data(), 1, buffer.size(), pipe.get()))
    captured.out.append(buffer.data(), read);
  captured.status = pclose(pipe.release());
  return captured;
}

// Runs the CLI with `args` and returns its stdout; fails the test on a non-zero exit.
std::string run_cli(const std::string& args) {
  const std::string command = std::string(LENGEN_CLI_PATH) + " " + args + " 2>/dev/null";
  const Captured captured = capture(command);
  EXPECT_TRUE(WIFEXITED(captured.status) && WEXITSTATUS(captured.status) == 0) << command;
  return captured.out;
}

// Each command line exits 2 with one line that contains its expected text.
void expect_one_line_usage_errors(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [args, expected] : cases) {
    const auto [out, status] = capture(std::string(LENGEN_CLI_PATH) + " " + args + " 2>&1");
    ASSERT_TRUE(WIFEXITED(status)) << args;
    EXPECT_EQ(WEXITSTATUS(status), 2) << args << "\n" << out;
    EXPECT_NE(out.find(expected), std::string::npos) << args << "\n" << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << args << "\n" << out;
  }
}

// Every named method (attention_choices.h) in table order, Softmax, the baseline, first.
TEST(BenchCli, StepTimesEveryMethodAgainstSoftmax) {
  const auto results = nlohmann::json::parse(run_cli(
      "bench step --json --repeats 2 --layers 1 --d-model 16 --heads 2 --d-head 8 --batch 2 --length 8"));
  const std::vector<NamedMethod> methods = named_methods();
  ASSERT_EQ(results.size(), methods.size());
  EXPECT_DOUBLE_EQ(results[0]["ratio"].get<double>(), 1.0);
  for (size_t i = 0; i < methods.size(); ++i) {
    const auto& entry = results[i];
    EXPECT_EQ(entry["method"], methods[i].name);
    EXPECT_EQ(entry["normalizer"], methods[i].normalizer);
    EXPECT_EQ(entry["scaling"], methods[i].scaling);
    EXPECT_GT(entry["ms"].get<double>(), 0.0) << entry;
    EXPECT_EQ(entry["positions"], "nape");
    EXPECT_EQ(entry["d_model"], 16);
    EXPECT_EQ(entry["d_mlp"], 64);  // 4 x d_model unless --d-mlp says otherwise
  }
  EXPECT_EQ(results[0]["method"], "Softmax");
}

// The floor: the step's matrix-product FLOPs, the sgemm rate and the step time over the time of
// those FLOPs at that rate. By hand, 1 layer, d_model 16, 2 heads x 8, d_mlp 64, vocab 36, 2 x 8
// tokens (16): projections 2*16*(4*16*16 + 3*16*64) = 131072, q.k^T and p.v 2*2*16*8*16 = 8192,
// output layer 2*16*16*36 = 18432; forward 157696, with backward 3x = 473088.
TEST(BenchCli, StepReportsItsFloor) {
  ModelConfig model = default_step_bench_model();
  model.layers = 1;
  model.d_model = 16;
  model.heads = 2;
  model.d_head = 8;
  model.d_mlp = 64;
  EXPECT_DOUBLE_EQ(training_step_flops(model, 2, 8, 36, 16, 8), 473088.0);
  // The output layer runs at the target positions only: 4 of 16 leave 2*4*16*36 of its 18432.
  EXPECT_DOUBLE_EQ(training_step_flops(model, 2, 8, 36, 4, 8), 3.0 * (157696.0 - 18432.0 + 4608.0));
  // The last block answering the last 2 rows of each sequence: keys and values 2*16*(2*16*16) =
  // 16384 at all 16 rows, the rest 2*4*(2*16*16 + 3*16*64) = 28672 and q.k^T, p.v 2*2*4*8*16 =
  // 2048 at 4, the output layer 4608 at 4.
  EXPECT_DOUBLE_EQ(training_step_flops(model, 2, 8, 36, 4, 2), 3.0 * (16384.0 + 28672.0 + 2048.0 + 4608.0));
  const auto results = nlohmann::json::parse(run_cli(
      "bench step --json --repeats 1 --layers 1 --d-model 16 --heads 2 --d-head 8 --batch 2 --length 8 "
      "--only ASEntmax"));
  ASSERT_EQ(results.size(), 2u);
  for (const auto& entry : results) {
    EXPECT_DOUBLE_EQ(entry["flops"].get<double>(), 473088.0) << entry;
    const double rate = entry["sgemm_flops_per_s"].get<double>();
    EXPECT_GT(rate, 1e8) << entry;
    const double floor_seconds = 473088.0 / rate;
    EXPECT_NEAR(entry["floor_ratio"].get<double>(), entry["ms"].get<double>() / 1e3 / floor_seconds,
                1e-9 * entry["floor_ratio"].get<double>())
        << entry;
  }
}

TEST(BenchCli, StepInBfloat16ReportsItsDtypeAndThroughput) {
  const auto results =
      nlohmann::json::parse(run_cli("bench step --json --repeats 1 --dtype bfloat16 --layers 1 --d-model 16 "
                                    "--heads 2 --d-head 8 --d-mlp 24 "
                                    "--batch 2 --length 8 --only ASEntmax"));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1]["method"], "ASEntmax");
  for (const auto& entry : results) {
    EXPECT_EQ(entry["dtype"], "bfloat16");
    EXPECT_EQ(entry["device"], "cpu");
    EXPECT_EQ(entry["d_mlp"], 24);
    const double expected = 2 * 8 / (entry["ms"].get<double>() / 1e3);
    EXPECT_NEAR(entry["tokens_per_s"].get<double>(), expected, 1e-9 * expected) << entry;
  }
}

// --config takes the model, the batch size and a batch of the task's samples at len_max from a
// config, and times the trainer's step: the output layer at the target positions only.
TEST(BenchCli, StepTakesItsShapeFromAConfig) {
  const std::string config = std::string(LENGEN_SOURCE_DIR) + "/configs/quick/copy.json";
  const Config copy = load_config(config);
  auto task = make_task(copy.task.name, copy.task.params, copy.task.seed);
  const Batch batch = collate(fixed_samples(*task, copy.task.len_max, copy.train.batch_size, 0));
  const int64_t tokens = batch.input.size(1);
  const int64_t targets = batch.loss_mask.sum().item<int64_t>();
  ASSERT_LT(targets, copy.train.batch_size * tokens);
  const auto results =
      nlohmann::json::parse(run_cli("bench step --json --repeats 1 --only SSMax --config " + config));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1]["method"], "SSMax");
  for (const auto& entry : results) {
    EXPECT_EQ(entry["layers"], copy.model.layers);
    EXPECT_EQ(entry["d_model"], copy.model.d_model);
    EXPECT_EQ(entry["d_mlp"], copy.model.d_mlp);
    EXPECT_EQ(entry["positions"], copy.model.attention.positions);
    EXPECT_EQ(entry["batch"], copy.train.batch_size);
    EXPECT_EQ(entry["length"], tokens);
    EXPECT_EQ(entry["vocab"], vocab_size(task->num_symbols()));
    EXPECT_EQ(entry["targets"], targets);
    EXPECT_DOUBLE_EQ(entry["flops"].get<double>(),
                     training_step_flops(copy.model, copy.train.batch_size, tokens, entry["vocab"].get<int64_t>(),
                                         targets, tokens - first_selected_row(batch.loss_mask)));
  }
}

// A shape given twice, an unknown method or a missing config: one line, exit 2, nothing timed.
TEST(BenchCli, StepRefusesConflictingOrUnknownChoicesInOneLine) {
  const std::string copy = std::string(LENGEN_SOURCE_DIR) + "/configs/quick/copy.json";
  // A config's shape too large for memory is named by the config, not by options never typed.
  nlohmann::json huge = nlohmann::json::parse(std::ifstream(copy), nullptr, true, /*ignore_comments=*/true);
  huge["train"]["batch_size"] = 4096;
  huge["task"]["len_max"] = 60000;
  huge["eval"]["lengths"] = {60000};
  const std::string huge_path = ::testing::TempDir() + "/bench_huge_" + std::to_string(getpid()) + ".json";
  std::ofstream(huge_path) << huge.dump();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bench step --config " + copy + " --layers 3", "excludes"},
      {"bench step --only Softmaxx", "unknown method 'Softmaxx'"},
      {"bench step --config /nonexistent/c.json", "/nonexistent/c.json"},
      {"bench step --device tpu", "--device"},
      {"bench step --vocab 4 --repeats 1", "bench step --vocab 4: at least 5 token ids"},
      // Every method's weights and optimizer state at once: refused before any is allocated.
      {"bench step --d-model 65536 --d-mlp 65536 --repeats 1", "GiB parameters), more than this machine's"},
      {"bench step --batch 65536 --length 1048576 --repeats 1",
       "bench step --batch 65536 --length 1048576 needs"},
      {"bench normalizers --lengths 1000000 --repeats 1",
       "bench normalizers --lengths 1000000 needs at least"},
      {"bench step --repeats 1 --config " + huge_path,
       "bench step --config " + huge_path + " (batch 4096, 120002 tokens) needs"},
  };
  expect_one_line_usage_errors(cases);
  const auto [out, status] =
      capture(std::string(LENGEN_CLI_PATH) + " bench step --repeats 1 --config " + huge_path + " 2>&1");
  EXPECT_NE(out.find("take a config with a smaller train.batch_size"), std::string::npos) << out;
  EXPECT_EQ(out.find("--batch"), std::string::npos) << out;
  std::remove(huge_path.c_str());
}

TEST(BenchCli, StepOnCudaWithoutCudaIsAUsageError) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "this machine has CUDA";
  const std::string command = std::string(LENGEN_CLI_PATH) + " bench step --device cuda >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

// `lengen bench eval` at a short length: both methods with both kernels, the fused against the
// dense and the FLOP floor, best of the rounds; with two threads, the fused kernel against one
// thread as well.
TEST(BenchCli, EvalTimesBothKernelsAgainstDenseAndTheFloor) {
  const auto records =
      nlohmann::json::parse(run_cli("bench eval --lengths 64 --samples 1 --repeats 2 --json"));
  ASSERT_EQ(records.size(), 4u);
  for (const auto& record : records) {
    for (const char* field : {"method", "kernel", "length", "seconds_per_sample", "tokens_per_s",
                              "peak_added_mb", "speedup_vs_dense", "floor_ratio"}) {
      EXPECT_TRUE(record.contains(field)) << field << " in " << record;
    }
    EXPECT_EQ(record["length"], 64);
    EXPECT_EQ(record["repeats"], 2);
    EXPECT_GT(record["seconds_per_sample"].get<double>(), 0.0) << record;
    EXPECT_GT(record["floor_ratio"].get<double>(), 0.0) << record;
    EXPECT_FALSE(record.contains("speedup_vs_one_thread")) << record;
  }
  EXPECT_EQ(records[0]["method"], "Softmax");
  EXPECT_EQ(records[0]["kernel"], "dense");
  EXPECT_EQ(records[1]["kernel"], "fused");
  EXPECT_GT(records[1]["speedup_vs_dense"].get<double>(), 0.0);
  EXPECT_EQ(records[3]["method"], "ASEntmax");

  const auto threaded = nlohmann::json::parse(
      run_cli("bench eval --lengths 64 --samples 1 --threads 2 --dense-max-length 0 --json"));
  ASSERT_EQ(threaded.size(), 2u);  // fused only
  for (const auto& record : threaded) {
    EXPECT_EQ(record["kernel"], "fused");
    EXPECT_EQ(record["threads"], 2);
    EXPECT_TRUE(record["speedup_vs_dense"].is_null()) << record;
    EXPECT_GT(record["one_thread_seconds_per_sample"].get<double>(), 0.0) << record;
    EXPECT_NEAR(
        record["speedup_vs_one_thread"].get<double>(),
        record["one_thread_seconds_per_sample"].get<double>() / record["seconds_per_sample"].get<double>(),
        1e-9)
        << record;
  }
}

// The memory column tells the kernels apart: what the evaluation added above the model, where
// the dense kernel holds length x length scores per head and the fused one bounded chunks (the
// process's own peak was the same for both, the largest evaluation so far).
TEST(BenchCli, EvalMemoryIsWhatEachKernelAddedAboveTheModel) {
  const auto records =
      nlohmann::json::parse(run_cli("bench eval --lengths 1024 --samples 1 --repeats 1 --json"));
  ASSERT_EQ(records.size(), 4u);
  for (size_t dense = 0; dense < records.size(); dense += 2) {
    const double dense_mb = records[dense]["peak_added_mb"].get<double>();
    const double fused_mb = records[dense + 1]["peak_added_mb"].get<double>();
    EXPECT_EQ(records[dense + 1]["kernel"], "fused");
    EXPECT_GT(dense_mb, 20.0) << records[dense];
    EXPECT_GT(dense_mb, 3 * fused_mb) << records[dense] << records[dense + 1];
  }
  EXPECT_NE(run_cli("bench eval --help").find("above what the process held before it"), std::string::npos);
}

TEST(BenchCli, NormalizersTimesEveryNormalizerAgainstTorchSoftmax) {
  const auto results = nlohmann::json::parse(run_cli("bench normalizers --json --repeats 1 --lengths 16"));
  ASSERT_GE(results.size(), 5u);
  EXPECT_EQ(results[0]["normalizer"], "torch::softmax");
  EXPECT_DOUBLE_EQ(results[0]["ratio"].get<double>(), 1.0);
  for (const auto& entry : results) {
    EXPECT_EQ(entry["n"], 16);
    EXPECT_GT(entry["ms"].get<double>(), 0.0) << entry;
  }
}

TEST(BenchCli, NormalizersOnlyTimesTheNamedOnesAndTheBaseline) {
  const auto results = nlohmann::json::parse(
      run_cli("bench normalizers --json --repeats 1 --lengths 16 32 --only entmax15 sparsemax"));
  ASSERT_EQ(results.size(), 6u);
  for (size_t i = 0; i < results.size(); i += 3) {
    EXPECT_EQ(results[i]["normalizer"], "torch::softmax");
    EXPECT_EQ(results[i + 1]["normalizer"], "sparsemax");  // table order, not the order given
    EXPECT_EQ(results[i + 2]["normalizer"], "entmax15");
  }
  EXPECT_EQ(results[3]["n"], 32);
}

TEST(BenchCli, UnknownNormalizerIsAUsageError) {
  const std::string command =
      std::string(LENGEN_CLI_PATH) +
      " bench normalizers --repeats 1 --lengths 16 --only no_such_normalizer >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

TEST(BenchCli, BadOptionIsAUsageError) {
  const std::string command =
      std::string(LENGEN_CLI_PATH) + " bench step --positions nowhere >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

// A count that is not a whole number in its range: exit 2 and one line naming the option and the
// value.
TEST(BenchCli, CountsOutsideTheirRangeAreUsageErrorsNamingTheValue) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bench eval --threads 0", "'0' is not a whole number from 1 to 1024"},
      {"bench eval --threads 2048", "'2048' is not a whole number from 1 to 1024"},
      {"bench eval --lengths 1024,abc", "'abc' is not a whole number from 1 to 1048576"},
      {"bench eval --lengths 1024,,4096", "item 2 of '1024,,4096' is empty"},
      {"bench eval --lengths 9223372036854775807", "is not a whole number from 1 to 1048576"},
      {"bench eval --samples 2.5", "'2.5' is not a whole number from 1 to 1048576"},
      {"bench eval --repeats 0", "'0' is not a whole number from 1 to 1000"},
      {"bench eval --repeats 1000000000000", "is not a whole number from 1 to 1000"},
      {"bench eval --dense-max-length -1", "'-1' is not a whole number, 0 or more"},
      {"bench normalizers --lengths -5", "'-5' is not a whole number from 1 to 1048576"},
      {"bench step --length 2000000", "'2000000' is not a whole number from 1 to 1048576"},
      {"bench normalizers --threads 100000", "is not a whole number from 1 to 1024"},
      {"bench step --repeats 0", "'0' is not a whole number from 1 to 1000"}};
  expect_one_line_usage_errors(cases);
}

// A length the task cannot generate (the quick mqmtar shape needs 10): one line before any table.
TEST(BenchCli, EvalLengthBelowTheTasksMinimumIsOneLine) {
  const auto [out, status] = capture(std::string(LENGEN_CLI_PATH) + " bench eval --lengths 64,9 2>&1");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2) << out;
  EXPECT_NE(out.find("length 9 is shorter than mqmtar allows with these parameters (at least 10)"),
            std::string::npos)
      << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

}  // namespace
}  // namespace lengen
