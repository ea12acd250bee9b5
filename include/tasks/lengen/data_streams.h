#pragma once
// Stream ids for derive_seed(seed, stream): each split draws from its own stream, so splits never
// overlap and each evaluation length gets the same samples whatever others are asked for.
#include <cstdint>

namespace lengen {

constexpr uint64_t kTrainStream = 1;
constexpr uint64_t kValidationStream = 2;

// Named like a constant because it is one per length.
constexpr uint64_t kEvalStream(int64_t length) { return (uint64_t{1} << 32) + static_cast<uint64_t>(length); }

}  // namespace lengen
