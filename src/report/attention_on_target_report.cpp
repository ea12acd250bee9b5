// Attention on the target across runs: results.json entries' `attention_on_target`, per layer.
#include "attention_on_target_report.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "lengen/atomic_write.h"
#include "lengen/output_files.h"

namespace lengen {

namespace {

struct Measured {
  size_t layers = 0;
  std::set<int64_t> samples;         // samples per length, as recorded
  std::vector<std::string> unknown;  // runs whose task names no answering key
};

Measured survey(const std::vector<RunResults>& runs, const std::string& decode) {
  Measured measured;
  for (const RunResults& run : runs) {
    const auto by_decode = run.results.find(decode);
    if (by_decode == run.results.end()) continue;
    bool unknown = false;
    for (const auto& [length, entry] : by_decode->second) {
      if (!entry.attention_on_target) continue;
      const TargetAttention& target = *entry.attention_on_target;
      if (!target.known) {
        unknown = true;
        continue;
      }
      measured.layers = std::max(measured.layers, target.layers.size());
      measured.samples.insert(target.samples);
    }
    if (unknown) measured.unknown.push_back(run.name);
  }
  return measured;
}

}  // namespace

std::string attention_on_target_section(const std::vector<RunResults>& runs, const std::string& decode,
                                        const std::string& out_dir, const std::string& gnuplot,
                                        const PlotAxes& style) {
  const int64_t train_len_max = style.train_length;
  const Measured measured = survey(runs, decode);
  if (measured.layers == 0 && measured.unknown.empty()) return "";
  std::ostringstream md;
  md << "## Attention on the target\n\n";
  if (measured.layers > 0) {
    std::string samples;
    for (int64_t count : measured.samples) samples += (samples.empty() ? "" : ", ") + std::to_string(count);
    md << "At each query that predicts a target symbol, the attention weight on the input position(s) that "
          "answer "
          "it (docs/method.md, \"Attention on the target\"), averaged over the target symbols of "
       << samples
       << " evaluation sample(s) per length: the best head of each layer, and the mean over the layer's "
          "heads. "
          "Cells: mean ± std over the runs of each group.\n\n";
  }
  for (size_t layer = 0; layer < measured.layers; ++layer) {
    for (const char* kind : {"best", "mean"}) {
      const std::string title =
          fmt::format("Layer {}: {}", layer, kind == std::string("best") ? "best head" : "mean over heads");
      const std::string name = fmt::format("attention_on_target_layer{}_{}", layer, kind);
      const MetricTable table =
          metric_table(runs, decode, fmt::format("attention_on_target/{}/{}", layer, kind));
      md << "### " << title << "\n\n" << markdown_table(table, train_len_max) << "\n";
      write_output_file(out_dir, name + ".csv", csv_table(table, train_len_max));
      const std::string y_label = fmt::format("weight on the answering keys, layer {} ({})", layer,
                                              kind == std::string("best") ? "best head" : "mean over heads");
      if (plot_metric(table, out_dir, name, y_label, "[0:1]", gnuplot, style)) {
        md << "![Attention on the target, " << title << "](" << name << ".png)\n\n";
      }
    }
  }
  if (!measured.unknown.empty()) {
    md << "No known target (no evaluated target symbol has a key that answers it): ";
    for (size_t i = 0; i < measured.unknown.size(); ++i) md << (i ? ", " : "") << measured.unknown[i];
    md << ".\n\n";
  }
  return md.str();
}

}  // namespace lengen
