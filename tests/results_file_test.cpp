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
  results.results_on_files["greedy"][32] = full_entry(32, "greedy");
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
  // Sections of the wrong shape are named where they sit, in lengen's words.
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> shapes = {
      {[](nlohmann::json& j) { j["results"] = nlohmann::json::array(); },
       "(results is [], not an object of decode modes)"},
      {[](nlohmann::json& j) { j["results"]["mine"] = 3; }, "(results/mine is 3, not an object of lengths)"},
      {[](nlohmann::json& j) { j["results"]["teacher_forced"]["16"] = 1; },
       "(results/teacher_forced/16 is 1, not an entry (an object))"}};
  for (const auto& [damage, expected] : shapes) {
    nlohmann::json damaged = to_json(full_file());
    damage(damaged);
    const std::string message =
        user_error_message([&] { results_file_from_json(damaged, "RUN/results.json"); });
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
  nlohmann::json json = to_json(full_file());
  json.erase("method");
  EXPECT_EQ(user_error_message([&] {
              results_file_from_json(json, "RUN/results.json");
            }).rfind("RUN/results.json: not a lengen results file", 0),
            0u);
  EXPECT_EQ(
      user_error_message([&] { results_file_from_json(nlohmann::json::array({1}), "RUN/results.json"); }),
      "RUN/results.json: not a lengen results file (its top level is a JSON array, not an object)");
  json = to_json(full_file());
  json["results"]["teacher_forced"]["long"] = json["results"]["teacher_forced"]["16"];
  EXPECT_NE(user_error_message([&] {
              results_file_from_json(json, "RUN/results.json");
            }).find("not a lengen results file"),
            std::string::npos);
  for (const char* key : {"12abc", "-16", "0", "", "99999999999999999999"}) {
    json = to_json(full_file());
    json["results"]["teacher_forced"][key] = json["results"]["teacher_forced"]["16"];
    EXPECT_NE(user_error_message([&] {
                results_file_from_json(json, "RUN/results.json");
              }).find("not a lengen results file"),
              std::string::npos)
        << key;
  }
  json = to_json(full_file());
  json["results"]["teacher_forced"]["16"]["exact_match"] = "high";
  const std::string wrong_type =
      user_error_message([&] { results_file_from_json(json, "RUN/results.json"); });
  EXPECT_NE(wrong_type.find("not a lengen results file"), std::string::npos) << wrong_type;
  EXPECT_EQ(wrong_type.find("json.exception"), std::string::npos) << wrong_type;
  // The key and where its entry sits are named.
  EXPECT_NE(wrong_type.find("(results/teacher_forced/16: exact_match is \"high\", not a number)"),
            std::string::npos)
      << wrong_type;
  // A key lengen writes that is missing is named as absent, not by the JSON library's words.
  json = to_json(full_file());
  json["method"].erase("normalizer");
  const std::string no_normalizer = user_error_message([&] { results_file_from_json(json, "R"); });
  EXPECT_NE(no_normalizer.find("(method.normalizer is absent, not a name)"), std::string::npos)
      << no_normalizer;
  json = to_json(full_file());
  json.erase("task");
  const std::string no_task = user_error_message([&] { results_file_from_json(json, "R"); });
  EXPECT_NE(no_task.find("(task is absent)"), std::string::npos) << no_task;
  json = to_json(full_file());
  json["results"]["teacher_forced"]["16"].erase("step");
  const std::string no_step = user_error_message([&] { results_file_from_json(json, "R"); });
  EXPECT_NE(no_step.find("results/teacher_forced/16: step is absent"), std::string::npos) << no_step;
}

// Numbers out of their range are refused by name, not reported: an exact match of 7.5 would be
// a table cell of 750%.
TEST(ResultsFile, NumbersOutsideTheirRangeAreRefused) {
  const std::vector<std::pair<std::string, nlohmann::json>> cases = {
      {"exact_match", 7.5}, {"token_accuracy", -1e308}, {"samples", -3}, {"correct_tokens", 1000000}};
  for (const auto& [key, value] : cases) {
    nlohmann::json json = to_json(full_file());
    json["results"]["teacher_forced"]["16"][key] = value;
    const std::string message = user_error_message([&] { results_file_from_json(json, "RUN/results.json"); });
    EXPECT_NE(message.find("RUN/results.json: not a lengen results file (results/teacher_forced/16: " + key +
                           " is "),
              std::string::npos)
        << message;
  }
  // Attention statistics: weights on the target are fractions, key counts never negative.
  const std::vector<std::pair<std::string, nlohmann::json>> attention_cases = {
      {"/attention_on_target/layers/0/best", 1.5},    {"/attention_on_target/layers/0/mean", -0.1},
      {"/attention_on_target/layers/0/heads/0", 2.0}, {"/attention_on_target/layers/0/best_head", 7},
      {"/attention/nonzero_per_query", -4.0},         {"/attention/entropy", -1.0}};
  for (const auto& [pointer, value] : attention_cases) {
    nlohmann::json json = to_json(full_file());
    json["results"]["teacher_forced"]["16"][nlohmann::json::json_pointer(pointer)] = value;
    EXPECT_NE(user_error_message([&] {
                results_file_from_json(json, "RUN/results.json");
              }).find("RUN/results.json: not a lengen results file"),
              std::string::npos)
        << pointer;
  }
}

// An entry filed under one length or decode that says another is refused, not reported twice.
TEST(ResultsFile, AnEntryMustSayTheLengthAndDecodeItIsFiledUnder) {
  nlohmann::json json = to_json(full_file());
  json["results"]["teacher_forced"]["32"] = json["results"]["teacher_forced"]["16"];
  EXPECT_NE(
      user_error_message([&] { results_file_from_json(json, "RUN/results.json"); }).find("says length 16"),
      std::string::npos);
  json = to_json(full_file());
  json["results"]["greedy"]["16"] = json["results"]["teacher_forced"]["16"];
  EXPECT_NE(user_error_message([&] {
              results_file_from_json(json, "RUN/results.json");
            }).find("decode teacher_forced"),
            std::string::npos);
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

// A user's notes in results.json, at the top or on an entry, at any depth, survive reading,
// writing and the next evaluation's merge, even of the entry they sit on; a note whose place the
// new measurement lacks moves to the entry's top level under its dotted name.
TEST(ResultsFile, KeysLengenDoesNotKnowAreKept) {
  nlohmann::json json = to_json(full_file());
  json["notes"] = "seed 3 looked odd";
  json["results"]["teacher_forced"]["16"]["comment"] = "rerun";
  json["results"]["teacher_forced"]["1024"]["comment"] = "long";
  json["results"]["teacher_forced"]["16"]["model"]["where"] = "the old cluster";
  json["method"]["why"] = "the paper's";
  json["results"]["teacher_forced"]["16"]["attention"]["seen"] = "dispersed";
  json["results"]["teacher_forced"]["16"]["attention.seen"] = "moved here by an earlier evaluation";
  json["results"]["teacher_forced"]["16"]["attention"]["layers"][0]["head 1"] = "induction";
  json["results"]["teacher_forced"]["16"]["attention_on_target"]["layers"][0]["mine"] = 1;
  json["results"]["teacher_forced"]["1024"]["attention_on_target"]["checked"] = true;
  const ResultsFile read = results_file_from_json(json, "results.json");
  EXPECT_EQ(to_json(read), json);

  Config config;
  config.task.name = "copy";
  RunEvaluation evaluation;
  evaluation.checkpoint = "/runs/r/checkpoints/step_00000100.pt";
  LengthResult result;
  result.length = 16;
  result.decode = DecodeMode::kTeacherForced;
  evaluation.results.push_back(result);
  const nlohmann::json merged = to_json(merge_results(read, config, evaluation));
  EXPECT_EQ(merged["notes"], "seed 3 looked odd");
  EXPECT_EQ(merged["results"]["teacher_forced"]["16"]["comment"], "rerun");
  EXPECT_EQ(merged["results"]["teacher_forced"]["1024"]["comment"], "long");
  EXPECT_EQ(merged["results"]["teacher_forced"]["16"]["model"]["where"], "the old cluster");
  EXPECT_EQ(merged["method"]["why"], "the paper's");
  EXPECT_EQ(merged["results"]["teacher_forced"]["1024"]["attention_on_target"]["checked"], true);
  // The re-measured entry has no attention statistics: the notes on them stay on the entry.
  const nlohmann::json& remeasured = merged["results"]["teacher_forced"]["16"];
  EXPECT_FALSE(remeasured.contains("attention"));
  EXPECT_EQ(remeasured["attention.seen"], "moved here by an earlier evaluation");
  EXPECT_EQ(remeasured["attention.seen (2)"], "dispersed");
  EXPECT_EQ(remeasured["attention.layers.0.head 1"], "induction");
  EXPECT_EQ(remeasured["attention_on_target.layers.0.mine"], 1);
}

// An entry's data record names the samples its figures were measured on; a record that
// disagrees with what the file states elsewhere (edited by hand) is refused by key, not reported
// under a provenance that did not produce it.
TEST(ResultsFile, ADataRecordThatDisagreesWithTheFileIsRefused) {
  ResultsFile results = full_file();
  results.trained_with = {{"task", {{"params", {{"vocab", 8}}}, {"seed", 1}}}, {"model", {{"layers", 1}}}};
  for (auto* section : {&results.results, &results.results_on_files}) {
    for (auto& [decode, by_length] : *section) {
      for (auto& [length, entry] : by_length) {
        const bool generated = section == &results.results;
        entry.data = {{"source", generated ? "generated" : "files"}, {"samples", entry.samples}};
        if (generated) {
          entry.data.update({{"task", "copy"},
                             {"params", {{"vocab", 8.0}, {"len_gap", 0.0}}},
                             {"task_seed", 1},
                             {"seed", derive_seed(1, kEvalStream(length))}});
        }
      }
    }
  }
  const nlohmann::json good = to_json(results);
  EXPECT_NO_THROW(results_file_from_json(good, "results.json"));
  const std::vector<std::pair<std::string, nlohmann::json>> edits = {
      {"/results/teacher_forced/16/data/task", "reverse"},
      {"/results/teacher_forced/16/data/params/vocab", 9},
      {"/results/teacher_forced/16/data/samples", 100},
      {"/results/teacher_forced/16/data/source", "files"},
      {"/results/teacher_forced/16/data/task_seed", 2},
      {"/results/teacher_forced/16/data/seed", 5},
      {"/results_on_files/greedy/32/data/source", "generated"},
      {"/results_on_files/greedy/32/data/samples", 7}};
  for (const auto& [pointer, value] : edits) {
    nlohmann::json edited = good;
    edited[nlohmann::json::json_pointer(pointer)] = value;
    // Read as a file without fingerprints (whose fingerprint would refuse the edit first).
    edited[nlohmann::json::json_pointer(pointer.substr(0, pointer.find("/data/")) + "/model")].erase(
        "record_hash");
    const std::string message =
        user_error_message([&] { results_file_from_json(edited, "RUN/results.json"); });
    const std::string key = pointer.substr(pointer.find("/data/") + 6);
    EXPECT_NE(message.find("data." + (key == "params/vocab" ? std::string("params.vocab") : key) + " is " +
                           value.dump()),
              std::string::npos)
        << pointer << ": " << message;
  }
  // The model record: its step is the entry's and within its schedule; neither record removed.
  nlohmann::json edited = good;
  edited["/results/teacher_forced/16/model/step"_json_pointer] = 999;
  edited["/results/teacher_forced/16/step"_json_pointer] = 999;
  edited["/results/teacher_forced/16/model/schedule"_json_pointer] = "100@0";
  edited["/results/teacher_forced/16/model"_json_pointer].erase("record_hash");  // a file without one
  EXPECT_NE(user_error_message([&] {
              results_file_from_json(edited, "RUN/results.json");
            }).find("model.step 999 is past its schedule \"100@0\""),
            std::string::npos);
  edited = good;
  edited["/results/teacher_forced/16/model/step"_json_pointer] = 99;
  EXPECT_NE(user_error_message([&] {
              results_file_from_json(edited, "RUN/results.json");
            }).find("model.step is 99, but the entry's step is 100"),
            std::string::npos);
  for (const char* record : {"data", "model"}) {
    edited = good;
    edited["/results/teacher_forced/16"_json_pointer].erase(record);
    EXPECT_NE(user_error_message([&] {
                results_file_from_json(edited, "RUN/results.json");
              }).find(std::string("results/teacher_forced/16: no ") + record + " record"),
              std::string::npos)
        << record;
  }
}

// Every model record is written with a fingerprint of its fields: a hand edit of any of them (a
// schedule that splits or merges report rows, a checkpoint path of another run, what it trained
// on) is refused. Records that say what they trained on come with the fingerprint and with
// trained_with's model section; a file with neither (written without them) still reads.
TEST(ResultsFile, AnEditedModelRecordIsRefusedByItsFingerprint) {
  ResultsFile results = full_file();
  results.trained_with = {{"task", {{"seed", 1}}}, {"model", {{"layers", 1}}}};
  for (auto* section : {&results.results, &results.results_on_files}) {
    for (auto& [decode, by_length] : *section) {
      for (auto& [length, entry] : by_length) {
        entry.model->schedule = "100@0";
        entry.model->trained_on = "generated";
      }
    }
  }
  const nlohmann::json good = to_json(results);
  EXPECT_EQ(good["/results/teacher_forced/16/model/record_hash"_json_pointer],
            entry_record_hash(results.results["teacher_forced"][16]));
  EXPECT_NO_THROW(results_file_from_json(good, "results.json"));
  const std::vector<std::pair<std::string, nlohmann::json>> edits = {
      {"schedule", "990@0"},
      {"checkpoint", "OTHER/checkpoints/step_00000100.pt"},
      {"trained_on", "files 0123456789abcdef"},
      {"weights_hash", "abc124"}};
  for (const auto& [key, value] : edits) {
    nlohmann::json edited = good;
    edited["/results_on_files/greedy/32/model"_json_pointer][key] = value;
    EXPECT_NE(user_error_message([&] {
                results_file_from_json(edited, "RUN/results.json");
              }).find("results_on_files/greedy/32: the entry does not match its model.record_hash"),
              std::string::npos)
        << key;
  }
  // Any other field lengen writes in the entry: a metric, its decode, its data record.
  const std::vector<std::pair<std::string, nlohmann::json>> entry_edits = {
      {"/results/teacher_forced/16/loss", 5.0},
      {"/results/teacher_forced/16/attention/nonzero_per_query", 99.0},
      {"/results/teacher_forced/16/decode", "greedy"},
      {"/results/teacher_forced/16/data/generated", false}};
  for (const auto& [pointer, value] : entry_edits) {
    nlohmann::json edited = good;
    edited[nlohmann::json::json_pointer(pointer)] = value;
    const std::string message =
        user_error_message([&] { results_file_from_json(edited, "RUN/results.json"); });
    EXPECT_TRUE(message.find("results/teacher_forced/16: the entry does not match its model.record_hash") !=
                    std::string::npos ||
                message.find("says length 16, decode greedy") != std::string::npos)
        << pointer << ": " << message;
  }
  nlohmann::json edited = good;
  edited["/results/teacher_forced/16/model"_json_pointer].erase("record_hash");
  EXPECT_NE(user_error_message([&] {
              results_file_from_json(edited, "RUN/results.json");
            }).find("results/teacher_forced/16: no model.record_hash beside model.trained_on"),
            std::string::npos);
  edited = good;
  edited["trained_with"].erase("model");
  EXPECT_NE(user_error_message([&] {
              results_file_from_json(edited, "RUN/results.json");
            }).find("the file does not match its record_hash"),
            std::string::npos);
  edited.erase("record_hash");
  EXPECT_NE(user_error_message([&] {
              results_file_from_json(edited, "RUN/results.json");
            }).find("trained_with has no \"model\" section, but results/teacher_forced/16 was written by"),
            std::string::npos);
  // Written without any of them: read as it is.
  for (auto* section : {"results", "results_on_files"}) {
    for (auto& [decode, by_length] : edited[section].items()) {
      for (auto& [length, entry] : by_length.items()) {
        entry["model"].erase("record_hash");
        entry["model"].erase("trained_on");
      }
    }
  }
  EXPECT_NO_THROW(results_file_from_json(edited, "results.json"));
}

// The file's label (task, training lengths, seed, run id, trained_with, method) is fingerprinted
// too, and an entry names the run that measured it: an edited label, a file without its
// fingerprint beside entries with theirs, and another run's entry pasted in are refused.
TEST(ResultsFile, AnEditedLabelOrAnotherRunsEntryIsRefused) {
  ResultsFile results = full_file();
  results.run_id = "0123456789abcdef";
  results.trained_with = {{"task", {{"len_max", 16}}}, {"model", {{"d_mlp", 32}}}};
  for (auto* section : {&results.results, &results.results_on_files}) {
    for (auto& [decode, by_length] : *section) {
      for (auto& [length, entry] : by_length) entry.model->run_id = results.run_id;
    }
  }
  const nlohmann::json good = to_json(results);
  EXPECT_EQ(good["record_hash"], results_file_hash(results));
  EXPECT_NO_THROW(results_file_from_json(good, "results.json"));
  for (const char* pointer : {"/train_len_max", "/trained_with/model/d_mlp", "/seed"}) {
    nlohmann::json edited = good;
    edited[nlohmann::json::json_pointer(pointer)] = 4;
    EXPECT_NE(user_error_message([&] {
                results_file_from_json(edited, "RUN/results.json");
              }).find("the file does not match its record_hash"),
              std::string::npos)
        << pointer;
  }
  nlohmann::json edited = good;
  edited.erase("record_hash");
  EXPECT_NE(user_error_message([&] {
              results_file_from_json(edited, "RUN/results.json");
            }).find("no record_hash beside results/teacher_forced/16's"),
            std::string::npos);
  // Another run's entry, with its own record (and fingerprint) intact.
  ResultsFile other = results;
  other.run_id = "fedcba9876543210";
  for (auto& [length, entry] : other.results["teacher_forced"]) entry.model->run_id = other.run_id;
  edited = good;
  edited["/results/teacher_forced/16"_json_pointer] =
      to_json(other)["/results/teacher_forced/16"_json_pointer];
  EXPECT_NE(
      user_error_message([&] { results_file_from_json(edited, "RUN/results.json"); })
          .find("results/teacher_forced/16 was measured by run fedcba9876543210, not by this file's run "
                "0123456789abcdef"),
      std::string::npos);
  // A fingerprint that is not text is named by its key.
  edited = good;
  edited["/results/teacher_forced/16/model/record_hash"_json_pointer] = 5;
  EXPECT_NE(user_error_message([&] {
              results_file_from_json(edited, "RUN/results.json");
            }).find("model.record_hash is 5, not a string"),
            std::string::npos);
}

// A fraction is its counts' quotient: one edited alone is refused, naming both.
TEST(ResultsFile, AFractionOtherThanItsCountsIsRefused) {
  const nlohmann::json good = to_json(full_file());
  nlohmann::json edited = good;
  edited["/results/teacher_forced/16/exact_match"_json_pointer] = 0.5;
  EXPECT_NE(user_error_message([&] {
              results_file_from_json(edited, "RUN/results.json");
            }).find("exact_match is 0.5, but exact / samples is 5 / 8"),
            std::string::npos);
  edited = good;
  edited["/results/teacher_forced/16/correct_tokens"_json_pointer] = 15;
  EXPECT_NE(user_error_message([&] {
              results_file_from_json(edited, "RUN/results.json");
            }).find("token_accuracy is 0.9, but correct_tokens / tokens is 15 / 80"),
            std::string::npos);
}
