// Reports: tables of mean ± std over seeds from results.json files written here, CSV, plots.
#include "lengen/report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "lengen/atomic_write.h"
#include "lengen/errors.h"
#include "report/report_parts.h"
#include "user_error_message.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;
using lengen::testing::user_error_message;

class Report : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("lengen_report_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    // ASEntmax: three seeds; Softmax: one seed, evaluated only at 16.
    write_run("asentmax-seed1", "entmax15", "asentmax", {{16, 1.0, 1.0, 3.0}, {64, 0.9, 0.95, 2.0}});
    write_run("asentmax-seed2", "entmax15", "asentmax", {{16, 1.0, 1.0, 3.0}, {64, 0.8, 0.90, 4.0}});
    write_run("asentmax-seed3", "entmax15", "asentmax", {{16, 1.0, 1.0, 3.0}, {64, 1.0, 1.00, 3.0}});
    write_run("softmax-seed1", "softmax", "none", {{16, 0.5, 0.75, 10.0}});
    nlohmann::json runs = nlohmann::json::array();
    for (const char* name :
         {"asentmax-seed1", "asentmax-seed2", "asentmax-seed3", "softmax-seed1", "unfinished"}) {
      runs.push_back({{"name", name}, {"overrides", nlohmann::json::object()}});
    }
    write_file_atomically((dir_ / "sweep.json").string(), nlohmann::json{{"runs", runs}}.dump());
  }
  void TearDown() override { fs::remove_all(dir_); }

  struct Point {
    int64_t length;
    double exact, token, nonzero;
  };
  void write_run(const std::string& name, const std::string& normalizer, const std::string& scaling,
                 const std::vector<Point>& points) {
    ResultsFile results;
    results.task = "copy";
    results.seed = std::stoull(name.substr(name.rfind("seed") + 4));  // "asentmax-seed2": 2
    results.train_len_max = 16;
    results.method = {normalizer, scaling, "nape"};
    // What the evaluated model trained with, as evaluation records it.
    results.trained_with = {{"task", {{"name", "copy"}, {"len_max", 16}}},
                            {"train", {{"seed", results.seed}}},
                            {"model", {{"attention", {{"normalizer", normalizer}, {"scaling", scaling}}}}}};
    for (const Point& p : points) {
      ResultEntry& entry = results.results["teacher_forced"][p.length];
      entry.length = p.length;
      entry.decode = "teacher_forced";
      // Counts whose quotients are the point's fractions, as an evaluation writes them.
      entry.samples = 10000;
      entry.exact = std::llround(p.exact * entry.samples);
      entry.exact_match = static_cast<double>(entry.exact) / entry.samples;
      entry.tokens = 10000;
      entry.correct_tokens = std::llround(p.token * entry.tokens);
      entry.token_accuracy = static_cast<double>(entry.correct_tokens) / entry.tokens;
      entry.attention = AttentionSummary{p.nonzero, 0.5, {}};
    }
    fs::create_directories(dir_ / name);
    write_results_file((dir_ / name / "results.json").string(), results);
  }
  std::string read(const std::string& name) const {
    std::ifstream in(dir_ / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path dir_;
};

TEST_F(Report, SummarizeUsesTheSampleStandardDeviation) {
  const Summary s = summarize_values({90, 80, 100});
  EXPECT_DOUBLE_EQ(s.mean, 90.0);
  EXPECT_DOUBLE_EQ(s.std, 10.0);
  EXPECT_EQ(s.n, 3);
  EXPECT_DOUBLE_EQ(summarize_values({42}).std, 0.0);
}

TEST_F(Report, TablesGroupRunsByMethod) {
  const auto runs = collect_runs(dir_.string()).runs;
  ASSERT_EQ(runs.size(), 4u);  // "unfinished" has no results.json
  EXPECT_EQ(method_label(runs[0].group.method), "ASEntmax (entmax15 + asentmax) / nape");
  EXPECT_EQ(method_label({"sparsemax", "learned", "rope"}), "sparsemax + learned / rope");

  const MetricTable exact = metric_table(runs, "exact_match");
  EXPECT_EQ(exact.lengths, (std::vector<int64_t>{16, 64}));
  const std::string md = markdown_table(exact, 16);
  EXPECT_NE(md.find("| method | 16 (1x) | 64 (4x) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| ASEntmax (entmax15 + asentmax) / nape | 100.0 ± 0.0 (n=3) | 90.0 ± 10.0 (n=3) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| Softmax (softmax + none) / nape | 50.0 ± 0.0 (n=1) | - |"), std::string::npos) << md;

  const std::string nonzero = markdown_table(metric_table(runs, "nonzero_per_query"), 16);
  EXPECT_NE(nonzero.find("| 3.00 ± 0.00 (n=3) | 3.00 ± 1.00 (n=3) |"), std::string::npos) << nonzero;
  const std::string csv = csv_table(metric_table(runs, "token_accuracy"), 16);
  EXPECT_NE(csv.find("\"ASEntmax (entmax15 + asentmax) / nape\",entmax15,asentmax,nape,\"\",64,4x,95,5,3"),
            std::string::npos)
      << csv;
}

// Runs of one method that differ in more than their seeds (a grid over train.lr) are two groups,
// never one mean over unlike runs; settings that leave the model alone (threads, evaluation) and
// the seeds are what a group averages over.
TEST_F(Report, RunsThatDifferBeyondTheirSeedsAreGroupsOfTheirOwn) {
  const auto write_config = [this](const std::string& run, double lr, int seed, int threads) {
    const nlohmann::json config = {{"task", {{"name", "copy"}, {"len_max", 16}}},
                                   {"train", {{"lr", lr}, {"seed", seed}, {"threads", threads}}},
                                   {"eval", {{"samples", seed * 10}}}};
    write_file_atomically((dir_ / run / "config.json").string(), config.dump());
  };
  write_config("asentmax-seed1", 0.001, 1, 1);
  write_config("asentmax-seed2", 0.002, 2, 2);
  write_config("asentmax-seed3", 0.001, 3, 1);
  write_config("softmax-seed1", 0.001, 1, 1);
  const auto runs = collect_runs(dir_.string()).runs;
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].group.variant, "train.lr=0.001");
  EXPECT_EQ(runs[1].group.variant, "train.lr=0.002");
  const std::string md = markdown_table(metric_table(runs, "exact_match"), 16);
  EXPECT_NE(
      md.find(
          "| ASEntmax (entmax15 + asentmax) / nape, train.lr=0.001 | 100.0 ± 0.0 (n=2) | 95.0 ± 7.1 (n=2) |"),
      std::string::npos)
      << md;
  EXPECT_NE(
      md.find(
          "| ASEntmax (entmax15 + asentmax) / nape, train.lr=0.002 | 100.0 ± 0.0 (n=1) | 80.0 ± 0.0 (n=1) |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("| Softmax (softmax + none) / nape, train.lr=0.001 |"), std::string::npos) << md;
}

// A copy of a run folder, or one config trained twice, is the same measurement twice: it is left
// out of the tables and named, not counted as another seed.
TEST_F(Report, ARepeatOfARunIsNotAnotherSeed) {
  const auto write_config = [this](const std::string& run, int seed, int threads) {
    const nlohmann::json config = {{"task", {{"name", "copy"}, {"len_max", 16}, {"seed", 1}}},
                                   {"train", {{"lr", 0.001}, {"seed", seed}, {"threads", threads}}}};
    write_file_atomically((dir_ / run / "config.json").string(), config.dump());
  };
  write_config("asentmax-seed1", 1, 1);
  write_config("asentmax-seed2", 2, 1);
  write_config("asentmax-seed3", 3, 1);
  write_config("softmax-seed1", 1, 1);  // the same config and seed, another method: not a repeat
  fs::copy(dir_ / "asentmax-seed1", dir_ / "asentmax-seed1-backup");
  write_config("asentmax-seed1-backup", 1, 2);  // threads leave the model alone
  fs::remove(dir_ / "sweep.json");
  const CollectedRuns collected = collect_runs(dir_.string());
  const auto& runs = collected.runs;
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(
      collected.left_out,
      std::vector<std::string>{"asentmax-seed1-backup (a repeat of asentmax-seed1: same config and seeds)"});
  const std::string md = markdown_table(metric_table(runs, "exact_match"), 16);
  EXPECT_NE(md.find("| ASEntmax (entmax15 + asentmax) / nape | 100.0 ± 0.0 (n=3) |"), std::string::npos)
      << md;
  // A link to a run folder is that folder again: a repeat, not another seed.
  fs::create_directory_symlink(dir_ / "asentmax-seed2", dir_ / "asentmax-seed4");
  const std::vector<std::string> repeats = collect_runs(dir_.string()).left_out;
  EXPECT_NE(std::find(repeats.begin(), repeats.end(),
                      "asentmax-seed4 (a repeat of asentmax-seed2: same config and seeds)"),
            repeats.end());
}

// A run trained on --data files is not a seed of one trained on generated data.
TEST_F(Report, RunsOnOtherTrainingDataAreAGroupOfTheirOwn) {
  write_file_atomically(
      (dir_ / "asentmax-seed3" / "run.json").string(),
      R"({"run_id": "0123456789abcdef", "training_data": {"dir": "/data/copy", "hash": "0123456789abcdef"}})");
  const auto runs = collect_runs(dir_.string()).runs;
  EXPECT_EQ(runs[0].group.variant, "data=generated");
  EXPECT_EQ(runs[2].group.variant, "data=files 0123456789abcdef");
  const std::string md = markdown_table(metric_table(runs, "exact_match"), 16);
  EXPECT_NE(md.find("| ASEntmax (entmax15 + asentmax) / nape, data=generated | 100.0 ± 0.0 (n=2) |"),
            std::string::npos)
      << md;
}

// A report with nothing to show (no results in the decode mode asked for, or none on files) is a
// one-line error, not tables of dashes.
TEST_F(Report, NoResultsToShowIsAUserError) {
  ReportOptions options;
  options.gnuplot = "";
  options.decode = "greedy";
  EXPECT_THROW(write_report(dir_.string(), options), UserError);
  options.decode = "";
  options.on_files = true;
  EXPECT_THROW(write_report(dir_.string(), options), UserError);
  EXPECT_FALSE(fs::exists(dir_ / "report.md"));
}

// Runs trained on different lengths share no "Nx": lengths are shown without multiples rather
// than as multiples of the first run's length.
TEST_F(Report, MultiplesOnlyWhereTheRunsShareATrainingLength) {
  EXPECT_EQ(common_train_len_max(collect_runs(dir_.string()).runs), 16);
  ResultsFile other = read_results_file((dir_ / "softmax-seed1" / "results.json").string());
  other.train_len_max = 32;
  write_results_file((dir_ / "softmax-seed1" / "results.json").string(), other);
  const auto runs = collect_runs(dir_.string()).runs;
  EXPECT_EQ(common_train_len_max(runs), 0);
  const std::string md = markdown_table(metric_table(runs, "exact_match"), 0);
  EXPECT_NE(md.find("| method | 16 | 64 |"), std::string::npos) << md;
}

// A run evaluated at some lengths, resumed and evaluated at others holds results of two models:
// the report names them and marks the run instead of showing one row as if it were one model.
TEST_F(Report, ARunScoredWithTwoCheckpointsIsMarked) {
  ResultsFile file = read_results_file((dir_ / "asentmax-seed2" / "results.json").string());
  file.results["teacher_forced"][16].step = 200;
  file.results["teacher_forced"][64].step = 400;
  write_results_file((dir_ / "asentmax-seed2" / "results.json").string(), file);
  const auto runs = collect_runs(dir_.string()).runs;
  EXPECT_EQ(runs[0].mixed_checkpoints, "");
  EXPECT_EQ(runs[1].mixed_checkpoints, "step 200 at 16; step 400 at 64");
  ReportOptions options;
  options.gnuplot = "";
  const std::string md = write_report(dir_.string(), options);
  EXPECT_NE(
      md.find("Mixed checkpoints: run asentmax-seed2's lengths come from different models (step 200 at 16; "
              "step 400 at 64)"),
      std::string::npos)
      << md;
}

// Seeds are averaged only when scored with the same kind of checkpoint: a run evaluated at its
// best checkpoint, or one interrupted early and then evaluated, is a row of its own.
TEST_F(Report, RunsScoredWithOtherCheckpointsAreGroupsOfTheirOwn) {
  const auto set_checkpoint = [this](const std::string& run, int64_t step, const std::string& file) {
    ResultsFile results = read_results_file((dir_ / run / "results.json").string());
    for (auto& [length, entry] : results.results["teacher_forced"]) {
      entry.step = step;
      entry.checkpoint = (dir_ / run / "checkpoints" / file).string();
    }
    write_results_file((dir_ / run / "results.json").string(), results);
  };
  set_checkpoint("asentmax-seed1", 4, "step_00000004.pt");
  set_checkpoint("asentmax-seed2", 2, "step_00000002.pt");
  set_checkpoint("asentmax-seed3", 4, "step_00000004.pt");
  set_checkpoint("softmax-seed1", 3, "best.pt");
  const auto runs = collect_runs(dir_.string()).runs;
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].group.variant, "checkpoint=step 4");
  EXPECT_EQ(runs[1].group.variant, "checkpoint=step 2");
  EXPECT_EQ(runs[3].group.variant, "checkpoint=best");
  const std::string md = markdown_table(metric_table(runs, "exact_match"), 16);
  EXPECT_NE(md.find("| ASEntmax (entmax15 + asentmax) / nape, checkpoint=step 4 | 100.0 ± 0.0 (n=2) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| ASEntmax (entmax15 + asentmax) / nape, checkpoint=step 2 | 100.0 ± 0.0 (n=1) |"),
            std::string::npos)
      << md;
}

// A model resumed under a longer train.steps (its checkpoint's schedule history "2@0,4@2") learnt
// under another learning-rate schedule than one trained for 4 steps straight: not another seed.
TEST_F(Report, RunsTrainedUnderOtherSchedulesAreGroupsOfTheirOwn) {
  const auto set_schedule = [this](const std::string& run, const std::string& schedule) {
    ResultsFile results = read_results_file((dir_ / run / "results.json").string());
    for (auto& [length, entry] : results.results["teacher_forced"]) {
      entry.step = 4;
      entry.model =
          ModelRecord{(dir_ / run / "checkpoints/step_00000004.pt").string(), 4, "hash-" + run, schedule, ""};
    }
    write_results_file((dir_ / run / "results.json").string(), results);
  };
  set_schedule("asentmax-seed1", "4@0");
  set_schedule("asentmax-seed2", "2@0,4@2");
  set_schedule("asentmax-seed3", "4@0");
  set_schedule("softmax-seed1", "4@0");
  EXPECT_EQ(read_results_file((dir_ / "asentmax-seed2/results.json").string())
                .results["teacher_forced"][16]
                .model->schedule,
            "2@0,4@2");
  const auto runs = collect_runs(dir_.string()).runs;
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].group.variant, "schedule=4@0");
  EXPECT_EQ(runs[1].group.variant, "schedule=2@0,4@2");
  const std::string md = markdown_table(metric_table(runs, "exact_match"), 16);
  EXPECT_NE(md.find("| ASEntmax (entmax15 + asentmax) / nape, schedule=4@0 | 100.0 ± 0.0 (n=2) |"),
            std::string::npos)
      << md;
}

// How often a run logged and checkpointed, how many checkpoints it kept and how evaluation chunked
// its queries do not change the model: runs differing only there are seeds of one group.
TEST_F(Report, SettingsThatLeaveTheModelAloneAreAveragedOver) {
  const auto write_config = [this](const std::string& run, int seed, int every) {
    const nlohmann::json config = {{"task", {{"name", "copy"}, {"len_max", 16}}},
                                   {"model", {{"prefill_chunk", every * 64}}},
                                   {"train",
                                    {{"seed", seed},
                                     {"log_every", every},
                                     {"checkpoint_every", every * 10},
                                     {"keep_checkpoints", every}}}};
    write_file_atomically((dir_ / run / "config.json").string(), config.dump());
  };
  write_config("asentmax-seed1", 1, 1);
  write_config("asentmax-seed2", 2, 2);
  write_config("asentmax-seed3", 3, 3);
  write_config("softmax-seed1", 1, 1);
  const auto runs = collect_runs(dir_.string()).runs;
  ASSERT_EQ(runs.size(), 4u);
  for (const RunResults& run : runs) EXPECT_EQ(run.group.variant, "") << run.name;
}

// The sweep's runs without results are named with why, so that a mean is not read as one over
// every run the sweep asked for.
TEST_F(Report, NamesTheSweepsRunsThatHaveNoResults) {
  fs::create_directories(dir_ / "failed");
  std::ofstream(dir_ / "failed.failure.txt") << "train.lr must be > 0, got 0\nmore detail\n";
  nlohmann::json manifest = nlohmann::json::parse(read("sweep.json"));
  manifest["runs"].push_back({{"name", "failed"}, {"overrides", nlohmann::json::object()}});
  fs::create_directories(dir_ / "training");
  manifest["runs"].push_back({{"name", "training"}, {"overrides", nlohmann::json::object()}});
  write_file_atomically((dir_ / "sweep.json").string(), manifest.dump());
  EXPECT_EQ(collect_runs(dir_.string()).left_out,
            (std::vector<std::string>{"unfinished (no run folder)",
                                      "failed (failed: train.lr must be > 0, got 0; see failed.failure.txt)",
                                      "training (not evaluated: no results.json yet)"}));
  ReportOptions options;
  options.gnuplot = "";
  const std::string md = write_report(dir_.string(), options);
  EXPECT_NE(md.find("**Not in the tables: 3 run(s): unfinished (no run folder), failed (failed: "),
            std::string::npos)
      << md;
  EXPECT_TRUE(collect_runs((dir_ / "asentmax-seed1").string()).left_out.empty());
}

// A run with results in the other decode mode only is in none of the tables: it is named, and
// the heading counts the runs the tables show.
TEST_F(Report, ARunWithoutResultsInTheDecodeModeIsNamedNotCounted) {
  ResultsFile greedy = read_results_file((dir_ / "softmax-seed1/results.json").string());
  greedy.results["greedy"] = greedy.results["teacher_forced"];
  for (auto& [length, entry] : greedy.results["greedy"]) entry.decode = "greedy";
  greedy.results.erase("teacher_forced");
  write_results_file((dir_ / "softmax-seed1/results.json").string(), greedy);
  ReportOptions options;
  options.gnuplot = "";
  const std::string md = write_report(dir_.string(), options);
  EXPECT_NE(md.find("3 evaluated run(s); decode: teacher_forced"), std::string::npos) << md;
  EXPECT_NE(md.find("softmax-seed1 (no teacher_forced results)"), std::string::npos) << md;
}

// gnuplot leaves out a legend wider than the figure: a figure of long variant labels is made wide
// enough to hold them, one of short labels keeps a slide's 1000 x 600.
TEST_F(Report, APlotIsWideEnoughForItsLegend) {
  MetricTable table;
  table.lengths = {16, 32};
  const std::string long_variant(150, 'x');
  table.groups = {RunGroup{Method{"softmax", "none", "nape"}, ""},
                  RunGroup{Method{"entmax15", "asentmax", "nape"}, "train.lr=" + long_variant}};
  table.cells = {{Summary{50, 0, 1}, Summary{0, 0, 1}}, {Summary{90, 0, 1}, Summary{80, 0, 1}}};
  PlotAxes axes;
  axes.title = "copy: exact match (%)";
  ASSERT_FALSE(plot_table(table, dir_.string(), "wide", axes, ""));
  const auto size_at = read("wide.gp").find("size ") + 5;
  EXPECT_GE(std::stoi(read("wide.gp").substr(size_at)),
            11 * static_cast<int>(group_label(table.groups[1]).size()));
  table.groups[1].variant = "";
  ASSERT_FALSE(plot_table(table, dir_.string(), "narrow", axes, ""));
  EXPECT_NE(read("narrow.gp").find("size 1000,600"), std::string::npos) << read("narrow.gp");
  // Bars of several runs say what they are; a line of one run has none to explain.
  EXPECT_EQ(read("narrow.gp").find("bars:"), std::string::npos) << read("narrow.gp");
  table.cells[1] = {Summary{90, 2, 3}, Summary{80, 4, 3}};
  ASSERT_FALSE(plot_table(table, dir_.string(), "seeds", axes, ""));
  const std::string bars = "exact match (%)\\nbars: mean ± std over each line's runs (at most 3)\"";
  EXPECT_NE(read("seeds.gp").find("set title \"copy: " + bars), std::string::npos) << read("seeds.gp");
}

TEST_F(Report, WritesMarkdownCsvAndPlots) {
  ReportOptions options;
  options.gnuplot = "";
  std::string md = write_report(dir_.string(), options);
  EXPECT_NE(md.find("Plots skipped"), std::string::npos) << md;
  EXPECT_NE(read("report.md").find("## Token accuracy (%)"), std::string::npos);
  EXPECT_NE(read("exact_match.csv").find("softmax,none,nape,\"\",16,1x,50,0,1"), std::string::npos)
      << read("exact_match.csv");
  // A column pasted alone names its unit.
  EXPECT_NE(read("exact_match.csv").find(",length,multiple,mean_percent,std_percent,n\n"), std::string::npos);
  EXPECT_NE(read("nonzero_per_query.csv").find(",length,multiple,mean,std,n\n"), std::string::npos);
  EXPECT_NE(read("nonzero_per_query.gp").find("set logscale x 2"), std::string::npos);
  // A plot pasted into a slide names its task, metric, decode mode and data in its title; the y axis
  // holds the metric alone, which fits the plot's height.
  EXPECT_NE(
      read("exact_match.gp").find("set title \"copy: exact match (%), teacher-forced, on generated data"),
      std::string::npos)
      << read("exact_match.gp");
  EXPECT_NE(read("exact_match.gp").find("set ylabel \"exact match (%)\"\n"), std::string::npos);
  // Percentages stay on [0, 100] though a mean minus its std may fall below 0.
  EXPECT_NE(read("exact_match.gp").find("set yrange [0:100]"), std::string::npos);
  EXPECT_NE(read("nonzero_per_query.gp").find("set yrange [0:*]"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "exact_match.png"));

  const std::string gnuplot = find_gnuplot();
  if (gnuplot.empty()) GTEST_SKIP() << "gnuplot is not on PATH";
  options.gnuplot = "auto";
  md = write_report(dir_.string(), options);
  EXPECT_EQ(md.find("Plots skipped"), std::string::npos) << md;
  for (const char* name : {"exact_match", "token_accuracy", "nonzero_per_query"}) {
    EXPECT_GT(fs::file_size(dir_ / (std::string(name) + ".png")), 0u) << name;
    EXPECT_GT(fs::file_size(dir_ / (std::string(name) + ".svg")), 0u) << name;
  }
}

// Training curves from each run's log.jsonl: the loss windows and validations, mean ± std over
// the runs of a method at the steps all of them logged; a line that is not a log entry (a crash
// cut it short) is skipped.
TEST_F(Report, TrainingCurvesFromTheRunLogs) {
  const auto write_log = [this](const std::string& run, const std::string& text) {
    write_file_atomically((dir_ / run / "log.jsonl").string(), text);
  };
  write_log("asentmax-seed1",
            "{\"loss\":2.0,\"step\":50}\n{\"loss\":1.0,\"step\":100}\n"
            "{\"step\":100,\"val_exact_match\":0.5,\"val_loss\":1.1}\n{\"loss\":0.5,\"step\":150}\n");
  write_log("asentmax-seed2",
            "{\"loss\":4.0,\"step\":50}\n{\"loss\":3.0,\"step\":100}\n"
            "{\"step\":100,\"val_exact_match\":0.7,\"val_loss\":1.1}\n{\"loss\":0.");
  write_log("asentmax-seed3",
            "{\"loss\":3.0,\"step\":50}\n{\"loss\":2.0,\"step\":100}\n"
            "{\"step\":100,\"val_exact_match\":0.6,\"val_loss\":1.1}\n");
  // softmax-seed1 has no log: no row.
  ReportOptions options;
  options.gnuplot = "";
  const std::string md = write_report(dir_.string(), options);
  EXPECT_NE(md.find("## Training"), std::string::npos) << md;
  // Step 150 is in one run of three only.
  EXPECT_NE(md.find("| method | step 50 | step 100 |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| ASEntmax (entmax15 + asentmax) / nape | 3 ± 1 (n=3) | 2 ± 1 (n=3) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| ASEntmax (entmax15 + asentmax) / nape | 60.0 ± 10.0 (n=3) |"), std::string::npos)
      << md;
  EXPECT_EQ(md.find("Softmax (softmax + none) / nape | 0"), std::string::npos) << md;
  EXPECT_NE(read("training_loss.csv").find("entmax15,asentmax,nape,\"\",100,2,1,3"), std::string::npos)
      << read("training_loss.csv");
  EXPECT_NE(read("training_loss.gp").find("set logscale y"), std::string::npos);
  EXPECT_NE(read("training_loss.gp").find("set xlabel \"step\""), std::string::npos);
  EXPECT_NE(read("training_loss.gp").find("set title \"copy: training loss (log scale)\""),
            std::string::npos);
  EXPECT_NE(read("validation_exact_match.gp").find("set yrange [0:100]"), std::string::npos);
}

// A run without a config.json is grouped by what its results record of the model's training.
TEST_F(Report, ARunWithoutConfigJsonIsGroupedByItsResults) {
  for (const char* run : {"asentmax-seed1", "asentmax-seed2", "asentmax-seed3"}) {
    const std::string seed(1, std::string(run).back());  // its results' seed
    write_file_atomically((dir_ / run / "config.json").string(), "{\"train\": {\"seed\": " + seed + "}}");
  }
  ReportOptions options;
  options.gnuplot = "";
  const std::string md = write_report(dir_.string(), options);
  EXPECT_NE(md.find("| ASEntmax (entmax15 + asentmax) / nape | 100.0 ± 0.0 (n=3)"), std::string::npos) << md;
  EXPECT_NE(md.find("| Softmax (softmax + none) / nape | 50.0 ± 0.0 (n=1)"), std::string::npos) << md;
}

TEST_F(Report, EmptyFolderIsAUserError) {
  const fs::path empty = dir_ / "empty";
  fs::create_directories(empty);
  EXPECT_THROW(collect_runs(empty.string()), UserError);
}

}  // namespace
}  // namespace lengen
