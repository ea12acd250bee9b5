#pragma once
// Reports across runs: results.json of a sweep's runs (or one run) grouped by method and any other
// config difference, as mean ± std over each group's seeds per length, in report.md, CSV and plots.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lengen/results_file.h"

namespace lengen {

// "ASEntmax (entmax15 + asentmax) / nape"; combinations without a common name read
// "sparsemax + learned / rope".
std::string method_label(const Method& method);

// What a report averages over: runs of one method whose configs differ only in seeds and in
// settings that leave the trained model alone.
struct RunGroup {
  Method method;
  // The other config keys on which its runs differ from the rest, "train.lr=0.002"; "" if none.
  std::string variant;
  bool operator==(const RunGroup& other) const { return method == other.method && variant == other.variant; }
};

// method_label, then the variant: "Softmax (softmax + none) / nape, train.lr=0.002".
std::string group_label(const RunGroup& group);

struct RunResults {
  std::string name;
  std::string dir;   // the run folder (its log.jsonl has the training curves)
  std::string task;  // task.name
  RunGroup group;
  int64_t train_len_max = 0;
  std::map<int64_t, ResultEntry> results;  // of the decode mode reported, by length
  // "step 200 at 64; step 400 at 256" when entries come from several checkpoints; "" otherwise.
  std::string mixed_checkpoints;
  std::string trained_by;  // run.json's: the build and machine; "" for runs of older builds
};

struct CollectedRuns {
  std::vector<RunResults> runs;
  std::string decode;  // the decode mode reported
  // Runs not in the tables, each as "NAME (why)".
  std::vector<std::string> left_out;
};

// The runs DIR/sweep.json lists, or DIR itself, or every DIR/*/results.json; `decode` "" is
// teacher_forced when any run has it. No run to show throws UserError.
CollectedRuns collect_runs(const std::string& dir, bool on_files = false, const std::string& decode = "");

struct Summary {
  double mean = 0.0;
  double std = 0.0;  // sample standard deviation (n - 1); 0 for a single value
  int64_t n = 0;
};
Summary summarize_values(const std::vector<double>& values);

// One metric per group and x (a length, or a step for the training curves).
struct MetricTable {
  std::string metric;
  std::vector<RunGroup> groups;                            // in order of first appearance
  std::vector<int64_t> lengths;                            // ascending
  std::vector<std::vector<std::optional<Summary>>> cells;  // [group][length]
};
// `metric`: a name ResultEntry::metric knows, such as exact_match or "attention_on_target/0/best";
// exact_match, token_accuracy and answer_accuracy as %.
MetricTable metric_table(const std::vector<RunResults>& runs, const std::string& metric);

// The training length every run shares, or 0 when they differ (multiples are then not shown).
int64_t common_train_len_max(const std::vector<RunResults>& runs);

// `train_len_max` 0: lengths without their multiples.
std::string markdown_table(const MetricTable& table, int64_t train_len_max);
// Long format: one line per method and x; x = "length" adds its multiple of train_len_max.
std::string csv_table(const MetricTable& table, int64_t train_len_max,
                      const std::string& x_column = "length");

// gnuplot on PATH, or "" when there is none.
std::string find_gnuplot();

struct ReportOptions {
  std::string out_dir;           // default: DIR
  std::string decode;            // default: teacher_forced where a run has it, else greedy
  std::string gnuplot = "auto";  // "auto": find_gnuplot(); "": no plots
  bool on_files = false;         // report the results on --data files, not on generated data
};

// Writes report.md, a CSV table and a plot per metric, and the training curves where the runs
// have a log.jsonl. Returns report.md's text.
std::string write_report(const std::string& dir, const ReportOptions& options);

}  // namespace lengen
