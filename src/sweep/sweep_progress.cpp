#include "sweep_progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "lengen/json_file.h"
#include "lengen/run_folder.h"

namespace lengen {

namespace {

// The exact match at one length of results.json's "results" -> decode -> length, or NaN.
double exact_match_at(const nlohmann::json& results, const std::string& decode, int64_t length) {
  const nlohmann::json entry = results.value(
      nlohmann::json::json_pointer("/results/" + decode + "/" + std::to_string(length)), nlohmann::json());
  if (!entry.is_object() || !entry.contains("exact_match") || !entry["exact_match"].is_number()) return NAN;
  return entry["exact_match"].get<double>();
}

std::string fixed3(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

}  // namespace

std::string duration_text(double seconds) {
  const auto whole = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  char text[32];
  if (whole < 60) {
    std::snprintf(text, sizeof text, "%llds", static_cast<long long>(whole));
  } else if (whole < 3600) {
    std::snprintf(text, sizeof text, "%lldm%02llds", static_cast<long long>(whole / 60),
                  static_cast<long long>(whole % 60));
  } else {
    std::snprintf(text, sizeof text, "%lldh%02lldm", static_cast<long long>(whole / 3600),
                  static_cast<long long>(whole / 60 % 60));
  }
  return text;
}

std::string exact_match_summary(const PendingRun& run) {
  const std::string path = RunFolder(run.paths.run_dir).results_path();
  nlohmann::json results;
  try {
    results = read_json_file(path);
  } catch (const std::exception&) {
    return "";
  }
  if (!results.is_object() || run.first_length <= 0) return "";
  const double first = exact_match_at(results, run.decode, run.first_length);
  const double longest = exact_match_at(results, run.decode, run.longest_length);
  if (std::isnan(first) && std::isnan(longest)) return "";
  const auto shown = [](double value) { return std::isnan(value) ? std::string("-") : fixed3(value); };
  std::string text = "exact match " + shown(first) + " at " + std::to_string(run.first_length) + " (1x)";
  if (run.longest_length != run.first_length)
    text += ", " + shown(longest) + " at " + std::to_string(run.longest_length);
  return text;
}

SweepProgress::SweepProgress(int64_t total, int64_t jobs, std::string log_path)
    : total_(total),
      jobs_(std::max<int64_t>(1, jobs)),
      live_(isatty(STDERR_FILENO) == 1),
      log_path_(std::move(log_path)),
      start_(Clock::now()) {}

SweepProgress::~SweepProgress() { clear_live_line(); }

void SweepProgress::clear_live_line() {
  if (live_) std::cerr << "\r\033[K" << std::flush;
}

void SweepProgress::started(const PendingRun& run) {
  ++running_;
  started_at_.emplace_back(run.name, Clock::now());
  redraw();
}

void SweepProgress::ended(const PendingRun& run, const std::string& line, bool succeeded) {
  double seconds = 0;
  const auto it = std::find_if(started_at_.begin(), started_at_.end(),
                               [&](const auto& entry) { return entry.first == run.name; });
  if (it != started_at_.end()) {
    seconds = std::chrono::duration<double>(Clock::now() - it->second).count();
    started_at_.erase(it);
  }
  --running_;
  ++done_;
  finished_seconds_ += seconds;
  std::string text = line + " in " + duration_text(seconds);
  if (succeeded) {
    const std::string summary = exact_match_summary(run);
    if (!summary.empty()) text += ": " + summary;
  }
  print(text);
}

void SweepProgress::print(const std::string& line) {
  clear_live_line();
  std::cout << line << std::endl;
  if (!log_path_.empty()) std::ofstream(log_path_, std::ios::app) << line << "\n";
  redraw();
}

void SweepProgress::redraw() {
  if (!live_) return;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const int64_t left = total_ - done_ - running_;
  std::string eta = "ETA after the first run ends";
  if (done_ > 0) {
    // The runs to go at the mean wall time of those done, `jobs` at a time.
    const int64_t to_go = left + running_;
    const double per_run = finished_seconds_ / static_cast<double>(done_);
    const double at_once = static_cast<double>(std::max<int64_t>(1, std::min(jobs_, to_go)));
    eta = "ETA " + duration_text(per_run * static_cast<double>(to_go) / at_once);
  }
  std::cerr << "\r\033[Ksweep: " << done_ << " done, " << running_ << " running, " << left << " left, "
            << duration_text(elapsed) << " elapsed, " << eta << std::flush;
}

}  // namespace lengen
