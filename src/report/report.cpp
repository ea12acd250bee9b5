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

#include "attention_on_target_report.h"
#include "lengen/atomic_write.h"
#include "lengen/config.h"
#include "lengen/errors.h"
#include "lengen/folder_lock.h"
#include "lengen/json_file.h"
#include "lengen/named_entries.h"
#include "lengen/output_files.h"
#include "lengen/schedule_history.h"
#include "lengen/sweep_manifest.h"
#include "plot_style.h"
#include "training_curves_report.h"

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
    // Only for tasks whose targets hold several answers (mqmtar's queries).
    {"answer_accuracy", "Answer accuracy (%): answers with every symbol right", "answer accuracy (%)",
     "[0:100]"},
    {"nonzero_per_query", "Attention: nonzero keys per query", "nonzero keys per query", "[0:*]"},
};

// Whether some run has `metric` at some length (answer accuracy exists for some tasks only).
bool any_run_has(const std::vector<RunResults>& runs, const std::string& decode, const std::string& metric) {
  for (const RunResults& run : runs) {
    const auto found = run.results.find(decode);
    if (found == run.results.end()) continue;
    for (const auto& [length, entry] : found->second) {
      if (entry.metric(metric)) return true;
    }
  }
  return false;
}

// Results of a run's best.pt: its best in-distribution validation, not a step of its schedule.
bool from_best_checkpoint(const ResultEntry& entry) {
  return fs::path(entry.checkpoint).filename() == "best.pt";
}

// A file a report writes: report.md and its tables, plots and their data.
bool is_report_page(const std::string& name) {
  if (name.find('/') != std::string::npos) return false;
  if (name == "report.md") return true;
  for (const char* prefix : {"exact_match.", "token_accuracy.", "answer_accuracy.", "nonzero_per_query.",
                             "attention_on_target_layer", "training_loss.", "validation_exact_match."}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// The runs a report shows, the decode mode it shows them in, and the runs it names instead.
struct ReportedRuns {
  std::vector<RunResults> runs;
  std::string decode;
  std::vector<std::string> left_out;
};

ReportedRuns runs_to_report(const std::string& dir, const ReportOptions& options) {
  ReportedRuns reported;
  std::vector<RunResults> runs = collect_runs(dir, options.on_files, &reported.left_out);
  const std::string decode = options.decode.empty() ? default_decode(runs) : options.decode;
  if (value_named<DecodeMode>(decode) == nullptr) {
    throw UserError("unknown decode mode '" + decode + "' (expected " + joined_names(names_of<DecodeMode>()) +
                    ")");
  }
  // Labelled and grouped by this decode mode's results alone.
  reported.left_out.clear();
  runs = collect_runs(dir, options.on_files, &reported.left_out, decode);
  // A report of no results would be tables of dashes under a heading that names a decode mode.
  const bool any = std::any_of(runs.begin(), runs.end(),
                               [&](const RunResults& run) { return run.results.count(decode) > 0; });
  if (!any) {
    // Without --decode the mode is the report's default, not something the user asked for.
    const bool none_at_all =
        options.decode.empty() &&
        std::all_of(runs.begin(), runs.end(), [](const RunResults& run) { return run.results.empty(); });
    throw UserError(dir + ": no run has " + (none_at_all ? "" : decode + " ") + "results" +
                    (options.on_files ? " on --data files (results_on_files); evaluate with `lengen eval RUN "
                                        "--data DIR`"
                     : none_at_all    ? " (evaluate with `lengen eval RUN`)"
                                      : " (evaluate with `lengen eval RUN --decode " + decode + "`)"));
  }
  // A run without results in this decode mode is in none of the tables: named, not counted.
  for (RunResults& run : runs) {
    if (run.results.count(decode) > 0) {
      reported.runs.push_back(std::move(run));
    } else {
      reported.left_out.push_back(run.name + " (no " + decode + " results)");
    }
  }
  reported.decode = decode;
  return reported;
}

// Every file a report may write is checked before the earlier report's are removed: a page of
// the user's under a report's name (a curve, a layer's table) stops it here, not halfway. The
// files every report writes are checked first: a user's report.md or CSV in OUT stops the report
// before anything is written.
void replace_earlier_report(const std::string& out_dir) {
  std::vector<std::string> fixed_names = {"report.md"};
  for (const MetricSpec& spec : kMetrics) {
    for (const char* extension : {".csv", ".dat", ".gp", ".png", ".svg"})
      fixed_names.push_back(spec.metric + std::string(extension));
  }
  check_output_files(out_dir, fixed_names);
  std::vector<std::string> pages_there;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(out_dir, error)) {
    const std::string name = entry.path().filename().string();
    const std::string extension = entry.path().extension().string();
    if (is_report_page(name) && (name == "report.md" || extension == ".csv" || extension == ".dat" ||
                                 extension == ".gp" || extension == ".png" || extension == ".svg"))
      pages_there.push_back(name);
  }
  check_output_files(out_dir, pages_there);
  remove_listed_output_files(out_dir, is_report_page);
  claim_output_files(out_dir, fixed_names);
}

// The title, and what the runs were measured with and on.
std::string heading(const std::string& dir, const std::vector<RunResults>& runs, const std::string& decode,
                    bool on_files, int64_t train_len_max) {
  // Greedy decoding stops at eval.decode_cap times the source length: a low cap cuts answers short.
  std::set<std::string> caps;
  for (const RunResults& run : runs) {
    for (const auto& [length, entry] : run.results.at(decode)) {
      if (entry.decode_cap) caps.insert(fmt::format("{:g}", *entry.decode_cap));
    }
  }
  // Results of each run's best.pt are of the best in-distribution validation, not the last step.
  const bool all_best = std::all_of(runs.begin(), runs.end(), [&](const RunResults& run) {
    const auto& entries = run.results.at(decode);
    return std::all_of(entries.begin(), entries.end(),
                       [](const auto& item) { return from_best_checkpoint(item.second); });
  });
  const std::string capped = caps.empty() ? ""
                                          : fmt::format(" (at most {}x the source length, eval.decode_cap)",
                                                        fmt::join(caps, " or "));
  std::ostringstream md;
  md << "# Length generalization: " << dir << "\n\n";
  // A sweep's report starts with what its sweep files say the sweep is.
  if (fs::exists(fs::path(dir) / kSweepManifestName)) {
    const nlohmann::json manifest = read_sweep_manifest(dir);
    const std::string description = manifest.contains("description") && manifest["description"].is_string()
                                        ? manifest["description"].get<std::string>()
                                        : "";
    if (!description.empty()) md << "Sweep: " << description << "\n\n";
  }
  md << runs.size() << " evaluated run(s); decode: " << decode << capped << "; "
     << (all_best ? "models: each run's best.pt (its best in-distribution validation); " : "")
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
  return md.str();
}

// A run that is not in the tables is named with why (a sweep's run without results, a repeat of
// another run), so that a mean over two seeds is not read as one over the three asked for.
std::string notes_on_runs_left_out(const std::string& dir, std::vector<std::string> left_out) {
  std::ostringstream md;
  for (std::string& name : runs_left_out(dir)) left_out.push_back(std::move(name));
  if (!left_out.empty()) {
    spdlog::warn("{} run(s) of {} are not in the tables: {}", left_out.size(), dir, joined_names(left_out));
    md << "**Not in the tables: " << left_out.size() << " run(s): " << joined_names(left_out) << ".**\n\n";
  }
  if (const auto below = folders_of_runs_below(dir); !below.empty()) {
    spdlog::warn("{} folder(s) of runs below {} are not read: {}", below.size(), dir, joined_names(below));
    md << "**Folders of runs below this one, not read: " << joined_names(below) << ".**\n\n";
  }
  return md.str();
}

// A cell's runs measured on other numbers of samples at one length (--samples, eval.samples
// changed between runs) are estimates of unequal precision: named.
std::string note_on_unequal_samples(const std::vector<RunResults>& runs, const std::string& decode) {
  std::map<int64_t, std::set<int64_t>> samples_by_length;
  for (const RunResults& run : runs) {
    for (const auto& [length, entry] : run.results.at(decode))
      samples_by_length[length].insert(entry.samples);
  }
  std::vector<std::string> unequal_samples;
  for (const auto& [length, counts] : samples_by_length) {
    if (counts.size() > 1)
      unequal_samples.push_back(fmt::format("{} ({})", length, fmt::join(counts, " or ")));
  }
  if (unequal_samples.empty()) return "";
  return "Runs were evaluated on different numbers of samples at length(s) " + joined_names(unequal_samples) +
         ": their cells average estimates of unequal precision.\n\n";
}

// A row reads as the trained model's: results of a step checkpoint before the end of the
// schedule it was trained under (evaluated while training, or stopped early) are named.
std::vector<std::string> runs_not_fully_trained(const std::vector<RunResults>& runs,
                                                const std::string& decode) {
  std::vector<std::string> unfinished;
  for (const RunResults& run : runs) {
    for (const auto& [length, entry] : run.results.at(decode)) {
      if (!entry.model || from_best_checkpoint(entry)) continue;
      const std::optional<ScheduleSegment> last = last_schedule_segment(entry.model->schedule);
      if (last && entry.model->step < last->steps) {
        unfinished.push_back(fmt::format("{} (step {} of {})", run.name, entry.model->step, last->steps));
        break;
      }
    }
  }
  return unfinished;
}

// A run resumed to more train.steps since its results were measured (stopped before its next
// evaluation): its rows are of the model it was then, labelled by what that model trained with.
std::vector<std::string> runs_trained_on_since(const std::vector<RunResults>& runs,
                                               const std::string& decode) {
  std::vector<std::string> trained_on;
  for (const RunResults& run : runs) {
    const fs::path config = fs::path(run.dir) / "config.json";
    if (!fs::exists(config)) continue;
    const nlohmann::json saved = read_json_file(config.string());
    const nlohmann::json steps =
        saved.is_object() ? saved.value(nlohmann::json::json_pointer("/train/steps"), nlohmann::json())
                          : nlohmann::json();
    if (!steps.is_number_integer()) continue;
    // The train.steps its results' models were trained under (their schedule's last segment).
    int64_t trained_to = 0;
    for (const auto& [length, entry] : run.results.at(decode)) {
      const std::optional<ScheduleSegment> last =
          entry.model ? last_schedule_segment(entry.model->schedule) : std::nullopt;
      if (last) trained_to = std::max(trained_to, last->steps);
    }
    if (trained_to > 0 && trained_to < steps.get<int64_t>())
      trained_on.push_back(fmt::format(
          "{} (results of models trained under train.steps={}; its config.json says {}: lengen eval {})",
          run.name, trained_to, steps.get<int64_t>(), run.dir));
  }
  return trained_on;
}

// Whose model a row shows: trained on since, not fully trained, in use now, or mixed.
std::string notes_on_models(const std::string& dir, const std::vector<RunResults>& runs,
                            const std::string& decode) {
  std::ostringstream md;
  const std::vector<std::string> unfinished = runs_not_fully_trained(runs, decode);
  if (const auto trained_on = runs_trained_on_since(runs, decode); !trained_on.empty()) {
    spdlog::warn("{}: runs trained on since their results: {}", dir, joined_names(trained_on));
    md << "**Trained on since their results: " << joined_names(trained_on)
       << " (each row shows the model its results were measured on).**\n\n";
  }
  if (!unfinished.empty()) {
    spdlog::warn("{}: results of models before the end of their training: {}", dir, joined_names(unfinished));
    md << "**Not fully trained: " << joined_names(unfinished)
       << " (results of a checkpoint before the run's train.steps).**\n\n";
  }
  // A run being trained or evaluated now: its results and curves are of a moment, and change.
  std::vector<std::string> busy;
  for (const RunResults& run : runs) {
    if (FolderLock::held_elsewhere(run.dir)) busy.push_back(run.name);
  }
  if (!busy.empty()) {
    spdlog::warn("{} run(s) of {} are being trained or evaluated by another lengen process: {}", busy.size(),
                 dir, joined_names(busy));
    md << "**In training or evaluation while this report was written: " << joined_names(busy)
       << " (their results and curves are those of that moment).**\n\n";
  }
  for (const RunResults& run : runs) {
    if (run.mixed_checkpoints.empty()) continue;
    spdlog::warn(
        "{}: its lengths were evaluated with different checkpoints ({}); `lengen eval {}` scores them all "
        "with one",
        run.name, run.mixed_checkpoints, run.dir);
    md << "**Mixed checkpoints: run " << run.name << "'s lengths come from different models ("
       << run.mixed_checkpoints << "); its row mixes them. `lengen eval " << run.dir
       << "` scores every length with one checkpoint.**\n\n";
  }
  for (const RunResults& run : runs) {
    if (run.mixed_decode_caps.empty()) continue;
    md << "**Mixed decode caps: run " << run.name << "'s greedy lengths were decoded under different "
       << "eval.decode_cap values (" << run.mixed_decode_caps << "); its greedy row mixes them. `lengen eval "
       << run.dir << " --decode greedy` decodes every length under one.**\n\n";
  }
  return md.str();
}

}  // namespace

std::string write_report(const std::string& dir, const ReportOptions& options) {
  const ReportedRuns reported = runs_to_report(dir, options);
  const std::vector<RunResults>& runs = reported.runs;
  const std::string& decode = reported.decode;
  const std::string out_dir = options.out_dir.empty() ? dir : options.out_dir;
  const std::string gnuplot = options.gnuplot == "auto" ? find_gnuplot() : options.gnuplot;
  check_out_is_not_anothers(out_dir, {dir});
  // The folder's list is read holding its lock; only the path is checked before (a file there, the root).
  check_output_folder_path(out_dir);
  // One report at a time in OUT, and none of an earlier report's pages left beside this one's (a
  // layer the new runs do not have).
  const auto writing = lock_output_folder(out_dir);
  replace_earlier_report(out_dir);
  // Multiples of the training length only where the runs share it.
  const int64_t train_len_max = common_train_len_max(runs);
  std::string md = heading(dir, runs, decode, options.on_files, train_len_max);
  md += notes_on_runs_left_out(dir, reported.left_out);
  md += note_on_unequal_samples(runs, decode);
  md += notes_on_models(dir, runs, decode);
  bool all_plotted = true;
  // A plot or its data read alone says what it measures: the decode mode and the data.
  const std::string measured_on =
      ", " + decode + (options.on_files ? ", on --data files" : ", on generated data");
  // One title and one colour per method in every plot of the report.
  const PlotAxes style = report_plot_style(runs, train_len_max);
  for (const MetricSpec& spec : kMetrics) {
    if (!any_run_has(runs, decode, spec.metric)) continue;
    const MetricTable table = metric_table(runs, decode, spec.metric);
    md += "## " + std::string(spec.title) + "\n\n" + markdown_table(table, train_len_max) + "\n";
    write_output_file(out_dir, std::string(spec.metric) + ".csv", csv_table(table, train_len_max));
    const bool plotted =
        plot_metric(table, out_dir, spec.metric, spec.y_label + measured_on, spec.y_range, gnuplot, style);
    if (plotted) md += "![" + std::string(spec.title) + "](" + spec.metric + ".png)\n\n";
    all_plotted = all_plotted && plotted;
  }
  md += attention_on_target_section(runs, decode, out_dir, gnuplot, style);
  md += training_section(runs, out_dir, gnuplot, style);
  if (gnuplot.empty()) {
    md +=
        "Plots skipped: gnuplot is not on PATH. The data (*.dat) and scripts (*.gp) are written; "
        "run `gnuplot NAME.gp` here to draw them.\n";
  } else if (!all_plotted) {
    md += "Some plots could not be drawn (no data or gnuplot failed); see the *.gp scripts.\n";
  }
  md += "\nRuns: ";
  for (size_t i = 0; i < runs.size(); ++i) md += (i ? ", " : "") + runs[i].name;
  md += "\n";
  write_output_file(out_dir, "report.md", md);
  return md;
}

}  // namespace lengen
