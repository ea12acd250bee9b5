#include "lengen/rng.h"

#include <gtest/gtest.h>

#include <vector>

namespace lengen {
namespace {

TEST(Rng, UniformIntStaysInRangeAndCoversIt) {
  Rng rng(7);
  std::vector<int> counts(5, 0);
  for (int i = 0; i < 5000; ++i) {
    int64_t draw = uniform_int(rng, 3, 7);
    ASSERT_GE(draw, 3);
    ASSERT_LE(draw, 7);
    ++counts[draw - 3];
  }
  for (int count : counts) EXPECT_NEAR(count, 1000, 150);
}

TEST(Rng, SequenceIsFixedByTheSeed) {
  // mt19937_64 is specified by the standard: the 10000th draw from the default seed.
  Rng rng(5489u);
  rng.discard(9999);
  EXPECT_EQ(rng(), 9981545732273789042ULL);
  Rng a(3), b(3);
  EXPECT_EQ(uniform_int(a, 0, 1000000), uniform_int(b, 0, 1000000));
  EXPECT_EQ(uniform01(a), uniform01(b));
}

TEST(Rng, DerivedSeedsDiffer) {
  EXPECT_NE(derive_seed(1, 0), derive_seed(1, 1));
  EXPECT_NE(derive_seed(1, 0), derive_seed(2, 0));
}

}  // namespace
}  // namespace lengen
