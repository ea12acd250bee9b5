#include "attention_figure.h"

#include <spdlog/fmt/fmt.h>

#include <sstream>

#include "gnuplot_script.h"

namespace lengen {

namespace {

// Pixels per panel, and around the grid for the heading and the colour scale.
constexpr int64_t kPanelWidth = 420, kPanelHeight = 380;
constexpr int64_t kExtraWidth = 120, kExtraHeight = 70;

std::string panel_plot(const FigurePanel& panel, double lowest) {
  const auto rows = static_cast<double>(panel.rows), columns = static_cast<double>(panel.columns);
  const auto row_block = static_cast<double>(panel.row_block);
  const auto column_block = static_cast<double>(panel.column_block);
  std::ostringstream gp;
  gp << "set title " << gnuplot_lines(panel.title) << "\n"
     << fmt::format("set xrange [{}:{}]\n", -0.5 * column_block, (columns - 0.5) * column_block)
     << fmt::format("set yrange [{}:{}]\n", (rows - 0.5) * row_block, -0.5 * row_block)
     << fmt::format(
            "plot {} matrix using ($1*{}):($2*{}):($3 > 0 ? ($3 < {} ? {} : $3) : NaN) with image "
            "notitle\n",
            gnuplot_quoted(panel.data), panel.column_block, panel.row_block, lowest, lowest);
  return gp.str();
}

std::string figure_body(const std::string& heading, const std::vector<std::vector<FigurePanel>>& panels,
                        double lowest) {
  const size_t columns = panels.empty() ? 0 : panels.front().size();
  std::ostringstream gp;
  gp << "set logscale cb\nset cbrange [" << lowest << ":1]\nset format cb '%.0e'\n"
     << "set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')\n"
     << "set tics out\nset border linecolor 'gray40'\n"
     << "set xlabel 'key: input position'\nset ylabel 'query: target symbol'\n"
     << "set multiplot layout " << panels.size() << "," << columns << " title " << gnuplot_quoted(heading)
     << "\n";
  for (const auto& row : panels) {
    for (size_t c = 0; c < row.size(); ++c) {
      // One colour scale for the figure: beside the last column only, with room for its tic labels.
      gp << (c + 1 == row.size() ? "set colorbox\nset rmargin 10\n" : "unset colorbox\nset rmargin 3\n")
         << panel_plot(row[c], lowest);
    }
  }
  gp << "unset multiplot\n";
  return gp.str();
}

}  // namespace

std::string attention_figure_script(const std::string& name, const std::string& heading,
                                    const std::vector<std::vector<FigurePanel>>& panels, double lowest,
                                    const std::string& terminal) {
  const size_t columns = panels.empty() ? 0 : panels.front().size();
  const std::string size = fmt::format("{},{}", kExtraWidth + kPanelWidth * static_cast<int64_t>(columns),
                                       kExtraHeight + kPanelHeight * static_cast<int64_t>(panels.size()));
  const std::string body = figure_body(heading, panels, lowest);
  std::ostringstream gp;
  gp << "# Every run's attention maps side by side (columns: runs; rows: layer / head); run `gnuplot " << name
     << ".gp` in this folder.\n"
     << "set terminal " << terminal << " noenhanced size " << size << "\nset output '" << name << ".png'\n"
     << body << "set terminal svg noenhanced size " << size << "\nset output '" << name << ".svg'\n"
     << body;
  return gp.str();
}

}  // namespace lengen
