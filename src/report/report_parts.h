#pragma once
// What the files of src/report/ share: gnuplot figures and the report's training section.
#include <cstdint>
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

// A double-quoted gnuplot string, its lines joined by \n.
std::string gnuplot_quoted(const std::string& text);
// pngcairo where this gnuplot has it, else png.
std::string png_terminal(const std::string& gnuplot);
// Runs `gnuplot NAME.gp` in `dir`, quietly; false (with a warning) when it fails.
bool run_gnuplot(const std::string& gnuplot, const std::string& dir, const std::string& name);

// The training loss and validation exact match of each run's log.jsonl against the step, per group;
// "" when no run has a log.
std::string training_section(const std::vector<RunResults>& runs, const std::string& out_dir,
                             const std::string& gnuplot, const PlotAxes& style);

}  // namespace lengen
