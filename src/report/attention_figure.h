#pragma once
// `lengen attention`'s one figure for a slide: every run's maps of the chosen layers and heads
// side by side (runs as columns, layer/head as rows), drawn from the per-head data files beside it.
#include <cstdint>
#include <string>
#include <vector>

namespace lengen {

// One map of the figure: its data file (relative to the figure's folder), its title, and the
// pooled matrix's shape with the block each cell stands for.
struct FigurePanel {
  std::string data;
  std::string title;
  int64_t rows = 0, columns = 0;
  int64_t row_block = 1, column_block = 1;
};

// The gnuplot script of NAME.png and NAME.svg: `panels[row][column]`, one multiplot under
// `heading`, with one colour scale (log, from `lowest` to 1; 0 stays white) shared by all.
std::string attention_figure_script(const std::string& name, const std::string& heading,
                                    const std::vector<std::vector<FigurePanel>>& panels, double lowest,
                                    const std::string& terminal);

}  // namespace lengen
