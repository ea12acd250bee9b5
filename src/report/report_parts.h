#pragma once
// What the files of src/report/ share: gnuplot figures and the report's training section.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lengen/report.h"

namespace lengen {

// A plot's title, axes and colours. `y_range` is gnuplot's, e.g. "[0:100]".
struct PlotAxes {
  std::string title;  // a figure pasted into a slide names its task and metric
  std::string x_label = "source length";
  std::string y_label;
  std::string y_range = "[*:*]";
  bool log_x = true;  // base 2
  bool log_y = false;
  bool error_bars = true;    // mean ± std; else a line through the means
  int64_t train_length = 0;  // marked by a vertical line; 0: none
  // The group labels of the whole report in order: each keeps one colour in every plot.
  std::vector<std::string> colour_keys;
};

// Writes NAME.dat and NAME.gp into `dir`, one line per group over table.lengths as x; with
// `gnuplot`, runs it there to make NAME.png and NAME.svg. Returns whether they were drawn.
bool plot_table(const MetricTable& table, const std::string& dir, const std::string& name,
                const PlotAxes& axes, const std::string& gnuplot);

// A single-quoted gnuplot string: quotes are doubled.
std::string gnuplot_quoted(const std::string& text);
// A gnuplot string expression of several lines ('A' . "\n" . 'B').
std::string gnuplot_lines(const std::string& text);
// pngcairo where this gnuplot has it, else png.
std::string png_terminal(const std::string& gnuplot);
// Runs `gnuplot NAME.gp` in `dir`, quietly; false (with a warning) when it fails.
bool run_gnuplot(const std::string& gnuplot, const std::string& dir, const std::string& name);

// Per group, the mean ± std over its runs at each x of `values_of(run index)`; a run without
// values is in no group. With `in_all_runs`, only where every run of the group has a value (a
// training curve cut short adds no point where it has none).
MetricTable values_table(const std::vector<RunResults>& runs, const std::string& metric,
                         const std::function<std::map<int64_t, double>(size_t)>& values_of, bool in_all_runs);

// A table cell: "mean ± std (n=N)" with `digits` after the point (or, `significant`, in all), or
// "-" for none.
std::string summary_text(const std::optional<Summary>& cell, int digits, bool significant);

// A markdown table of `table`'s `columns` under `headers`, one row per group; cells as summary_text.
std::string markdown_rows(const MetricTable& table, const std::vector<std::string>& headers,
                          const std::vector<size_t>& columns, int digits, bool significant);

// The training loss and validation exact match of each run's log.jsonl against the step, as mean
// ± std over the runs of each group: tables at a few steps, CSV and plots in `out_dir`. "" when no
// run has a log. `style`: the report's colours and title.
std::string training_section(const std::vector<RunResults>& runs, const std::string& out_dir,
                             const std::string& gnuplot, const PlotAxes& style);

}  // namespace lengen
