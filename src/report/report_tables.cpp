// Runs -> per-method tables of mean ± std over runs, as markdown and CSV.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "lengen/attention_choices.h"
#include "lengen/config.h"
#include "lengen/report.h"

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

std::string default_decode(const std::vector<RunResults>& runs) {
  for (const auto& run : runs) {
    if (run.results.count(name_of(DecodeMode::kTeacherForced)) > 0)
      return name_of(DecodeMode::kTeacherForced);
  }
  return name_of(DecodeMode::kGreedy);
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

MetricTable metric_table(const std::vector<RunResults>& runs, const std::string& decode,
                         const std::string& metric) {
  MetricTable table;
  table.metric = metric;
  std::set<int64_t> lengths;
  // values[group][length]
  std::vector<std::map<int64_t, std::vector<double>>> values;
  const double scale = is_percent(metric) ? 100.0 : 1.0;
  for (const auto& run : runs) {
    auto found = std::find(table.groups.begin(), table.groups.end(), run.group);
    const size_t m = static_cast<size_t>(found - table.groups.begin());
    if (found == table.groups.end()) {
      table.groups.push_back(run.group);
      values.emplace_back();
    }
    const auto by_decode = run.results.find(decode);
    if (by_decode == run.results.end()) continue;
    for (const auto& [length, entry] : by_decode->second) {
      const std::optional<double> value = entry.metric(metric);
      if (!value) continue;
      lengths.insert(length);
      values[m][length].push_back(scale * *value);
    }
  }
  table.lengths.assign(lengths.begin(), lengths.end());
  for (const auto& by_length : values) {
    std::vector<std::optional<Summary>> row;
    for (int64_t length : table.lengths) {
      auto it = by_length.find(length);
      row.push_back(it == by_length.end() ? std::nullopt
                                          : std::optional<Summary>(summarize_values(it->second)));
    }
    table.cells.push_back(std::move(row));
  }
  return table;
}

std::string summary_text(const std::optional<Summary>& cell, int digits, bool significant) {
  if (!cell) return "-";
  if (significant)
    return fmt::format("{:.{}g} ± {:.{}g} (n={})", cell->mean, digits, cell->std, digits, cell->n);
  return fmt::format("{:.{}f} ± {:.{}f} (n={})", cell->mean, digits, cell->std, digits, cell->n);
}

std::string markdown_table(const MetricTable& table, int64_t train_len_max) {
  const int digits = is_percent(table.metric) ? 1 : 2;
  std::ostringstream out;
  out << "| method |";
  for (int64_t length : table.lengths) {
    const std::string multiple = multiple_text(length, train_len_max);
    out << " " << length << (multiple.empty() ? "" : " (" + multiple + ")") << " |";
  }
  out << "\n|---|";
  for (size_t i = 0; i < table.lengths.size(); ++i) out << "---|";
  out << "\n";
  for (size_t m = 0; m < table.groups.size(); ++m) {
    out << "| " << group_label(table.groups[m]) << " |";
    for (const auto& cell : table.cells[m]) out << " " << summary_text(cell, digits) << " |";
    out << "\n";
  }
  return out.str();
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
