#include "sweep_children.h"

#include <spdlog/fmt/fmt.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>

#include "lengen/atomic_write.h"
#include "lengen/child_processes.h"
#include "lengen/json_file.h"
#include "lengen/progress_line.h"
#include "lengen/run_folder.h"
#include "lengen/stop_signals.h"

namespace lengen {

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kSweepProgressLog = "sweep_progress.txt";  // .txt: no run's name can take it

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// "exact match 100.0% at 16 (1x), 25.0% at 256; token accuracy 100.0%, 81.2%" from the run's
// results.json (token accuracy shows learning before any whole answer is right); "" when it holds
// neither length (a run that failed, or results another run wrote).
std::string exact_match_summary(const PendingRun& run) {
  nlohmann::json results;
  try {
    results = read_json_file(RunFolder(run.paths.run_dir).results_path());
  } catch (const std::exception&) {
    return "";
  }
  const auto at = [&](int64_t length, const char* metric) {
    const auto entry = results.value(
        nlohmann::json::json_pointer("/results/" + run.decode + "/" + std::to_string(length) + "/" + metric),
        nlohmann::json());
    return entry.is_number() ? fmt::format("{:.1f}%", 100 * entry.get<double>()) : "-";
  };
  if (!results.is_object() || run.first_length <= 0) return "";
  const std::string first = at(run.first_length, "exact_match"),
                    longest = at(run.longest_length, "exact_match");
  if (first == "-" && longest == "-") return "";
  std::string text = "exact match " + first + " at " + std::to_string(run.first_length) + " (1x)";
  std::string tokens = "; token accuracy " + at(run.first_length, "token_accuracy");
  if (run.longest_length != run.first_length) {
    text += ", " + longest + " at " + std::to_string(run.longest_length);
    tokens += ", " + at(run.longest_length, "token_accuracy");
  }
  return text + tokens;
}

// One line per run that starts or ends (stdout and the progress log), and on a terminal one live
// line: runs done, running and left, elapsed, an ETA from the mean wall time of the runs done.
class SweepProgress {
 public:
  SweepProgress(int64_t total, int64_t jobs, std::string log_path)
      : total_(total), jobs_(jobs), live_(isatty(STDERR_FILENO) == 1), log_path_(std::move(log_path)) {}
  ~SweepProgress() { clear_live_line(); }

  void started(const PendingRun& run) {
    ++running_;
    started_at_[run.name] = Clock::now();
    redraw();
  }

  // `line` with the run's wall time and, when it succeeded, its exact match.
  void ended(const PendingRun& run, const std::string& line, bool succeeded) {
    const double seconds = seconds_since(started_at_[run.name]);
    --running_;
    ++done_;
    finished_seconds_ += seconds;
    const std::string summary = succeeded ? exact_match_summary(run) : "";
    // "[3/12] done NAME": a sweep in the background says how far it is in its progress log too.
    print(fmt::format("[{}/{}] ", done_, total_) + line + " in " + format_duration(seconds) +
          (summary.empty() ? "" : ": " + summary));
  }

  void print(const std::string& line) {
    clear_live_line();
    std::cout << line << std::endl;
    if (!log_path_.empty()) std::ofstream(log_path_, std::ios::app) << line << "\n";
    redraw();
  }

  void redraw() {
    if (!live_) return;
    const int64_t left = total_ - done_ - running_, to_go = left + running_;
    // The runs to go at the mean wall time of those done, `jobs` at a time.
    const std::string eta =
        done_ == 0
            ? "ETA after the first run ends"
            : "ETA " + format_duration(finished_seconds_ / static_cast<double>(done_) *
                                       static_cast<double>(to_go) /
                                       static_cast<double>(std::max<int64_t>(1, std::min(jobs_, to_go))));
    std::cerr << "\r\033[Ksweep: " << done_ << " done, " << running_ << " running, " << left << " left, "
              << format_duration(seconds_since(start_)) << " elapsed, " << eta << std::flush;
  }

 private:
  void clear_live_line() {
    if (live_) std::cerr << "\r\033[K" << std::flush;
  }
  int64_t total_, jobs_, done_ = 0, running_ = 0;
  double finished_seconds_ = 0;
  bool live_;
  std::string log_path_;
  Clock::time_point start_ = Clock::now();
  std::map<std::string, Clock::time_point> started_at_;
};

std::string last_lines(const std::string& path, int count) {
  std::ifstream in(path);
  const std::string text(std::istreambuf_iterator<char>(in), {});
  size_t at = text.size();
  for (int i = 0; i <= count && at != 0 && at != std::string::npos; ++i) at = text.rfind('\n', at - 1);
  return at == 0 || at == std::string::npos ? text : text.substr(at + 1);
}

// Records how one child ended and says so; `stop_forwarded`: this sweep passed a stop signal on to it.
void record_exit(const PendingRun& run, int status, bool stop_forwarded, SweepTally& tally,
                 SweepProgress& progress) {
  const int code = exit_code_of(status);
  if (code == 0) {
    ++tally.succeeded;
    std::error_code ignored;  // a note left behind is read only for a run without results
    std::filesystem::remove(run.paths.failure, ignored);
    progress.ended(run, "done " + run.name, true);
  } else if (code == kInterruptedExitCode ||
             (stop_forwarded && (code == 128 + SIGINT || code == 128 + SIGTERM))) {
    // Stopped as asked, or ended by the signal while still starting up: it has not failed.
    tally.interrupted.push_back(run.name);
    const bool kept = !RunFolder(run.paths.run_dir).latest_checkpoint().empty();
    progress.ended(
        run,
        "stopped " + run.name +
            (kept ? " (interrupted, checkpoint kept)" : " (interrupted before its first checkpoint)"),
        false);
  } else {
    tally.failed.push_back(run.name);
    // NAME.failure.txt: the exit code (its first line, which the report quotes), then the log's end.
    std::string log_end = last_lines(run.paths.log, 20);
    if (!log_end.empty() && log_end.back() != '\n') log_end += '\n';
    write_file_atomically(run.paths.failure, "exit code " + std::to_string(code) + "\n" + log_end);
    progress.ended(run,
                   "FAIL " + run.name + " (exit code " + std::to_string(code) + "), see " + run.paths.failure,
                   false);
  }
}

}  // namespace

bool run_children(const std::vector<PendingRun>& queue, int64_t jobs, SweepTally& tally) {
  StopSignals stop_signals;
  const std::string progress_log =
      queue.empty()
          ? ""
          : (std::filesystem::path(queue.front().paths.log).parent_path() / kSweepProgressLog).string();
  SweepProgress progress(static_cast<int64_t>(queue.size()), jobs, progress_log);
  std::map<pid_t, const PendingRun*> running;
  bool stop_forwarded = false;
  size_t next = 0;
  while (next < queue.size() || !running.empty()) {
    while (!stop_signal_received() && next < queue.size() && static_cast<int64_t>(running.size()) < jobs) {
      const PendingRun& run = queue[next++];
      progress.print("start " + run.name + " (log: " + run.paths.log + ")");
      running.emplace(start_child({run.argv, {}, run.paths.log}), &run);
      progress.started(run);
    }
    if (running.empty()) break;
    // Woken each second to move the live line's clock on.
    const ChildWait wait = wait_for_children_or_stop(Clock::now() + std::chrono::seconds(1));
    progress.redraw();
    if (wait.stop_signal != 0) {
      stop_forwarded = true;
      std::vector<pid_t> pids;
      for (const auto& entry : running) pids.push_back(entry.first);
      signal_children(pids, wait.stop_signal);
    }
    for (const ChildEnd& end : wait.ended) {
      const auto it = running.find(end.pid);
      if (it == running.end()) continue;
      record_exit(*it->second, end.status, stop_forwarded, tally, progress);
      running.erase(it);
    }
  }
  tally.not_started = static_cast<int64_t>(queue.size() - next);
  return stop_signal_received();
}

void print_summary(const std::string& out, const SweepTally& tally) {
  std::cout << "sweep " << out << ": " << tally.succeeded << " trained, " << tally.skipped
            << " already finished, " << tally.failed.size() << " failed";
  if (!tally.interrupted.empty()) std::cout << ", " << tally.interrupted.size() << " interrupted";
  if (tally.busy > 0) std::cout << ", " << tally.busy << " in use by another process (not touched)";
  if (tally.not_started > 0) std::cout << ", " << tally.not_started << " not started (interrupted)";
  std::cout << "\n";
  for (const auto& name : tally.failed)
    std::cout << "  failed: " << name << " (" << out << "/" << name << kSweepFailureSuffix << ")\n";
  if (!tally.interrupted.empty() || tally.not_started > 0) {
    std::cout << "rerun the same command to resume the interrupted runs and start the others\n";
  }
}

}  // namespace lengen
