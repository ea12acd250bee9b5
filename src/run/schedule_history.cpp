#include "lengen/schedule_history.h"

#include <algorithm>
#include <charconv>
#include <system_error>

namespace lengen {

namespace {

// A whole number of at most 18 digits (no sign), the whole of `text`.
std::optional<int64_t> whole_number(const std::string& text) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  int64_t value = 0;
  if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<ScheduleSegment> parse_schedule_segment(const std::string& text) {
  const size_t at = text.find('@');
  if (at == std::string::npos) return std::nullopt;
  const std::optional<int64_t> steps = whole_number(text.substr(0, at));
  const std::optional<int64_t> from = whole_number(text.substr(at + 1));
  if (!steps || !from) return std::nullopt;
  return ScheduleSegment{*steps, *from};
}

std::optional<ScheduleSegment> last_schedule_segment(const std::string& schedule) {
  if (schedule.empty()) return std::nullopt;
  return parse_schedule_segment(schedule.substr(schedule.find_last_of(',') + 1));
}

std::string continued_schedule(const std::string& schedule, int64_t step, int64_t steps) {
  const std::string segment = std::to_string(steps) + "@" + std::to_string(step);
  if (schedule.empty()) return step == 0 ? segment : "";
  const std::optional<ScheduleSegment> last = last_schedule_segment(schedule);
  if (last && last->steps == steps) return schedule;
  return schedule + "," + segment;
}

}  // namespace lengen
