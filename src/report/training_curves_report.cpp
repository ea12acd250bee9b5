// Training curves across runs: the windows and validations a run's trainer appends to log.jsonl.
#include "training_curves_report.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "lengen/atomic_write.h"
#include "lengen/output_files.h"
#include "lengen/run_folder.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// One logged quantity of one run: its value at each step.
using Curve = std::map<int64_t, double>;

struct RunCurves {
  Curve loss;             // training loss, each log window
  Curve val_exact_match;  // validation exact match (%)
  std::string problem;    // why the log is not one run's history ("step 20 logged twice"); "" if it is
};

// A line that is not a JSON object with a step (a line cut short by a crash, say) is skipped
// with a warning: the rest of the log still holds.
// `steps`: the run's train.steps (0 when unknown); a logged step past it is not the run's.
RunCurves read_curves(const std::string& path, int64_t steps) {
  RunCurves curves;
  std::ifstream in(path);
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const nlohmann::json entry = nlohmann::json::parse(line, nullptr, false);
    if (number == 1 && entry.is_object() && entry.contains("run_id") && !entry.contains("step")) continue;
    if (entry.is_discarded() || !entry.is_object() || !entry.contains("step") || !entry["step"].is_number()) {
      spdlog::warn("{}:{}: not a log entry, skipped", path, number);
      continue;
    }
    const auto step = entry["step"].get<int64_t>();
    // Steps only grow, up to train.steps: a resume drops the lines past its checkpoint first, so
    // a step logged twice, before an earlier one or past the run's end is another history's
    // (lines of another log appended).
    const auto once = [&](Curve& curve, double value) {
      if (!curves.problem.empty()) return;
      const std::string at = "line " + std::to_string(number) + " logs step " + std::to_string(step);
      if (steps > 0 && step > steps) {
        curves.problem = at + ", past the run's train.steps " + std::to_string(steps);
      } else if (!curve.empty() && curve.rbegin()->first > step) {
        curves.problem = at + " after step " + std::to_string(curve.rbegin()->first);
      } else if (!curve.emplace(step, value).second) {
        curves.problem = at + " again";
      }
    };
    if (entry.contains("loss") && entry["loss"].is_number()) once(curves.loss, entry["loss"].get<double>());
    if (entry.contains("val_exact_match") && entry["val_exact_match"].is_number())
      once(curves.val_exact_match, 100.0 * entry["val_exact_match"].get<double>());
  }
  return curves;
}

// Per group, the mean ± std over its runs at each step that all of them logged (a run cut
// short adds no point where it has no value).
MetricTable curve_table(const std::vector<RunResults>& runs, const std::vector<const Curve*>& curves,
                        const std::string& metric) {
  MetricTable table;
  table.metric = metric;
  std::vector<std::vector<const Curve*>> by_group;
  for (size_t r = 0; r < runs.size(); ++r) {
    if (curves[r] == nullptr || curves[r]->empty()) continue;
    const auto m = static_cast<size_t>(std::find(table.groups.begin(), table.groups.end(), runs[r].group) -
                                       table.groups.begin());
    if (m == table.groups.size()) {
      table.groups.push_back(runs[r].group);
      by_group.emplace_back();
    }
    by_group[m].push_back(curves[r]);
  }
  // The steps that every run of some method logged.
  std::set<int64_t> steps;
  for (const auto& group_curves : by_group) {
    for (const auto& [step, value] : *group_curves.front()) {
      const bool in_all = std::all_of(group_curves.begin(), group_curves.end(),
                                      [step = step](const Curve* curve) { return curve->count(step) > 0; });
      if (in_all) steps.insert(step);
    }
  }
  table.lengths.assign(steps.begin(), steps.end());  // the x values: steps
  for (const auto& group_curves : by_group) {
    std::vector<std::optional<Summary>> row;
    for (int64_t step : table.lengths) {
      std::vector<double> values;
      for (const Curve* curve : group_curves) {
        const auto it = curve->find(step);
        if (it != curve->end()) values.push_back(it->second);
      }
      row.push_back(values.size() == group_curves.size() ? std::optional<Summary>(summarize_values(values))
                                                         : std::nullopt);
    }
    table.cells.push_back(std::move(row));
  }
  return table;
}

// At most `columns` of the table's steps, evenly spaced, always with the last.
std::vector<size_t> shown_steps(const MetricTable& table, size_t columns) {
  std::vector<size_t> shown;
  const size_t count = table.lengths.size();
  if (count == 0) return shown;
  for (size_t i = 1; i <= columns; ++i) {
    const size_t index = (count * i + columns - 1) / columns - 1;
    if (shown.empty() || shown.back() != index) shown.push_back(std::min(index, count - 1));
  }
  return shown;
}

// `digits`: after the point, or with `significant`, in all (a loss falls over decades). A table
// of some of the logged steps says so: a reader would take its columns for all there are.
std::string step_table(const MetricTable& table, int digits, bool significant, const std::string& csv) {
  const std::vector<size_t> shown = shown_steps(table, 8);
  std::ostringstream out;
  if (shown.size() < table.lengths.size()) {
    out << shown.size() << " of " << table.lengths.size() << " logged steps shown, evenly spaced (" << csv
        << " has them all).\n\n";
  }
  out << "| method |";
  for (size_t i : shown) out << " step " << table.lengths[i] << " |";
  out << "\n|---|";
  for (size_t i = 0; i < shown.size(); ++i) out << "---|";
  out << "\n";
  for (size_t m = 0; m < table.groups.size(); ++m) {
    out << "| " << group_label(table.groups[m]) << " |";
    for (size_t i : shown) {
      out << " " << summary_text(table.cells[m][i], digits, significant) << " |";
    }
    out << "\n";
  }
  return out.str();
}

// A whole-number key of a run's config.json ("/train/log_every"); 0 when unknown.
int64_t config_count(const RunResults& run, const char* pointer) {
  const fs::path config = fs::path(run.dir) / "config.json";
  std::error_code error;
  if (!fs::is_regular_file(config, error)) return 0;
  std::ifstream in(config);
  const nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
  const nlohmann::json::json_pointer key(pointer);
  return !json.is_discarded() && json.contains(key) && json.at(key).is_number_integer()
             ? json.at(key).get<int64_t>()
             : 0;
}

// The steps a run's logged loss averages over (train.log_every); 0 when unknown.
int64_t log_window(const RunResults& run) { return config_count(run, "/train/log_every"); }

// The run's train.steps; 0 when unknown.
int64_t run_steps(const RunResults& run) { return config_count(run, "/train/steps"); }

// A logged loss is the mean over its log window: runs of one group logged over other windows are
// rows of their own ("train.log_every=10"), not averaged as if they were seeds.
std::vector<RunResults> split_by_log_window(std::vector<RunResults> runs) {
  std::vector<int64_t> windows;
  for (const RunResults& run : runs) windows.push_back(log_window(run));
  std::vector<RunGroup> original;
  for (const RunResults& run : runs) original.push_back(run.group);
  for (size_t r = 0; r < runs.size(); ++r) {
    bool differs = false;
    for (size_t other = 0; other < runs.size(); ++other)
      differs = differs || (original[other] == original[r] && windows[other] != windows[r]);
    if (!differs) continue;
    std::string& variant = runs[r].group.variant;
    variant += (variant.empty() ? "" : ", ") + std::string("train.log_every=") +
               (windows[r] > 0 ? std::to_string(windows[r]) : std::string("?"));
  }
  return runs;
}

}  // namespace

std::string training_section(const std::vector<RunResults>& runs, const std::string& out_dir,
                             const std::string& gnuplot, const PlotAxes& style) {
  std::vector<RunCurves> curves;
  std::vector<std::string> foreign_logs;
  bool any = false;
  for (const RunResults& run : runs) {
    const fs::path log = fs::path(run.dir) / "log.jsonl";
    curves.push_back(fs::exists(log) ? read_curves(log.string(), run_steps(run)) : RunCurves{});
    if (!curves.back().problem.empty()) {
      foreign_logs.push_back(run.name + " (its log.jsonl " + curves.back().problem + ")");
      curves.back() = RunCurves{};
      continue;
    }
    any = any || !curves.back().loss.empty() || !curves.back().val_exact_match.empty();
  }
  const std::string not_shown = foreign_logs.empty()
                                    ? ""
                                    : "**Curves not shown: " + std::to_string(foreign_logs.size()) +
                                          " run(s) whose log is not the run's own history: " +
                                          fmt::format("{}", fmt::join(foreign_logs, "; ")) + ".**\n\n";
  if (!any) return not_shown.empty() ? "" : "## Training\n\n" + not_shown;
  struct Spec {
    const char* name;
    const char* title;
    Curve RunCurves::*curve;
    int digits;
    bool significant;
    PlotAxes axes;
  };
  PlotAxes loss_axes = style;
  loss_axes.x_label = "step";
  loss_axes.y_label = "training loss";
  loss_axes.train_length = 0;
  loss_axes.log_x = false;
  loss_axes.log_y = true;
  loss_axes.error_bars = false;
  PlotAxes validation_axes = loss_axes;
  validation_axes.y_label = "validation exact match (%)";
  validation_axes.y_range = "[0:100]";
  validation_axes.log_y = false;
  validation_axes.error_bars = true;
  const Spec specs[] = {
      {"training_loss", "Training loss", &RunCurves::loss, 3, true, loss_axes},
      {"validation_exact_match", "Validation exact match (%)", &RunCurves::val_exact_match, 1, false,
       validation_axes},
  };
  std::ostringstream md;
  md << "## Training\n\nFrom each run's log.jsonl: the training loss of each log window and the exact "
        "match of each validation, against the step. Cells: mean ± std over the runs of each method, at the "
        "steps all of them logged.\n\n"
     << not_shown;
  for (const Spec& spec : specs) {
    std::vector<const Curve*> of_runs;
    for (const RunCurves& run : curves) of_runs.push_back(&(run.*spec.curve));
    const MetricTable table =
        curve_table(spec.curve == &RunCurves::loss ? split_by_log_window(runs) : runs, of_runs, spec.name);
    if (table.lengths.empty()) continue;
    md << "### " << spec.title << "\n\n"
       << step_table(table, spec.digits, spec.significant, std::string(spec.name) + ".csv") << "\n";
    write_output_file(out_dir, std::string(spec.name) + ".csv", csv_table(table, 0, "step"));
    if (plot_table(table, out_dir, spec.name, spec.axes, gnuplot)) {
      md << "![" << spec.title << "](" << spec.name << ".png)\n\n";
    }
  }
  return md.str();
}

}  // namespace lengen
