#include "lengen/schedule_history.h"

#include <cinttypes>
#include <cstdio>

namespace lengen {

std::optional<ScheduleSegment> last_schedule_segment(const std::string& schedule) {
  ScheduleSegment segment;
  int end = 0;
  const std::string last = schedule.substr(schedule.find_last_of(',') + 1);
  if (std::sscanf(last.c_str(), "%" SCNd64 "@%" SCNd64 "%n", &segment.steps, &segment.from, &end) != 2 ||
      static_cast<size_t>(end) != last.size())
    return std::nullopt;
  return segment;
}

std::string continued_schedule(const std::string& schedule, int64_t step, int64_t steps) {
  const std::string segment = std::to_string(steps) + "@" + std::to_string(step);
  if (schedule.empty()) return step == 0 ? segment : "";
  const std::optional<ScheduleSegment> last = last_schedule_segment(schedule);
  return last && last->steps == steps ? schedule : schedule + "," + segment;
}

}  // namespace lengen
