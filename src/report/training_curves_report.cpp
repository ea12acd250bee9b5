// Training curves across runs: the windows and validations a run's trainer appends to log.jsonl.
#include "report_parts.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "lengen/atomic_write.h"
#include "lengen/output_files.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// One logged quantity of one run: its value at each step.
using Curve = std::map<int64_t, double>;

struct RunCurves {
  Curve loss;             // training loss, each log window
  Curve val_exact_match;  // validation exact match (%)
};

// A line that is no JSON (cut short by a crash) is skipped with a warning, and so is one without
// a step: the rest of the log still holds.
RunCurves read_curves(const std::string& path) {
  RunCurves curves;
  std::ifstream in(path);
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    const nlohmann::json entry = nlohmann::json::parse(line, nullptr, false);
    if (entry.is_discarded()) spdlog::warn("{}:{}: not a log entry, skipped", path, number);
    if (!entry.is_object() || !entry.contains("step") || !entry["step"].is_number()) continue;
    const auto step = entry["step"].get<int64_t>();
    if (entry.contains("loss") && entry["loss"].is_number()) curves.loss[step] = entry["loss"].get<double>();
    if (entry.contains("val_exact_match") && entry["val_exact_match"].is_number())
      curves.val_exact_match[step] = 100.0 * entry["val_exact_match"].get<double>();
  }
  return curves;
}

// At most 8 of the table's steps, evenly spaced, always with the last. A table of some of the
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
  const std::string note = shown.size() < count ? fmt::format("{} of {} logged steps shown, evenly spaced ({} has them all).\n\n", shown.size(), count, csv) : "";
  return note + markdown_rows(table, headers, shown, digits, significant);
}

// A logged loss is the mean over its log window: runs of one group logged over other windows are
// rows of their own ("train.log_every=10"), not averaged as if they were seeds.
std::vector<RunResults> split_by_log_window(std::vector<RunResults> runs) {
  const std::vector<RunResults> original = runs;
  for (RunResults& run : runs) {
    const bool differs = std::any_of(original.begin(), original.end(), [&](const RunResults& other) {
      return other.group == run.group && other.log_every != run.log_every;
    });
    if (differs)
      run.group.variant += (run.group.variant.empty() ? "" : ", ") + fmt::format("train.log_every={}", run.log_every);
  }
  return runs;
}

}  // namespace

std::string training_section(const std::vector<RunResults>& runs, const std::string& out_dir,
                             const std::string& gnuplot, const PlotAxes& style) {
  std::vector<RunCurves> curves;
  bool any = false;
  for (const RunResults& run : runs) {
    const fs::path log = fs::path(run.dir) / "log.jsonl";
    curves.push_back(fs::exists(log) ? read_curves(log.string()) : RunCurves{});
    any = any || !curves.back().loss.empty() || !curves.back().val_exact_match.empty();
  }
  if (!any) return "";
  // Against the step, without a training length; the loss falls over decades.
  PlotAxes loss = style, validation = style;
  for (PlotAxes* axes : {&loss, &validation}) {
    axes->x_label = "step";
    axes->train_length = 0;
    axes->log_x = false;
  }
  loss.y_label = "training loss";
  loss.log_y = true;
  loss.error_bars = false;
  validation.y_label = "validation exact match (%)";
  validation.y_range = "[0:100]";
  struct Spec {
    const char* name;
    const char* title;
    Curve RunCurves::*curve;
    int digits;
    bool significant;
    PlotAxes axes;
  };
  const Spec specs[] = {
      {"training_loss", "Training loss", &RunCurves::loss, 3, true, loss},
      {"validation_exact_match", "Validation exact match (%)", &RunCurves::val_exact_match, 1, false, validation},
  };
  std::ostringstream md;
  md << "## Training\n\nFrom each run's log.jsonl: the training loss of each log window and the exact "
        "match of each validation, against the step. Cells: mean ± std over the runs of each method, at the "
        "steps all of them logged.\n\n";
  for (const Spec& spec : specs) {
    const MetricTable table =
        values_table(spec.curve == &RunCurves::loss ? split_by_log_window(runs) : runs, spec.name,
                     [&](size_t r) { return curves[r].*spec.curve; }, true);
    if (table.lengths.empty()) continue;
    md << "### " << spec.title << "\n\n"
       << step_table(table, spec.digits, spec.significant, std::string(spec.name) + ".csv") << "\n";
    write_output_file(out_dir, std::string(spec.name) + ".csv", csv_table(table, 0, "step"));
    PlotAxes axes = spec.axes;
    axes.title = style.title + ": " + axes.y_label;
    if (plot_table(table, out_dir, spec.name, axes, gnuplot)) {
      md << "![" << spec.title << "](" << spec.name << ".png)\n\n";
    }
  }
  return md.str();
}

}  // namespace lengen
