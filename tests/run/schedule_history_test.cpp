// The schedule history checkpoints and results.json record: read one way everywhere.
#include "lengen/schedule_history.h"

#include <gtest/gtest.h>

namespace lengen {
namespace {

TEST(ScheduleHistory, TheLastSegmentIsRead) {
  ASSERT_TRUE(last_schedule_segment("400@0,600@200"));
  EXPECT_EQ(last_schedule_segment("400@0,600@200")->steps, 600);
  EXPECT_EQ(last_schedule_segment("400@0,600@200")->from, 200);
  EXPECT_FALSE(last_schedule_segment(""));
  EXPECT_FALSE(last_schedule_segment("400@0,"));
  EXPECT_FALSE(last_schedule_segment("600@0x"));
}

// The history grows only where train.steps changed, and stays unknown once unknown.
TEST(ScheduleHistory, GrowsWhereTrainStepsChange) {
  EXPECT_EQ(continued_schedule("", 0, 400), "400@0");
  EXPECT_EQ(continued_schedule("400@0", 200, 400), "400@0");
  EXPECT_EQ(continued_schedule("400@0", 200, 600), "400@0,600@200");
  EXPECT_EQ(continued_schedule("400@0,600@200", 300, 600), "400@0,600@200");
  EXPECT_EQ(continued_schedule("", 50, 400), "");
}

}  // namespace
}  // namespace lengen
