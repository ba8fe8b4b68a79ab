//===- Schedule.h - learning rate as a function of the step -----*- C++ -*-===//
//
// The host computes each step's learning rate and passes it to the train
// step as an input (docs/design/2026-11-25-training.md §2), so a schedule
// needs no recompilation. Every schedule is a pure function of the global
// step s (0 for the first step), so a resumed run continues it exactly.
//
//   warm-up (W > 0), s < W:   lr(s) = base * (s + 1) / W
//   then, with t = s - W:
//     constant:  base
//     step:      base * gamma^floor(t / S)
//     cosine:    min + (base - min) * (1 + cos(pi * min(t, T - W) / (T - W))) / 2
//                (T the total number of steps; lr(T - 1) is the last used.
//                 When T <= W the cosine part is never reached.)
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_TRAIN_SCHEDULE_H
#define DLC_DRIVER_TRAIN_SCHEDULE_H

#include <cstdint>
#include <optional>
#include <string>

namespace dlc::train {

enum class LrScheduleKind { Constant, Step, Cosine };

/// "constant", "step", "cosine".
std::optional<LrScheduleKind> parseLrScheduleKind(const std::string &name);
const char *lrScheduleName(LrScheduleKind kind);

struct LrSchedule {
  LrScheduleKind kind = LrScheduleKind::Constant;
  /// The optimizer's learning rate.
  double base = 0;
  /// W: steps of linear warm-up (any kind).
  int64_t warmupSteps = 0;
  /// step: S, and the factor gamma applied every S steps.
  int64_t stepSize = 0;
  double gamma = 0.1;
  /// cosine: T, the run's total number of steps, and the floor.
  int64_t totalSteps = 0;
  double minLr = 0;

  /// The learning rate of global step `step` (>= 0).
  double at(int64_t step) const;
};

/// An empty string, or what is wrong ("--lr-schedule step needs
/// --lr-step-size of at least 1").
std::string checkLrSchedule(const LrSchedule &schedule);

} // namespace dlc::train

#endif // DLC_DRIVER_TRAIN_SCHEDULE_H
