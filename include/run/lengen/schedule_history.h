#pragma once
// A model's learning-rate schedule history, as checkpoints and results.json record it: the
// train.steps it was trained under and from which step, one "STEPS@FROM" segment per change
// ("400@0" trained in one go, "400@0,600@200" resumed at step 200 with train.steps=600).
#include <cstdint>
#include <optional>
#include <string>

namespace lengen {

struct ScheduleSegment {
  int64_t steps = 0;  // train.steps from `from` on
  int64_t from = 0;
};

// The last segment of `schedule`; nothing when it is empty or its last segment is no "STEPS@FROM".
std::optional<ScheduleSegment> last_schedule_segment(const std::string& schedule);

// `schedule` continued by a run at `step` that trains under train.steps=`steps`: unchanged when
// its last segment already says so, "" while unknown.
std::string continued_schedule(const std::string& schedule, int64_t step, int64_t steps);

}  // namespace lengen
