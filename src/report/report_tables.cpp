// Runs -> per-method tables of mean ± std over runs, as markdown and CSV.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "lengen/attention_choices.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"
#include "lengen/report.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

RunResults read_run(const std::string& name, const std::string& results_path, bool on_files) {
  ResultsFile file = read_results_file(results_path);
  RunResults run;
  run.name = name;
  run.dir = fs::path(results_path).parent_path().string();
  run.method = file.method;
  run.train_len_max = file.train_len_max;
  // A run evaluated on one kind of data only has no entry for the other.
  run.results = std::move(on_files ? file.results_on_files : file.results);
  return run;
}

std::string multiple_text(int64_t length, int64_t train_len_max) {
  if (train_len_max <= 0) return "";
  return fmt::format("{:g}x", static_cast<double>(length) / static_cast<double>(train_len_max));
}

bool is_percent(const std::string& metric) { return metric == "exact_match" || metric == "token_accuracy"; }

}  // namespace

std::string method_label(const Method& method) {
  const std::string parts = method.normalizer + " + " + method.scaling;
  const std::string name = method_common_name(method.normalizer, method.scaling);
  return (name.empty() ? parts : name + " (" + parts + ")") + " / " + method.positions;
}

std::vector<RunResults> collect_runs(const std::string& dir, bool on_files) {
  std::vector<RunResults> runs;
  const fs::path root(dir);
  if (fs::exists(root / "sweep.json")) {
    // Keep the manifest alive: looping over .at() of a temporary would read freed memory.
    const std::string manifest_path = (root / "sweep.json").string();
    const nlohmann::json manifest = read_json_file(manifest_path);
    // A sweep.json lengen did not write (another tool's) is named, not read as lengen's.
    const auto is_run = [](const nlohmann::json& entry) {
      return entry.is_object() && entry.contains("name") && entry["name"].is_string();
    };
    if (!manifest.is_object() || !manifest.contains("runs") || !manifest["runs"].is_array() ||
        !std::all_of(manifest["runs"].begin(), manifest["runs"].end(), is_run)) {
      throw UserError(manifest_path + ": not a lengen sweep manifest (expected {\"runs\": [{\"name\": ...}, ...]})");
    }
    for (const auto& entry : manifest.at("runs")) {
      const std::string name = entry.at("name").get<std::string>();
      const fs::path results = root / name / "results.json";
      if (fs::exists(results)) runs.push_back(read_run(name, results.string(), on_files));
    }
  } else if (fs::exists(root / "results.json")) {
    runs.push_back(read_run(root.filename().string(), (root / "results.json").string(), on_files));
  } else if (fs::is_directory(root)) {
    std::vector<fs::path> folders;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (fs::exists(entry.path() / "results.json")) folders.push_back(entry.path());
    }
    std::sort(folders.begin(), folders.end());
    for (const auto& folder : folders) {
      runs.push_back(read_run(folder.filename().string(), (folder / "results.json").string(), on_files));
    }
  }
  if (runs.empty()) throw UserError(dir + " holds no evaluated run (no results.json)");
  return runs;
}

std::string default_decode(const std::vector<RunResults>& runs) {
  for (const auto& run : runs) {
    if (run.results.count("teacher_forced") > 0) return "teacher_forced";
  }
  return "greedy";
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
  // values[method][length]
  std::vector<std::map<int64_t, std::vector<double>>> values;
  const double scale = is_percent(metric) ? 100.0 : 1.0;
  for (const auto& run : runs) {
    auto found = std::find(table.methods.begin(), table.methods.end(), run.method);
    const size_t m = static_cast<size_t>(found - table.methods.begin());
    if (found == table.methods.end()) {
      table.methods.push_back(run.method);
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
  for (int64_t length : table.lengths)
    out << " " << length << " (" << multiple_text(length, train_len_max) << ") |";
  out << "\n|---|";
  for (size_t i = 0; i < table.lengths.size(); ++i) out << "---|";
  out << "\n";
  for (size_t m = 0; m < table.methods.size(); ++m) {
    out << "| " << method_label(table.methods[m]) << " |";
    for (const auto& cell : table.cells[m]) out << " " << summary_text(cell, digits) << " |";
    out << "\n";
  }
  return out.str();
}

std::string csv_table(const MetricTable& table, int64_t train_len_max, const std::string& x_column) {
  const bool lengths = x_column == "length";
  std::ostringstream out;
  out << "method,normalizer,scaling,positions," << x_column << (lengths ? ",multiple" : "")
      << ",mean,std,n\n";
  for (size_t m = 0; m < table.methods.size(); ++m) {
    const Method& method = table.methods[m];
    for (size_t l = 0; l < table.lengths.size(); ++l) {
      const auto& cell = table.cells[m][l];
      if (!cell) continue;
      out << '"' << method_label(method) << "\"," << method.normalizer << "," << method.scaling << ","
          << method.positions << "," << table.lengths[l] << ","
          << (lengths ? multiple_text(table.lengths[l], train_len_max) + "," : "")
          << fmt::format("{:.6g},{:.6g},{}", cell->mean, cell->std, cell->n) << "\n";
    }
  }
  return out.str();
}

}  // namespace lengen
