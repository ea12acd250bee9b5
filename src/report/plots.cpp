// Plots through gnuplot, one line per method; the data and script stay beside the images to restyle.
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "lengen/atomic_write.h"
#include "lengen/errors.h"
#include "lengen/output_files.h"
#include "report_parts.h"

namespace lengen {

namespace {

bool run_quietly(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

// A slide's width, with the legend's rows below the data; wider and taller when the legend needs
// it, since gnuplot leaves out a legend that does not fit (long variant labels).
std::string plot_size(const std::vector<std::string>& labels) {
  size_t longest = 0;
  for (const std::string& label : labels) longest = std::max(longest, label.size());
  // gnuplot reserves about 11 pixels a character of its default font, plus the line sample.
  const size_t entry_width = 11 * longest + 160;
  const size_t columns = 2 * entry_width <= 1000 ? 2 : 1;
  const size_t rows = (labels.size() + columns - 1) / columns;
  return std::to_string(std::max<size_t>(1000, entry_width + 40)) + "," +
         std::to_string(std::max<size_t>(600, 460 + 22 * rows));
}

// Okabe and Ito's colours, told apart also by readers with colour-blindness, then black.
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000", "#F0E442"};

// The line's colour: its label's place among `keys`, or for a label not among them (a group
// split further in one plot) one chosen by its text, the same on every machine.
std::string line_colour(const std::string& label, const std::vector<std::string>& keys) {
  size_t index = static_cast<size_t>(std::find(keys.begin(), keys.end(), label) - keys.begin());
  if (index == keys.size()) {
    index = 0;
    for (unsigned char c : label) index = index * 31 + c;
  }
  return kPalette[index % (sizeof kPalette / sizeof kPalette[0])];
}

// Everything but the lines: title, axes and their labels with room for them, the legend outside
// the data, and the training length as a dashed vertical line.
std::string plot_frame(const PlotAxes& axes) {
  std::ostringstream frame;
  frame << "set title " << gnuplot_quoted(axes.title) << "\n"
        << (axes.log_x ? "set logscale x 2\n" : "")
        << (axes.log_y ? "set logscale y 10\nset format y '%g'\nset mytics 10\nset grid mytics\n" : "")
        // The legend below the data, two methods a row: long method labels beside it would
        // squeeze the plot to half the figure's width.
        << "set grid\nset key outside below center horizontal maxcols 2\n"
        // Room on the left for the y tics and label, which gnuplot would otherwise cut.
        << "set lmargin 12\n"
        << "set ylabel " << gnuplot_quoted(axes.y_label) << "\nset yrange " << axes.y_range << "\n";
  // The training length is named under the axis: a label inside the plot sat on the first points.
  const std::string marked =
      axes.train_length > 0 ? " (dashed: training length " + std::to_string(axes.train_length) + ")" : "";
  frame << "set xlabel " << gnuplot_quoted(axes.x_label + marked) << "\n";
  if (axes.train_length > 0) {
    // Room left and right of the data, so that the training length, often the first length
    // evaluated, is a line of its own and not the border.
    frame << "set offsets graph 0.04, graph 0.04, 0, 0\n"
          << "set arrow 1 from " << axes.train_length << ", graph 0 to " << axes.train_length
          << ", graph 1 nohead dashtype 2 linewidth 1.5 linecolor rgb '#555555'\n";
  }
  return frame.str();
}

}  // namespace

std::string gnuplot_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text)
    out += c == '\n' ? std::string("\\n") : (c == '"' || c == '\\' ? "\\" : "") + std::string(1, c);
  return out + "\"";
}

// pngcairo draws better; the plain png terminal is the fallback some gnuplot builds have.
std::string png_terminal(const std::string& gnuplot) {
  return run_quietly(shell_word(gnuplot) + " -e 'set terminal pngcairo'") ? "pngcairo" : "png";
}

bool run_gnuplot(const std::string& gnuplot, const std::string& dir, const std::string& name) {
  const bool ok = run_quietly("cd " + shell_word(dir) + " && " + shell_word(gnuplot) + " " + name + ".gp");
  if (!ok) spdlog::warn("gnuplot failed on {}/{}.gp", dir, name);
  return ok;
}

std::string find_gnuplot() { return run_quietly("command -v gnuplot") ? "gnuplot" : ""; }

bool plot_table(const MetricTable& table, const std::string& dir, const std::string& name,
                const PlotAxes& axes, const std::string& gnuplot) {
  // gnuplot writes the images: they are claimed with the data and the script.
  claim_output_files(dir, {name + ".dat", name + ".gp", name + ".png", name + ".svg"});
  // One block per group (gnuplot's "index"), rows: x mean std.
  std::ostringstream data;
  std::vector<size_t> plotted;
  for (size_t m = 0; m < table.groups.size(); ++m) {
    std::ostringstream block;
    for (size_t l = 0; l < table.lengths.size(); ++l) {
      const auto& cell = table.cells[m][l];
      if (cell) block << fmt::format("{} {:.6g} {:.6g}\n", table.lengths[l], cell->mean, cell->std);
    }
    if (block.str().empty()) continue;
    if (!plotted.empty()) data << "\n\n";
    data << "# " << group_label(table.groups[m]) << "\n" << block.str();
    plotted.push_back(m);
  }
  // What the columns are, for a reader of the data file alone.
  write_file_atomically(dir + "/" + name + ".dat",
                        "# " + axes.x_label + " | " + axes.title + ": mean | std\n" + data.str());
  if (plotted.empty()) return false;

  std::vector<std::string> labels;
  for (size_t m : plotted) labels.push_back(group_label(table.groups[m]));
  const std::string size = plot_size(labels);
  // A figure pasted alone says what its bars are.
  int64_t most_runs = 1;
  for (const auto& row : table.cells)
    for (const auto& cell : row) most_runs = std::max(most_runs, cell ? cell->n : 1);
  PlotAxes framed = axes;
  if (axes.error_bars && most_runs > 1)
    framed.title += fmt::format("\nbars: mean ± std over each line's runs (at most {})", most_runs);
  std::ostringstream script;
  script << "# " << axes.title << " against " << axes.x_label << "; run `gnuplot " << name
         << ".gp` in this folder.\n"
         << "set terminal " << (gnuplot.empty() ? "pngcairo" : png_terminal(gnuplot)) << " noenhanced size "
         << size << "\n"
         << "set output '" << name << ".png'\n"
         << plot_frame(framed) << "plot ";
  // Each line has its own hollow marker (about ten a line), so that lines lying on each other (two
  // methods at 0%) both show, and a line of one point (a short run's one logged loss) is drawn.
  const std::string style =
      axes.error_bars ? " using 1:2:3 with yerrorlines pointsize 1.3 pointtype "
                      : fmt::format(" using 1:2 with linespoints pointsize 1.3 pointinterval {} pointtype ",
                                    std::max<size_t>(1, table.lengths.size() / 10));
  constexpr int kHollowMarkers[] = {6, 4, 8, 10, 12, 14, 2, 1};
  for (size_t i = 0; i < plotted.size(); ++i) {
    const std::string& label = labels[i];
    script << (i ? ", \\\n     " : "") << "'" << name << ".dat' index " << i << style
           << kHollowMarkers[i % (sizeof kHollowMarkers / sizeof kHollowMarkers[0])]
           << " linewidth 2 linecolor rgb '" << line_colour(label, axes.colour_keys) << "' title "
           << gnuplot_quoted(label);
  }
  script << "\nset terminal svg noenhanced name '" << name << "' size " << size << "\nset output '" << name
         << ".svg'\nreplot\n";
  write_file_atomically(dir + "/" + name + ".gp", script.str());
  return !gnuplot.empty() && run_gnuplot(gnuplot, dir, name);
}

}  // namespace lengen
