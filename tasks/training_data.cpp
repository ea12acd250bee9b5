#include "lengen/training_data.h"

#include <string>

#include "lengen/errors.h"
#include "lengen/rng.h"

namespace lengen {

namespace {

Rng sample_rng(uint64_t seed, int64_t step, int64_t index) {
  return Rng(derive_seed(derive_seed(seed, static_cast<uint64_t>(step)), static_cast<uint64_t>(index)));
}

class GeneratedData : public TrainingData {
 public:
  GeneratedData(const Task& task, int64_t len_min, int64_t len_max, uint64_t seed)
      : task_(task, seed), len_min_(len_min), len_max_(len_max), seed_(seed) {}

  std::vector<Sample> batch(int64_t step, int64_t first, int64_t count) const override {
    std::vector<Sample> samples;
    samples.reserve(count);
    for (int64_t k = first; k < first + count; ++k) {
      Rng rng = sample_rng(seed_, step, k);
      samples.push_back(task_->sample(rng, uniform_int(rng, len_min_, len_max_)));
    }
    return samples;
  }

 private:
  SplitTask task_;
  int64_t len_min_, len_max_;
  uint64_t seed_;
};

class FileData : public TrainingData {
 public:
  FileData(std::vector<Sample> samples, uint64_t seed) : samples_(std::move(samples)), seed_(seed) {}

  std::vector<Sample> batch(int64_t step, int64_t first, int64_t count) const override {
    std::vector<Sample> samples;
    samples.reserve(count);
    for (int64_t k = first; k < first + count; ++k) {
      Rng rng = sample_rng(seed_, step, k);
      samples.push_back(samples_[uniform_int(rng, 0, static_cast<int64_t>(samples_.size()) - 1)]);
    }
    return samples;
  }

 private:
  std::vector<Sample> samples_;
  uint64_t seed_;
};

}  // namespace

std::unique_ptr<TrainingData> generated_data(const Task& task, int64_t len_min, int64_t len_max, uint64_t seed) {
  return std::make_unique<GeneratedData>(task, len_min, len_max, seed);
}

std::unique_ptr<TrainingData> file_data(std::vector<Sample> samples, uint64_t seed) {
  return std::make_unique<FileData>(std::move(samples), seed);
}

void check_generated_length(const Task& task, int64_t length, const std::string& what) {
  // A generator asked for a length below its minimum has no valid sample to make.
  if (length < task.min_length()) {
    throw UserError(what + " " + std::to_string(length) + " is shorter than " + task.name() +
                    " allows with these parameters (at least " + std::to_string(task.min_length()) + ")");
  }
}

std::vector<Sample> fixed_samples(const Task& task, int64_t length, int64_t count, uint64_t seed) {
  check_generated_length(task, length);
  const SplitTask split(task, seed);
  std::vector<Sample> samples;
  samples.reserve(count);
  for (int64_t k = 0; k < count; ++k) {
    Rng rng = sample_rng(seed, length, k);
    samples.push_back(split->sample(rng, length));
  }
  return samples;
}

}  // namespace lengen
