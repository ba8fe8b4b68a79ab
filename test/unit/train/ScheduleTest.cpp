//===- ScheduleTest.cpp - learning-rate schedules against hand values ------===//
#include "driver/train/Schedule.h"

#include <gtest/gtest.h>

using namespace dlc::train;

namespace {

TEST(ScheduleTest, Constant) {
  LrSchedule s;
  s.base = 0.01;
  for (int64_t step : {0, 1, 1000})
    EXPECT_EQ(s.at(step), 0.01);
}

TEST(ScheduleTest, StepDecaysEverySSteps) {
  LrSchedule s;
  s.kind = LrScheduleKind::Step;
  s.base = 0.1;
  s.stepSize = 3;
  s.gamma = 0.5;
  // 0.1 for steps 0-2, 0.05 for 3-5, 0.025 for 6-8.
  const double expected[] = {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.0125};
  for (int64_t step = 0; step < 10; ++step)
    EXPECT_DOUBLE_EQ(s.at(step), expected[step]) << step;
}

TEST(ScheduleTest, CosineFromBaseToMin) {
  LrSchedule s;
  s.kind = LrScheduleKind::Cosine;
  s.base = 1;
  s.totalSteps = 10;
  EXPECT_DOUBLE_EQ(s.at(0), 1);
  EXPECT_DOUBLE_EQ(s.at(2), 0.9045084971874737); // (1 + cos(pi/5)) / 2
  EXPECT_DOUBLE_EQ(s.at(5), 0.5);
  EXPECT_DOUBLE_EQ(s.at(8), 0.09549150281252633); // (1 + cos(4pi/5)) / 2
  EXPECT_NEAR(s.at(10), 0, 1e-16);
  EXPECT_NEAR(s.at(50), 0, 1e-16); // held past the end
  s.minLr = 0.1;
  EXPECT_DOUBLE_EQ(s.at(5), 0.55);
}

TEST(ScheduleTest, LinearWarmupThenCosine) {
  LrSchedule s;
  s.kind = LrScheduleKind::Cosine;
  s.base = 0.4;
  s.warmupSteps = 4;
  s.totalSteps = 14;
  EXPECT_DOUBLE_EQ(s.at(0), 0.1);
  EXPECT_DOUBLE_EQ(s.at(1), 0.2);
  EXPECT_DOUBLE_EQ(s.at(3), 0.4);
  EXPECT_DOUBLE_EQ(s.at(4), 0.4);   // the cosine's start
  EXPECT_DOUBLE_EQ(s.at(9), 0.2);   // half way through its 10 steps
  EXPECT_NEAR(s.at(14), 0, 1e-16);
  // Warm-up before a step schedule counts the decay from its end.
  s.kind = LrScheduleKind::Step;
  s.stepSize = 2;
  s.gamma = 0.5;
  EXPECT_DOUBLE_EQ(s.at(4), 0.4);
  EXPECT_DOUBLE_EQ(s.at(5), 0.4);
  EXPECT_DOUBLE_EQ(s.at(6), 0.2);
}

TEST(ScheduleTest, BadSchedulesAreExplained) {
  LrSchedule s;
  EXPECT_EQ(checkLrSchedule(s), "the learning rate must be a positive number, got 0");
  s.base = 0.1;
  EXPECT_EQ(checkLrSchedule(s), "");
  s.kind = LrScheduleKind::Step;
  EXPECT_EQ(checkLrSchedule(s), "--lr-schedule step needs --lr-step-size of at least 1");
  s.kind = LrScheduleKind::Cosine;
  s.minLr = 0.5;
  EXPECT_EQ(checkLrSchedule(s), "--min-lr must lie in [0, the learning rate]");
  EXPECT_EQ(parseLrScheduleKind("cosine"), LrScheduleKind::Cosine);
  EXPECT_EQ(parseLrScheduleKind("linear"), std::nullopt);
}

} // namespace
