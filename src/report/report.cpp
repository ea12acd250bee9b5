// report.md, the CSV tables and the plots for a sweep folder or one run.
#include "lengen/report.h"

#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "lengen/named_entries.h"
#include "lengen/output_files.h"
#include "lengen/schedule_history.h"
#include "lengen/sweep_manifest.h"
#include "report_parts.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// One table and plot of a report.
struct MetricSpec {
  std::string metric;   // as ResultEntry::metric names it
  std::string file;     // NAME of NAME.csv and the plot's NAME.{dat,gp,png,svg}
  std::string heading;  // the table's markdown heading
  std::string y_label;
  std::string y_range;  // gnuplot's: percentages stay in [0, 100] even where mean - std is not
};

const MetricSpec kLengthMetrics[] = {
    {"exact_match", "exact_match", "## Exact match (%)", "exact match (%)", "[0:100]"},
    {"token_accuracy", "token_accuracy", "## Token accuracy (%)", "token accuracy (%)", "[0:100]"},
    // Only for tasks whose targets hold several answers (mqmtar's queries).
    {"answer_accuracy", "answer_accuracy", "## Answer accuracy (%): answers with every symbol right",
     "answer accuracy (%)", "[0:100]"},
    {"nonzero_per_query", "nonzero_per_query", "## Attention: nonzero keys per query",
     "nonzero keys per query", "[0:*]"},
};

// Attention on the target, per layer: the best head's and the mean over heads' weight.
MetricSpec target_spec(size_t layer, const std::string& kind) {
  const std::string head = kind == "best" ? "best head" : "mean over heads";
  return {fmt::format("attention_on_target/{}/{}", layer, kind),
          fmt::format("attention_on_target_layer{}_{}", layer, kind),
          fmt::format("### Layer {}: {}", layer, head),
          fmt::format("weight on the answering keys, layer {} ({})", layer, head), "[0:1]"};
}

// A file a report writes: report.md, and each metric's and curve's table, plot and plot data.
bool is_report_page(const std::string& name) {
  if (name == "report.md") return true;
  const std::string extension = fs::path(name).extension().string();
  if (name.find('/') != std::string::npos ||
      std::set<std::string>{".csv", ".dat", ".gp", ".png", ".svg"}.count(extension) == 0)
    return false;
  for (const char* prefix : {"exact_match.", "token_accuracy.", "answer_accuracy.", "nonzero_per_query.",
                             "attention_on_target_layer", "training_loss.", "validation_exact_match."}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// Every page of an earlier report in OUT is checked before any is removed: a file of the user's
// under a report's name (report.md, a layer's table) stops the report before anything is written.
void replace_earlier_report(const std::string& out_dir) {
  std::vector<std::string> pages;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(out_dir, error)) {
    if (is_report_page(entry.path().filename().string())) pages.push_back(entry.path().filename().string());
  }
  check_output_files(out_dir, pages);
  remove_listed_output_files(out_dir, is_report_page);
}

// Results of a run's best.pt: its best in-distribution validation, not a step of its schedule.
bool from_best(const ResultEntry& entry) { return fs::path(entry.checkpoint).filename() == "best.pt"; }

// The title, and what the runs were measured with and on.
std::string heading(const std::string& dir, const CollectedRuns& collected, bool on_files,
                    int64_t train_len_max) {
  const std::vector<RunResults>& runs = collected.runs;
  // Greedy decoding stops at eval.decode_cap times the source length: a low cap cuts answers short.
  std::set<std::string> caps;
  bool all_best = true;
  for (const RunResults& run : runs) {
    for (const auto& [length, entry] : run.results) {
      if (entry.decode_cap) caps.insert(fmt::format("{:g}", *entry.decode_cap));
      all_best = all_best && from_best(entry);
    }
  }
  std::ostringstream md;
  md << "# Length generalization: " << dir << "\n\n";
  // A sweep's report starts with what its sweep files say the sweep is.
  if (fs::exists(fs::path(dir) / kSweepManifestName)) {
    const std::string description = read_sweep_manifest(dir).value("description", "");
    if (!description.empty()) md << "Sweep: " << description << "\n\n";
  }
  md << runs.size() << " evaluated run(s); decode: " << collected.decode
     << (caps.empty()
             ? ""
             : fmt::format(" (at most {}x the source length, eval.decode_cap)", fmt::join(caps, " or ")))
     << "; " << (all_best ? "models: each run's best.pt (its best in-distribution validation); " : "")
     << (train_len_max > 0 ? "trained on source lengths up to " + std::to_string(train_len_max)
                           : std::string("trained on different lengths (no multiples shown)"))
     << ". Cells: mean ± std over the runs of each group, n = runs: a group is a method and any other "
        "config setting on which runs differ (named after the method), so its runs differ in seeds only.\n\n"
     << (on_files
             ? "Data: the test files each run was evaluated on with `lengen eval --data DIR`, one row group "
               "per folder (test_data; each entry of results.json names the files and their hash).\n\n"
             : "Data: generated by each run's task from its evaluation seed streams (results.json "
               "\"results\"); results on `--data` files are kept apart and shown with "
               "`lengen report --on-files`.\n\n");
  // The build and CPU behind the figures (run.json's; runs of older builds did not record them).
  std::map<std::string, int64_t> builds;
  for (const RunResults& run : runs) ++builds[run.trained_by.empty() ? "not recorded" : run.trained_by];
  std::vector<std::string> trained_by;
  for (const auto& [build, count] : builds) trained_by.push_back(fmt::format("{} ({} run(s))", build, count));
  md << fmt::format("Trained by: {}.\n\n", fmt::join(trained_by, "; "));
  if (!collected.left_out.empty()) {
    spdlog::warn("{} run(s) of {} are not in the tables: {}", collected.left_out.size(), dir,
                 joined_names(collected.left_out));
    md << "**Not in the tables: " << collected.left_out.size()
       << " run(s): " << joined_names(collected.left_out) << ".**\n\n";
  }
  return md.str();
}

// What may make a row other than one fully trained model per run measured alike: other numbers of
// samples at a length, a step before the end of the run's schedule, lengths of several checkpoints.
std::string notes_on_models(const std::string& dir, const std::vector<RunResults>& runs) {
  std::ostringstream md;
  std::map<int64_t, std::set<int64_t>> samples_by_length;
  std::vector<std::string> unfinished;
  for (const RunResults& run : runs) {
    std::optional<std::string> step_of;
    for (const auto& [length, entry] : run.results) {
      samples_by_length[length].insert(entry.samples);
      const std::optional<ScheduleSegment> last =
          entry.model ? last_schedule_segment(entry.model->schedule) : std::nullopt;
      if (!step_of && last && !from_best(entry) && entry.model->step < last->steps)
        step_of = fmt::format("{} (step {} of {})", run.name, entry.model->step, last->steps);
    }
    if (step_of) unfinished.push_back(*step_of);
  }
  std::vector<std::string> unequal;
  for (const auto& [length, counts] : samples_by_length) {
    if (counts.size() > 1) unequal.push_back(fmt::format("{} ({})", length, fmt::join(counts, " or ")));
  }
  if (!unequal.empty()) {
    md << "Runs were evaluated on different numbers of samples at length(s) " << joined_names(unequal)
       << ": their cells average estimates of unequal precision.\n\n";
  }
  if (!unfinished.empty()) {
    spdlog::warn("{}: results of models before the end of their training: {}", dir, joined_names(unfinished));
    md << "**Not fully trained: " << joined_names(unfinished)
       << " (results of a checkpoint before the run's train.steps).**\n\n";
  }
  for (const RunResults& run : runs) {
    if (run.mixed_checkpoints.empty()) continue;
    spdlog::warn("{}: its lengths were evaluated with different checkpoints ({})", run.name,
                 run.mixed_checkpoints);
    md << "**Mixed checkpoints: run " << run.name << "'s lengths come from different models ("
       << run.mixed_checkpoints << "); its row mixes them. `lengen eval " << run.dir
       << "` scores every length with one checkpoint.**\n\n";
  }
  return md.str();
}

// Where a report writes, what it plots and how.
struct Page {
  std::string out_dir, gnuplot, measured_on;
  int64_t train_len_max = 0;
  PlotAxes style;
  bool all_plotted = true;
};

// One metric's table, CSV and plot; "" when no run has it (answer accuracy exists for some tasks).
std::string metric_section(const std::vector<RunResults>& runs, const MetricSpec& spec, Page& page) {
  const MetricTable table = metric_table(runs, spec.metric);
  if (table.lengths.empty()) return "";
  std::string md = spec.heading + "\n\n" + markdown_table(table, page.train_len_max) + "\n";
  write_output_file(page.out_dir, spec.file + ".csv", csv_table(table, page.train_len_max));
  PlotAxes axes = page.style;
  // A plot or its data read alone says what it measures: the decode mode and the data. The title
  // holds them; on the y axis they would not fit the plot's height.
  axes.title = page.style.title + ": " + spec.y_label + page.measured_on;
  axes.y_label = spec.y_label;
  axes.y_range = spec.y_range;
  const bool plotted = plot_table(table, page.out_dir, spec.file, axes, page.gnuplot);
  page.all_plotted = page.all_plotted && plotted;
  return md + (plotted
                   ? "![" + spec.heading.substr(spec.heading.find(' ') + 1) + "](" + spec.file + ".png)\n\n"
                   : "");
}

// Per layer, the best head's and the mean over heads' weight on the answering keys; runs of tasks
// without a known answering key are named as such.
std::string attention_on_target_section(const std::vector<RunResults>& runs, Page& page) {
  size_t layers = 0;
  std::set<int64_t> samples;
  std::vector<std::string> unknown;
  for (const RunResults& run : runs) {
    bool known = true;
    for (const auto& [length, entry] : run.results) {
      if (!entry.attention_on_target) continue;
      known = known && entry.attention_on_target->known;
      if (!entry.attention_on_target->known) continue;
      layers = std::max(layers, entry.attention_on_target->layers.size());
      samples.insert(entry.attention_on_target->samples);
    }
    if (!known) unknown.push_back(run.name);
  }
  if (layers == 0 && unknown.empty()) return "";
  std::string md = "## Attention on the target\n\n";
  if (layers > 0) {
    md += fmt::format(
        "At each query that predicts a target symbol, the attention weight on the input position(s) that "
        "answer it (docs/method.md, \"Attention on the target\"), averaged over the target symbols of {} "
        "evaluation sample(s) per length: the best head of each layer, and the mean over the layer's heads. "
        "Cells: mean ± std over the runs of each group.\n\n",
        fmt::join(samples, ", "));
  }
  for (size_t layer = 0; layer < layers; ++layer) {
    for (const char* kind : {"best", "mean"}) md += metric_section(runs, target_spec(layer, kind), page);
  }
  if (!unknown.empty())
    md += "No known target (no evaluated target symbol has a key that answers it): " + joined_names(unknown) +
          ".\n\n";
  return md;
}

}  // namespace

std::string write_report(const std::string& dir, const ReportOptions& options) {
  const CollectedRuns collected = collect_runs(dir, options.on_files, options.decode);
  const std::vector<RunResults>& runs = collected.runs;
  Page page;
  page.out_dir = options.out_dir.empty() ? dir : options.out_dir;
  page.gnuplot = options.gnuplot == "auto" ? find_gnuplot() : options.gnuplot;
  std::string decode = collected.decode;  // "teacher_forced" reads as "teacher-forced" on a slide
  std::replace(decode.begin(), decode.end(), '_', '-');
  page.measured_on = ", " + decode + (options.on_files ? ", on --data files" : ", on generated data");
  // Multiples of the training length only where the runs share it.
  page.train_len_max = common_train_len_max(runs);
  // The folder's list is read holding its lock; only the path is checked before (a file there, the root).
  check_output_folder_path(page.out_dir);
  // One report at a time in OUT, and none of an earlier report's pages left beside this one's (a
  // layer the new runs do not have).
  const auto writing = lock_output_folder(page.out_dir);
  replace_earlier_report(page.out_dir);
  // Every plot is titled by the runs' task(s), marks the training length and keeps one colour per group.
  std::set<std::string> tasks;
  for (const RunResults& run : runs) {
    tasks.insert(run.task);
    const std::string label = group_label(run.group);
    std::vector<std::string>& keys = page.style.colour_keys;
    if (std::find(keys.begin(), keys.end(), label) == keys.end()) keys.push_back(label);
  }
  page.style.title = fmt::format("{}", fmt::join(tasks, " + "));
  page.style.train_length = page.train_len_max;

  std::string md = heading(dir, collected, options.on_files, page.train_len_max) + notes_on_models(dir, runs);
  for (const MetricSpec& spec : kLengthMetrics) md += metric_section(runs, spec, page);
  md += attention_on_target_section(runs, page);
  md += training_section(runs, page.out_dir, page.gnuplot, page.style);
  if (page.gnuplot.empty()) {
    md +=
        "Plots skipped: gnuplot is not on PATH. The data (*.dat) and scripts (*.gp) are written; "
        "run `gnuplot NAME.gp` here to draw them.\n";
  } else if (!page.all_plotted) {
    md += "Some plots could not be drawn (no data or gnuplot failed); see the *.gp scripts.\n";
  }
  std::vector<std::string> names;
  for (const RunResults& run : runs) names.push_back(run.name);
  md += "\nRuns: " + joined_names(names) + "\n";
  write_output_file(page.out_dir, "report.md", md);
  return md;
}

}  // namespace lengen
