#include "lengen/training_data.h"

#include <functional>
#include <string>

#include "lengen/errors.h"
#include "lengen/rng.h"

namespace lengen {

namespace {

Rng sample_rng(uint64_t seed, int64_t step, int64_t index) {
  return Rng(derive_seed(derive_seed(seed, static_cast<uint64_t>(step)), static_cast<uint64_t>(index)));
}

// Sample k of the batch of `step` drawn by `draw` from its own generator.
class DrawnData : public TrainingData {
 public:
  DrawnData(uint64_t seed, std::function<Sample(Rng&)> draw) : seed_(seed), draw_(std::move(draw)) {}

  std::vector<Sample> batch(int64_t step, int64_t first, int64_t count) const override {
    std::vector<Sample> samples;
    samples.reserve(count);
    for (int64_t k = first; k < first + count; ++k) {
      Rng rng = sample_rng(seed_, step, k);
      samples.push_back(draw_(rng));
    }
    return samples;
  }

 private:
  uint64_t seed_;
  std::function<Sample(Rng&)> draw_;
};

}  // namespace

std::unique_ptr<TrainingData> generated_data(const Task& task, int64_t len_min, int64_t len_max,
                                             uint64_t seed) {
  auto split = std::make_shared<const SplitTask>(task, seed);
  return std::make_unique<DrawnData>(
      seed, [=](Rng& rng) { return (*split)->sample(rng, uniform_int(rng, len_min, len_max)); });
}

std::unique_ptr<TrainingData> file_data(std::vector<Sample> samples, uint64_t seed) {
  auto all = std::make_shared<const std::vector<Sample>>(std::move(samples));
  return std::make_unique<DrawnData>(
      seed, [all](Rng& rng) { return (*all)[uniform_int(rng, 0, static_cast<int64_t>(all->size()) - 1)]; });
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
