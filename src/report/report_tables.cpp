// Runs -> per-method tables of mean ± std over runs, as markdown and CSV.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "lengen/attention_choices.h"
#include "report_parts.h"

namespace lengen {

namespace {

std::string multiple_text(int64_t length, int64_t train_len_max) {
  if (train_len_max <= 0) return "";
  return fmt::format("{:g}x", static_cast<double>(length) / static_cast<double>(train_len_max));
}

bool is_percent(const std::string& metric) {
  return metric == "exact_match" || metric == "token_accuracy" || metric == "answer_accuracy";
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
  for (const auto& run : runs) {
    if (run.train_len_max != runs.front().train_len_max) return 0;
  }
  return runs.empty() ? 0 : runs.front().train_len_max;
}

Summary summarize_values(const std::vector<double>& values) {
  Summary summary;
  summary.n = static_cast<int64_t>(values.size());
  if (values.empty()) return summary;
  for (double value : values) summary.mean += value;
  summary.mean /= static_cast<double>(values.size());
  if (values.size() > 1) {
    double squares = 0.0;
    for (double value : values) squares += (value - summary.mean) * (value - summary.mean);
    summary.std = std::sqrt(squares / static_cast<double>(values.size() - 1));
  }
  return summary;
}

MetricTable values_table(const std::vector<RunResults>& runs, const std::string& metric,
                         const std::function<std::map<int64_t, double>(size_t)>& values_of, bool in_all_runs) {
  MetricTable table;
  table.metric = metric;
  std::vector<std::map<int64_t, std::vector<double>>> values;  // [group][x]
  std::vector<size_t> group_runs;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::map<int64_t, double> of_run = values_of(r);
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

MetricTable metric_table(const std::vector<RunResults>& runs, const std::string& metric) {
  const double scale = is_percent(metric) ? 100.0 : 1.0;
  return values_table(runs, metric, [&](size_t r) {
    std::map<int64_t, double> values;
    for (const auto& [length, entry] : runs[r].results) {
      if (const std::optional<double> value = entry.metric(metric)) values[length] = scale * *value;
    }
    return values;
  }, false);
}

std::string summary_text(const std::optional<Summary>& cell, int digits, bool significant) {
  if (!cell) return "-";
  if (significant)
    return fmt::format("{:.{}g} ± {:.{}g} (n={})", cell->mean, digits, cell->std, digits, cell->n);
  return fmt::format("{:.{}f} ± {:.{}f} (n={})", cell->mean, digits, cell->std, digits, cell->n);
}

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
  out << "method,normalizer,scaling,positions,variant," << x_column << (lengths ? ",multiple" : "")
      << ",mean,std,n\n";
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

}  // namespace lengen
