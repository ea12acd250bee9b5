#include "step_scaling.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace lengen::config {

namespace {

// A short run still validates (and checkpoints) about this many times.
constexpr int64_t kPointsPerShortRun = 10;

// "train.warmup 1000 -> 12" appended to `note` when `value` changed from `before`.
void note_change(std::string& note, const char* key, int64_t before, int64_t value) {
  if (before == value) return;
  note += std::string(note.empty() ? "" : ", ") + key + " " + std::to_string(before) + " -> " +
          std::to_string(value);
}

}  // namespace

std::string scale_schedule_to_steps(TrainConfig& train, const TrainConfig& as_written,
                                    const std::set<std::string>& keys_set) {
  const int64_t steps = train.steps;
  if (!keys_set.count("train.steps") || steps >= as_written.steps || as_written.steps < 1) return "";
  const auto left_alone = [&](const char* key) { return keys_set.count(key) == 0; };
  std::string note;
  if (left_alone("train.warmup") && train.warmup > steps) {
    const double fraction = static_cast<double>(train.warmup) / static_cast<double>(as_written.steps);
    const int64_t warmup = std::min(steps, static_cast<int64_t>(std::llround(fraction * steps)));
    note_change(note, "train.warmup", train.warmup, warmup);
    train.warmup = warmup;
  }
  const int64_t every = std::max<int64_t>(1, steps / kPointsPerShortRun);
  for (auto [key, value] : {std::pair<const char*, int64_t*>{"train.eval_every", &train.eval_every},
                            {"train.checkpoint_every", &train.checkpoint_every}}) {
    if (!left_alone(key) || *value <= every) continue;
    note_change(note, key, *value, every);
    *value = every;
  }
  if (note.empty()) return "";
  return "train.steps=" + std::to_string(steps) + " is below the config's " +
         std::to_string(as_written.steps) + ": scaled " + note + " (--set any of them to choose it yourself)";
}

}  // namespace lengen::config
