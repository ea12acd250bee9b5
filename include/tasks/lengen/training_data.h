#pragma once
// Training samples, generated or from .src/.trg files. Sample k of step s depends only on
// (seed, s, k), so a resume or a data-parallel split draws exactly the same data.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lengen/task.h"

namespace lengen {

// `task` as the split drawn from `split_seed` sees it (Task::for_split); `task` must outlive it.
class SplitTask {
 public:
  SplitTask(const Task& task, uint64_t split_seed) : own_(task.for_split(split_seed)), task_(own_ ? *own_ : task) {}
  const Task& operator*() const { return task_; }
  const Task* operator->() const { return &task_; }

 private:
  std::unique_ptr<Task> own_;
  const Task& task_;
};

class TrainingData {
 public:
  virtual ~TrainingData() = default;
  // Samples [first, first + count) of the global batch of `step`.
  virtual std::vector<Sample> batch(int64_t step, int64_t first, int64_t count) const = 0;
};

// Source lengths uniform in [len_min, len_max]; `seed` is the split's seed (SplitTask).
std::unique_ptr<TrainingData> generated_data(const Task& task, int64_t len_min, int64_t len_max, uint64_t seed);

// Samples drawn uniformly (with replacement) from a fixed set, e.g. train.src/.trg.
std::unique_ptr<TrainingData> file_data(std::vector<Sample> samples, uint64_t seed);

// UserError "WHAT LENGTH is shorter than ..." when `length` is below task.min_length().
void check_generated_length(const Task& task, int64_t length, const std::string& what = "length");

// A fixed set of `count` samples of one exact source length (validation and evaluation).
std::vector<Sample> fixed_samples(const Task& task, int64_t length, int64_t count, uint64_t seed);

}  // namespace lengen
