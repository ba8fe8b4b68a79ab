//===- Schedule.cpp - learning rate as a function of the step -------------===//

#include "driver/train/Schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dlc::train {

std::optional<LrScheduleKind> parseLrScheduleKind(const std::string &name) {
  if (name == "constant")
    return LrScheduleKind::Constant;
  if (name == "step")
    return LrScheduleKind::Step;
  if (name == "cosine")
    return LrScheduleKind::Cosine;
  return std::nullopt;
}

const char *lrScheduleName(LrScheduleKind kind) {
  switch (kind) {
  case LrScheduleKind::Constant: return "constant";
  case LrScheduleKind::Step: return "step";
  case LrScheduleKind::Cosine: return "cosine";
  }
  return "?";
}

double LrSchedule::at(int64_t step) const {
  if (step < warmupSteps)
    return base * static_cast<double>(step + 1) / static_cast<double>(warmupSteps);
  int64_t t = step - warmupSteps;
  switch (kind) {
  case LrScheduleKind::Constant:
    return base;
  case LrScheduleKind::Step:
    return base * std::pow(gamma, static_cast<double>(t / stepSize));
  case LrScheduleKind::Cosine: {
    int64_t span = totalSteps - warmupSteps;
    if (span <= 0)
      return base;
    double progress = static_cast<double>(std::min(t, span)) / static_cast<double>(span);
    return minLr + (base - minLr) * (1 + std::cos(M_PI * progress)) / 2;
  }
  }
  return base;
}

std::string checkLrSchedule(const LrSchedule &schedule) {
  if (!(schedule.base > 0) || !std::isfinite(schedule.base)) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", schedule.base);
    return std::string("the learning rate must be a positive number, got ") + text;
  }
  if (schedule.warmupSteps < 0)
    return "--warmup-steps must be at least 0";
  if (schedule.kind == LrScheduleKind::Step) {
    if (schedule.stepSize < 1)
      return "--lr-schedule step needs --lr-step-size of at least 1";
    if (!(schedule.gamma > 0) || !std::isfinite(schedule.gamma))
      return "--lr-gamma must be a positive number";
  }
  if (schedule.kind == LrScheduleKind::Cosine &&
      (!(schedule.minLr >= 0) || schedule.minLr > schedule.base))
    return "--min-lr must lie in [0, the learning rate]";
  return "";
}

} // namespace dlc::train
