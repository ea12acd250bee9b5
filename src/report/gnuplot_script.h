#pragma once
// What every gnuplot figure of the report needs: quoting, the PNG terminal, running a script.
#include <string>

namespace lengen {

// A single-quoted gnuplot string: quotes are doubled.
std::string gnuplot_quoted(const std::string& text);

// A gnuplot string expression of several lines ('A' . "\n" . 'B'): a long title does not fit on one.
std::string gnuplot_lines(const std::string& text);

// pngcairo where this gnuplot has it, else png.
std::string png_terminal(const std::string& gnuplot);

// Runs `gnuplot NAME.gp` in `dir`, quietly; false (with a warning) when it fails.
bool run_gnuplot(const std::string& gnuplot, const std::string& dir, const std::string& name);

}  // namespace lengen
