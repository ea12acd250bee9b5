// results.json as a type: what evaluation writes reads back the same, a file that is not one is
// refused with its name, and the report's metric names find their values.
#include "lengen/results_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lengen/data_streams.h"
#include "lengen/errors.h"
#include "lengen/evaluation.h"
#include "lengen/rng.h"
#include "user_error_message.h"

namespace fs = std::filesystem;
using namespace lengen;
using lengen::testing::user_error_message;

namespace {

ResultEntry full_entry(int64_t length, const std::string& decode = "teacher_forced") {
  ResultEntry entry;
  entry.length = length;
  entry.decode = decode;
  entry.samples = 8;
  entry.exact_match = 0.625;
  entry.token_accuracy = 0.9;
  entry.exact = 5;
  entry.tokens = 80;
  entry.correct_tokens = 72;
  entry.loss = 0.125;
  entry.attention = AttentionSummary{3.5, 0.75, {{{3.0, 4.0}, {0.5, 1.0}}}};
  TargetAttention target;
  target.known = true;
  target.samples = 2;
  target.queries = 16;
  target.layers = {{{0.25, 0.75}, 1, 0.75, 0.5}};
  entry.attention_on_target = target;
  entry.checkpoint = "step_00000100.pt";
  entry.step = 100;
  entry.model = ModelRecord{"RUN/checkpoints/step_00000100.pt", 100, "abc123", "", ""};
  entry.data = {{"generated", true}};
  return entry;
}

ResultsFile full_file() {
  ResultsFile results;
  results.task = "copy";
  results.train_len_min = 2;
  results.train_len_max = 16;
  results.seed = 3;
  results.method = {"entmax15", "asentmax", "nape"};
  results.results["teacher_forced"][16] = full_entry(16);
  results.results["teacher_forced"][1024] = full_entry(1024);
  results.results_on_files["/data/ref"]["greedy"][32] = full_entry(32, "greedy");
  return results;
}

}  // namespace

TEST(ResultsFile, WhatIsWrittenReadsBackTheSame) {
  const nlohmann::json json = to_json(full_file());
  EXPECT_EQ(to_json(results_file_from_json(json, "results.json")), json);
  // Lengths are keys of the JSON object; the type keeps them as numbers.
  EXPECT_TRUE(json["results"]["teacher_forced"].contains("1024"));
  const ResultsFile back = results_file_from_json(json, "results.json");
  EXPECT_EQ(back.results.at("teacher_forced").begin()->first, 16);
  EXPECT_EQ(back.method, (Method{"entmax15", "asentmax", "nape"}));
}

// Answers are written (with their accuracy) for entries that have them, and read back.
TEST(ResultsFile, AnswersAreKeptWhereMeasured) {
  ResultsFile results = full_file();
  results.results["teacher_forced"][16].answers = 32;
  results.results["teacher_forced"][16].correct_answers = 24;
  const nlohmann::json json = to_json(results);
  EXPECT_DOUBLE_EQ(json["results"]["teacher_forced"]["16"]["answer_accuracy"].get<double>(), 0.75);
  EXPECT_FALSE(json["results"]["teacher_forced"]["1024"].contains("answers"));
  const ResultsFile back = results_file_from_json(json, "results.json");
  EXPECT_EQ(back.results.at("teacher_forced").at(16).metric("answer_accuracy"), 0.75);
  EXPECT_FALSE(back.results.at("teacher_forced").at(1024).metric("answer_accuracy"));
}

TEST(ResultsFile, OptionalPartsStayAbsent) {
  ResultsFile results = full_file();
  ResultEntry& entry = results.results["teacher_forced"][16];
  entry.attention.reset();
  entry.attention_on_target.reset();
  entry.model.reset();
  entry.data = nullptr;
  const nlohmann::json json = to_json(results)["results"]["teacher_forced"]["16"];
  EXPECT_FALSE(json.contains("attention"));
  EXPECT_FALSE(json.contains("attention_on_target"));
  EXPECT_FALSE(json.contains("model"));
  EXPECT_FALSE(json.contains("data"));
  EXPECT_FALSE(to_json(ResultsFile{}).contains("results_on_files"));
}

TEST(ResultsFile, AFileThatIsNotOneIsRefusedWithItsName) {
  nlohmann::json json = to_json(full_file());
  json.erase("method");
  EXPECT_EQ(user_error_message([&] {
              results_file_from_json(json, "RUN/results.json");
            }).rfind("RUN/results.json: not a lengen results file", 0),
            0u);
  EXPECT_EQ(
      user_error_message([&] { results_file_from_json(nlohmann::json::array({1}), "RUN/results.json"); })
          .rfind("RUN/results.json: not a lengen results file (", 0),
      0u);
}

TEST(ResultsFile, ReadAndWrittenOnDisk) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("lengen_results_file_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "results.json").string();
  write_results_file(path, full_file());
  EXPECT_EQ(to_json(read_results_file(path)), to_json(full_file()));
  std::ofstream(path) << "[1, 2]";
  EXPECT_NE(user_error_message([&] { read_results_file(path); }).find(path + ": not a lengen results file"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(ResultsFile, MetricsByName) {
  const ResultEntry entry = full_entry(16);
  EXPECT_EQ(entry.metric("exact_match"), 0.625);
  EXPECT_EQ(entry.metric("token_accuracy"), 0.9);
  EXPECT_EQ(entry.metric("loss"), 0.125);
  EXPECT_EQ(entry.metric("nonzero_per_query"), 3.5);
  EXPECT_EQ(entry.metric("entropy"), 0.75);
  EXPECT_EQ(entry.metric("attention_on_target/0/best"), 0.75);
  EXPECT_EQ(entry.metric("attention_on_target/0/mean"), 0.5);
  EXPECT_FALSE(entry.metric("attention_on_target/1/best"));
  EXPECT_FALSE(entry.metric("attention_on_target/0/worst"));
  EXPECT_FALSE(entry.metric("attention_on_target//best"));
  EXPECT_FALSE(entry.metric("accuracy"));
  ResultEntry bare = entry;
  bare.attention.reset();
  bare.attention_on_target.reset();
  EXPECT_FALSE(bare.metric("nonzero_per_query"));
  EXPECT_FALSE(bare.metric("attention_on_target/0/best"));
}
