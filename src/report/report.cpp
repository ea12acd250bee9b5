// report.md, the CSV tables and the plots for a sweep folder or one run.
#include <spdlog/spdlog.h>

#include <filesystem>
#include <sstream>

#include "lengen/errors.h"
#include "lengen/report.h"
#include "lengen/run_folder.h"
#include "report/attention_on_target_report.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

struct MetricSpec {
  const char* metric;
  const char* title;
  const char* y_label;
  const char* y_range;  // gnuplot's: percentages stay in [0, 100] even where mean - std is not
};

constexpr MetricSpec kMetrics[] = {
    {"exact_match", "Exact match (%)", "exact match (%)", "[0:100]"},
    {"token_accuracy", "Token accuracy (%)", "token accuracy (%)", "[0:100]"},
    {"nonzero_per_query", "Attention: nonzero keys per query", "nonzero keys per query", "[0:*]"},
};

}  // namespace

std::string write_report(const std::string& dir, const ReportOptions& options) {
  const std::vector<RunResults> runs = collect_runs(dir);
  const std::string out_dir = options.out_dir.empty() ? dir : options.out_dir;
  const std::string decode = options.decode.empty() ? default_decode(runs) : options.decode;
  if (decode != "teacher_forced" && decode != "greedy") {
    throw UserError("unknown decode mode '" + decode + "' (expected teacher_forced or greedy)");
  }
  const std::string gnuplot = options.gnuplot == "auto" ? find_gnuplot() : options.gnuplot;
  fs::create_directories(out_dir);
  // Multiples are of the first run's training length; a sweep normally shares it.
  const int64_t train_len_max = runs.front().train_len_max;

  std::ostringstream md;
  md << "# Length generalization: " << dir << "\n\n"
     << runs.size() << " evaluated run(s); decode: " << decode << "; trained on source lengths up to "
     << train_len_max << ". Cells: mean ± std over the runs (seeds) of each method, n = runs.\n\n";
  bool all_plotted = true;
  for (const MetricSpec& spec : kMetrics) {
    const MetricTable table = metric_table(runs, decode, spec.metric);
    md << "## " << spec.title << "\n\n" << markdown_table(table, train_len_max) << "\n";
    write_file_atomically(out_dir + "/" + spec.metric + ".csv", csv_table(table, train_len_max));
    const bool plotted = plot_metric(table, out_dir, spec.metric, spec.y_label, spec.y_range, gnuplot);
    if (plotted) md << "![" << spec.title << "](" << spec.metric << ".png)\n\n";
    all_plotted = all_plotted && plotted;
  }
  md << attention_on_target_section(runs, decode, out_dir, gnuplot, train_len_max);
  if (gnuplot.empty()) {
    md << "Plots skipped: gnuplot is not on PATH. The data (*.dat) and scripts (*.gp) are written; "
          "run `gnuplot NAME.gp` here to draw them.\n";
  } else if (!all_plotted) {
    md << "Some plots could not be drawn (no data or gnuplot failed); see the *.gp scripts.\n";
  }
  md << "\nRuns: ";
  for (size_t i = 0; i < runs.size(); ++i) md << (i ? ", " : "") << runs[i].name;
  md << "\n";
  write_file_atomically(out_dir + "/report.md", md.str());
  return md.str();
}

}  // namespace lengen
