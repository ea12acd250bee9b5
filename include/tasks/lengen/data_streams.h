#pragma once
// Stream ids for derive_seed(seed, stream): every split draws from its own stream of the run's
// seed, so training, validation and evaluation data never overlap by construction and each
// evaluation length gets the same samples whatever other lengths are asked for.
// make_task() takes the run's seed itself (mqmtar derives its vocabulary from it).
#include <cstdint>

namespace lengen {

constexpr uint64_t kTrainStream = 1;
constexpr uint64_t kValidationStream = 2;

// Named like a constant because it is one per length.
constexpr uint64_t kEvalStream(int64_t length) { return (uint64_t{1} << 32) + static_cast<uint64_t>(length); }

}  // namespace lengen
