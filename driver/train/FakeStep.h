//===- FakeStep.h - a hand-written train step, for tests ---------*- C++ -*-===//
//
// TEST-ONLY. A TrainStep and Evaluator computed on the host with
// hand-written gradients, so the loop, the data, checkpoints, resumption
// and logs can be tested end to end without the compiler:
//
//   linear:F     inputs x: f32[N, F], y: f32[N]; state w: f32[F], b: f32[]
//                loss "mse": mean((x.w + b - y)^2)
//   softmax:FxC  inputs x: f32[N, F], label: i32[N]; state w: f32[F, C],
//                b: f32[C]; loss "cross_entropy" of the logits x.w + b
//
// plus the optimizer's state as the design note names it (`w.m`, `w.v` for
// adam and adamw, `w.momentum` for sgd, and `step`). Optimizers: sgd
// (momentum 0.9), adam (beta1 0.9, beta2 0.999, epsilon 1e-8), adamw (adam
// with decoupled weight decay 0.01). `w` starts from he(seed), `b` from
// zeros. All arithmetic is in a fixed order, so a run is bit-reproducible.
//
// `dlc train --fake-step=SPEC` (a hidden flag) selects it; it lives in its
// own library so that only the tool and the tests link it.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_TRAIN_FAKESTEP_H
#define DLC_DRIVER_TRAIN_FAKESTEP_H

#include "driver/train/TrainStep.h"

#include <memory>

namespace dlc::train {

struct FakeStepOptions {
  enum class Kind { Linear, Softmax };
  Kind kind = Kind::Linear;
  int64_t features = 1;
  /// Softmax only.
  int64_t classes = 2;
  std::string modelName = "fake";
  /// "sgd", "adam" or "adamw".
  std::string optimizer = "adam";
  double learningRate = 0.01;
  /// Of w's he initialiser.
  uint64_t initSeed = 1;
};

/// Parses "linear:F" or "softmax:FxC" into `options` (kind and sizes).
bool parseFakeStepSpec(const std::string &spec, FakeStepOptions &options,
                       std::string &error);

/// Fails (empty pointer, `error` set) for an unknown optimizer.
std::unique_ptr<TrainStep> makeFakeTrainStep(const FakeStepOptions &options,
                                             std::string &error);
std::unique_ptr<Evaluator> makeFakeEvaluator(const FakeStepOptions &options);

} // namespace dlc::train

#endif // DLC_DRIVER_TRAIN_FAKESTEP_H
