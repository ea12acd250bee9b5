#include "lengen/progress_line.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>

namespace lengen {

std::string format_duration(double seconds) {
  const auto total = static_cast<int64_t>(seconds + 0.5);
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof(text), "%lldh%02lldm", static_cast<long long>(total / 3600),
                  static_cast<long long>(total % 3600 / 60));
  } else {
    std::snprintf(text, sizeof(text), "%lldm%02llds", static_cast<long long>(total / 60),
                  static_cast<long long>(total % 60));
  }
  return text;
}

ProgressLine::ProgressLine(int64_t total_steps, bool enabled)
    : total_(total_steps),
      enabled_(enabled),
      terminal_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {}

void ProgressLine::update(int64_t step, double loss, double lr, double steps_per_second) {
  if (!enabled_) return;
  const double eta = steps_per_second > 0 ? static_cast<double>(total_ - step) / steps_per_second : 0.0;
  const std::string text = fmt::format("step {}/{}  loss {:.4f}  lr {:.2e}  {:.1f} steps/s  ETA {}", step,
                                       total_, loss, lr, steps_per_second, format_duration(eta));
  show(text);
}

void ProgressLine::show(const std::string& text) {
  if (!enabled_) return;
  if (terminal_) {
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
    std::fflush(stderr);
    line_open_ = true;
  } else {
    spdlog::info("{}", text);
  }
}

void ProgressLine::note(const std::string& message) {
  if (!enabled_) return;
  if (line_open_) std::fputc('\n', stderr);
  line_open_ = false;
  spdlog::info("{}", message);
}

void ProgressLine::finish() {
  if (line_open_) std::fputc('\n', stderr);
  line_open_ = false;
}

}  // namespace lengen
