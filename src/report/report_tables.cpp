// Runs -> per-method tables of mean ± std over runs, as markdown and CSV; and the training
// curves across runs, from the windows and validations a run's trainer appends to log.jsonl.
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "lengen/attention_choices.h"
#include "lengen/output_files.h"
#include "report_parts.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

std::string multiple_text(int64_t length, int64_t train_len_max) {
  if (train_len_max <= 0) return "";
  return fmt::format("{:g}x", static_cast<double>(length) / static_cast<double>(train_len_max));
}

bool is_percent(const std::string& metric) {
  return metric == "exact_match" || metric == "token_accuracy" || metric == "answer_accuracy" ||
         metric == "validation_exact_match";
}

std::string summary_text(const std::optional<Summary>& cell, int digits, bool significant) {
  if (!cell) return "-";
  if (significant)
    return fmt::format("{:.{}g} ± {:.{}g} (n={})", cell->mean, digits, cell->std, digits, cell->n);
  return fmt::format("{:.{}f} ± {:.{}f} (n={})", cell->mean, digits, cell->std, digits, cell->n);
}

// A markdown table of `table`'s `columns` under `headers`, one row per group.
std::string markdown_rows(const MetricTable& table, const std::vector<std::string>& headers,
                          const std::vector<size_t>& columns, int digits, bool significant) {
  std::string out = "| method |";
  for (const std::string& header : headers) out += " " + header + " |";
  out += "\n|---|";
  for (size_t i = 0; i < headers.size(); ++i) out += "---|";
  out += "\n";
  for (size_t m = 0; m < table.groups.size(); ++m) {
    out += "| " + group_label(table.groups[m]) + " |";
    for (size_t i : columns) out += " " + summary_text(table.cells[m][i], digits, significant) + " |";
    out += "\n";
  }
  return out;
}

// Per group, the mean ± std over its runs at each x of `values_of[run]`; with `in_all_runs`, only
// where every run of the group has a value.
MetricTable values_table(const std::vector<RunResults>& runs, const std::string& metric,
                         const std::vector<std::map<int64_t, double>>& values_of, bool in_all_runs) {
  MetricTable table;
  table.metric = metric;
  std::vector<std::map<int64_t, std::vector<double>>> values;  // [group][x]
  std::vector<size_t> group_runs;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::map<int64_t, double>& of_run = values_of[r];
    if (of_run.empty()) continue;
    const auto m = static_cast<size_t>(std::find(table.groups.begin(), table.groups.end(), runs[r].group) -
                                       table.groups.begin());
    if (m == table.groups.size()) {
      table.groups.push_back(runs[r].group);
      values.emplace_back();
      group_runs.push_back(0);
    }
    ++group_runs[m];
    for (const auto& [x, value] : of_run) values[m][x].push_back(value);
  }
  const auto shown = [&](size_t m, const std::vector<double>& cell) {
    return !in_all_runs || cell.size() == group_runs[m];
  };
  std::set<int64_t> xs;
  for (size_t m = 0; m < values.size(); ++m) {
    for (const auto& [x, cell] : values[m]) {
      if (shown(m, cell)) xs.insert(x);
    }
  }
  table.lengths.assign(xs.begin(), xs.end());
  for (size_t m = 0; m < values.size(); ++m) {
    std::vector<std::optional<Summary>> row;
    for (int64_t x : table.lengths) {
      const auto it = values[m].find(x);
      const bool cell = it != values[m].end() && shown(m, it->second);
      row.push_back(cell ? std::optional<Summary>(summarize_values(it->second)) : std::nullopt);
    }
    table.cells.push_back(std::move(row));
  }
  return table;
}

// Each run's log.jsonl as a curve per logged key (step -> value). A line that is no JSON (cut short
// by a crash) is skipped with a warning, and so is one without a step: the rest of the log holds.
std::map<std::string, std::map<int64_t, double>> read_curves(const std::string& path) {
  std::map<std::string, std::map<int64_t, double>> curves;
  std::ifstream in(path);
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    const nlohmann::json entry = nlohmann::json::parse(line, nullptr, false);
    if (entry.is_discarded()) spdlog::warn("{}:{}: not a log entry, skipped", path, number);
    if (!entry.is_object() || !entry.contains("step") || !entry["step"].is_number()) continue;
    for (const char* key : {"loss", "val_exact_match"}) {
      if (entry.contains(key) && entry[key].is_number())
        curves[key][entry["step"].get<int64_t>()] = entry[key].get<double>() * (key[0] == 'v' ? 100.0 : 1.0);
    }
  }
  return curves;
}

// At most 8 of the table's steps, spread over it, always with the last. A table of some of the
// logged steps says so: a reader would take its columns for all there are.
std::string step_table(const MetricTable& table, int digits, bool significant, const std::string& csv) {
  constexpr size_t kColumns = 8;
  const size_t count = table.lengths.size();
  std::vector<size_t> shown;
  std::vector<std::string> headers;
  for (size_t i = 1; i <= kColumns && count > 0; ++i) {
    const size_t index = std::min((count * i + kColumns - 1) / kColumns - 1, count - 1);
    if (!shown.empty() && shown.back() == index) continue;
    shown.push_back(index);
    headers.push_back("step " + std::to_string(table.lengths[index]));
  }
  const std::string note =
      shown.size() < count
          ? fmt::format("{} of {} logged steps shown, spread over the run ({} has them all).\n\n",
                        shown.size(), count, csv)
          : "";
  return note + markdown_rows(table, headers, shown, digits, significant);
}

}  // namespace

std::string method_label(const Method& method) {
  const std::string parts = method.normalizer + " + " + method.scaling;
  const std::string name = method_common_name(method.normalizer, method.scaling);
  return (name.empty() ? parts : name + " (" + parts + ")") + " / " + method.positions;
}

std::string group_label(const RunGroup& group) {
  return method_label(group.method) + (group.variant.empty() ? "" : ", " + group.variant);
}

int64_t common_train_len_max(const std::vector<RunResults>& runs) {
  const auto same = [&](const RunResults& run) { return run.train_len_max == runs.front().train_len_max; };
  return runs.empty() || !std::all_of(runs.begin(), runs.end(), same) ? 0 : runs.front().train_len_max;
}

Summary summarize_values(const std::vector<double>& values) {
  Summary summary;
  summary.n = static_cast<int64_t>(values.size());
  if (values.empty()) return summary;
  summary.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  double squares = 0.0;
  for (double value : values) squares += (value - summary.mean) * (value - summary.mean);
  if (values.size() > 1) summary.std = std::sqrt(squares / static_cast<double>(values.size() - 1));
  return summary;
}

MetricTable metric_table(const std::vector<RunResults>& runs, const std::string& metric) {
  const double scale = is_percent(metric) ? 100.0 : 1.0;
  std::vector<std::map<int64_t, double>> values(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) {
    for (const auto& [length, entry] : runs[r].results) {
      if (const std::optional<double> value = entry.metric(metric)) values[r][length] = scale * *value;
    }
  }
  return values_table(runs, metric, values, false);
}

std::string markdown_table(const MetricTable& table, int64_t train_len_max) {
  std::vector<std::string> headers;
  std::vector<size_t> columns;
  for (int64_t length : table.lengths) {
    const std::string multiple = multiple_text(length, train_len_max);
    headers.push_back(std::to_string(length) + (multiple.empty() ? "" : " (" + multiple + ")"));
    columns.push_back(columns.size());
  }
  return markdown_rows(table, headers, columns, is_percent(table.metric) ? 1 : 2, false);
}

std::string csv_table(const MetricTable& table, int64_t train_len_max, const std::string& x_column) {
  const bool lengths = x_column == "length";
  std::ostringstream out;
  // A column pasted alone says its unit: percentages are named so, fractions and counts are not.
  const char* unit = is_percent(table.metric) ? "_percent" : "";
  out << "method,normalizer,scaling,positions,variant," << x_column << (lengths ? ",multiple" : "") << ",mean"
      << unit << ",std" << unit << ",n\n";
  for (size_t m = 0; m < table.groups.size(); ++m) {
    const Method& method = table.groups[m].method;
    for (size_t l = 0; l < table.lengths.size(); ++l) {
      const auto& cell = table.cells[m][l];
      if (!cell) continue;
      out << '"' << group_label(table.groups[m]) << "\"," << method.normalizer << "," << method.scaling << ","
          << method.positions << ",\"" << table.groups[m].variant << "\"," << table.lengths[l] << ","
          << (lengths ? multiple_text(table.lengths[l], train_len_max) + "," : "")
          << fmt::format("{:.6g},{:.6g},{}", cell->mean, cell->std, cell->n) << "\n";
    }
  }
  return out.str();
}

std::string training_section(const std::vector<RunResults>& runs, const std::string& out_dir,
                             const std::string& gnuplot, const PlotAxes& style) {
  std::vector<std::map<std::string, std::map<int64_t, double>>> curves;
  for (const RunResults& run : runs) {
    const fs::path log = fs::path(run.dir) / "log.jsonl";
    curves.push_back(fs::exists(log) ? read_curves(log.string()) : decltype(read_curves("")){});
  }
  struct Spec {
    const char* key;  // in log.jsonl
    const char* name;
    const char* title;
    const char* y_label;
    bool loss;
  };
  const Spec specs[] = {{"loss", "training_loss", "Training loss", "training loss (log scale)", true},
                        {"val_exact_match", "validation_exact_match", "Validation exact match (%)",
                         "validation exact match (%)", false}};
  std::string md;
  for (const Spec& spec : specs) {
    std::vector<std::map<int64_t, double>> values;
    for (auto& run : curves) values.push_back(run[spec.key]);
    const MetricTable table = values_table(runs, spec.name, values, true);
    if (table.lengths.empty()) continue;
    // A loss falls over decades: three significant digits, a log scale, a line through the means.
    md += std::string("### ") + spec.title + "\n\n" +
          step_table(table, spec.loss ? 3 : 1, spec.loss, std::string(spec.name) + ".csv") + "\n";
    write_output_file(out_dir, std::string(spec.name) + ".csv", csv_table(table, 0, "step"));
    PlotAxes axes = style;
    axes.title = style.title + ": " + spec.y_label;
    axes.x_label = "step";
    axes.y_label = spec.y_label;
    axes.y_range = spec.loss ? "[*:*]" : "[0:100]";
    axes.train_length = 0;
    axes.log_x = false;
    axes.log_y = spec.loss;
    axes.error_bars = !spec.loss;
    if (plot_table(table, out_dir, spec.name, axes, gnuplot))
      md += "![" + std::string(spec.title) + "](" + spec.name + ".png)\n\n";
  }
  if (md.empty()) return "";
  return "## Training\n\nFrom each run's log.jsonl: the training loss of each log window and the exact match "
         "of "
         "each validation, against the step. Cells: mean ± std over the runs of each method, at the steps "
         "all "
         "of them logged.\n\n" +
         md;
}

}  // namespace lengen
