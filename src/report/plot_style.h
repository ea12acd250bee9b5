#pragma once
// How the report's figures look alike: one title line for all of them, and one colour per
// method across every plot (a fixed palette, keyed by the method's label).
#include <string>
#include <vector>

#include "lengen/report.h"

namespace lengen {

// The style every plot of a report of `runs` shares: its title ("copy, trained on lengths 8-16,
// 16000 steps, 3 seeds", from the runs' config.json), the training length to mark, and the
// runs' group labels in order, which fix each one's colour.
PlotAxes report_plot_style(const std::vector<RunResults>& runs, int64_t train_len_max);

// The colour (gnuplot's "#rrggbb") of the line labelled `label`: its place among `keys` in the
// palette, or for a label not among them (a group split further in one plot) one chosen by its text.
std::string line_colour(const std::string& label, const std::vector<std::string>& keys);

}  // namespace lengen
