#pragma once
// Reports across runs: the results.json of every run of a sweep (or one run) grouped by method
// (normalizer + scaling + positions) and by any other config difference between the runs, as
// mean ± std over the runs of each group (seeds), per evaluation length. Written as report.md, CSV files and
// gnuplot plots (PNG and SVG).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lengen/results_file.h"

namespace lengen {

// "ASEntmax (entmax15 + asentmax) / nape"; combinations without a common name read
// "sparsemax + learned / rope".
std::string method_label(const Method& method);

// What a report averages over: the runs of one method whose configs differ only in their seeds
// and in settings that leave the trained model alone (threads, device, evaluation, description).
struct RunGroup {
  Method method;
  std::string
      variant;  // the other config keys on which its runs differ from the rest, "train.lr=0.002"; "" if none
  bool operator==(const RunGroup& other) const { return method == other.method && variant == other.variant; }
};

// method_label, then the variant: "Softmax (softmax + none) / nape, train.lr=0.002".
std::string group_label(const RunGroup& group);

struct RunResults {
  std::string name;
  std::string dir;  // the run folder (its log.jsonl has the training curves)
  RunGroup group;
  int64_t train_len_max = 0;
  ResultsByDecode results;  // results.json's "results" (or "results_on_files")
  // Set when its entries were measured with more than one checkpoint: "step 200 at 64, 128; step
  // 400 at 256". A row mixing models is marked, never averaged silently.
  std::string mixed_checkpoints;
  // Set when its greedy entries were decoded under more than one eval.decode_cap: "1.5 at 4;
  // 2.2 at 8".
  std::string mixed_decode_caps;
};

// The runs under `dir`: the runs listed in DIR/sweep.json that have a results.json, or DIR
// itself when it holds a results.json, or else every DIR/*/results.json. None throws UserError.
// Each run's group comes from its config.json beside results.json (the method alone without one).
// `on_files`: the results on --data files instead of those on generated data. A run whose config
// repeats an earlier run's on every key that shapes the model, seeds included (a copied run
// folder, a config trained twice), is left out and named in `repeats`, "NAME (a repeat of
// FIRST: ...)": it is the same measurement, not another seed. A run without results of the kind
// asked for is left out and named there too; none with any throws UserError.
// With `decode`, what a run is labelled and grouped by (its checkpoints, schedules, decode caps)
// is read from that decode mode's results alone: greedy results of another checkpoint do not
// relabel its teacher-forced row, and a run without that mode's results is left out and named
// (unless no run has them).
std::vector<RunResults> collect_runs(const std::string& dir, bool on_files = false,
                                     std::vector<std::string>* left_out = nullptr,
                                     const std::string& decode = "");

// The runs DIR/sweep.json lists that have no results.json, each as "NAME (why)": failed (the first
// line of NAME.failure.txt), not evaluated yet, or without a run folder. Empty for a folder that is
// not a sweep's.
std::vector<std::string> runs_left_out(const std::string& dir);

// For a folder of runs or a sweep's folder (not a run's): its sub-folders that are not runs (nor
// runs the sweep lists) but hold runs a few levels down (a sweep folder among runs, or inside
// another sweep's), each as "NAME (lengen report PATH)". Their runs are not read into this report.
std::vector<std::string> folders_of_runs_below(const std::string& dir);

// The decode mode to report: teacher_forced when any run has it, else greedy.
std::string default_decode(const std::vector<RunResults>& runs);

struct Summary {
  double mean = 0.0;
  double std = 0.0;  // sample standard deviation (n - 1); 0 for a single value
  int64_t n = 0;
};
Summary summarize_values(const std::vector<double>& values);

// One metric per group and length. `metric`: a name ResultEntry::metric knows, such as
// exact_match or token_accuracy (both as %), nonzero_per_query or "attention_on_target/0/best".
struct MetricTable {
  std::string metric;
  std::vector<RunGroup> groups;                            // in order of first appearance
  std::vector<int64_t> lengths;                            // ascending
  std::vector<std::vector<std::optional<Summary>>> cells;  // [group][length]
};
MetricTable metric_table(const std::vector<RunResults>& runs, const std::string& decode,
                         const std::string& metric);

// A table cell: "mean ± std (n=N)" with `digits` after the point (or, `significant`, in all), or
// "-" for none.
std::string summary_text(const std::optional<Summary>& cell, int digits, bool significant = false);

// The training length every run shares, or 0 when they differ (multiples are then not shown).
int64_t common_train_len_max(const std::vector<RunResults>& runs);

// `train_len_max` 0: lengths without their multiples.
std::string markdown_table(const MetricTable& table, int64_t train_len_max);
// Long format: one line per method and length, with the length's multiple of train_len_max; with
// another `x_column` (a table over steps, say) one line per method and x, without a multiple.
std::string csv_table(const MetricTable& table, int64_t train_len_max,
                      const std::string& x_column = "length");

// gnuplot on PATH, or "" when there is none.
std::string find_gnuplot();

// A plot's axes. `y_range` is gnuplot's, e.g. "[0:100]".
struct PlotAxes {
  std::string x_label = "source length";
  std::string y_label;
  std::string y_range = "[*:*]";
  bool log_x = true;  // base 2
  bool log_y = false;
  bool error_bars = true;  // mean ± std; else a line through the means
  // What a figure pasted into a slide says of itself (src/report/plot_style.h): a title (task,
  // training length, steps, seeds), the training length marked by a vertical line (0: none, for
  // plots against the step), and one colour per method label in every plot of a report: the
  // labels of the whole report in order, each keeping its place in the palette.
  std::string title = {};
  int64_t train_length = 0;
  std::vector<std::string> colour_keys = {};
};

// Writes the gnuplot data file and script for `table` into `dir` (NAME.dat, NAME.gp), one line
// per method over table.lengths as x; when `gnuplot` is given runs it there to make NAME.png and
// NAME.svg. Returns false if it failed.
bool plot_table(const MetricTable& table, const std::string& dir, const std::string& name,
                const PlotAxes& axes, const std::string& gnuplot);
// The same against source length, titled and coloured as `style` says.
bool plot_metric(const MetricTable& table, const std::string& dir, const std::string& name,
                 const std::string& y_label, const std::string& y_range, const std::string& gnuplot,
                 const PlotAxes& style = {});

struct ReportOptions {
  std::string out_dir;           // default: DIR
  std::string decode;            // default: default_decode
  std::string gnuplot = "auto";  // "auto": find_gnuplot(); "": no plots
  bool on_files = false;         // report the results on --data files, not on generated data
};

// Writes report.md, exact_match.csv, token_accuracy.csv, nonzero_per_query.csv, the attention on
// the target and the training curves (training_loss.csv, validation_exact_match.csv) where the
// runs have them, and the plots.
// Returns report.md's text.
std::string write_report(const std::string& dir, const ReportOptions& options);

}  // namespace lengen
