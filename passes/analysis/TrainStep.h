//===- TrainStep.h - forward, backward and update of a train step -*- C++ -*-===//
//
// The parts of a train step (dlc-differentiate's output,
// docs/design/2026-11-25-training.md §2), told apart from the IR alone, on
// unfused and fused IR alike:
//
// - **forward**: the ops the loss depends on;
// - **update**: the ops that depend on the learning rate (`lr`) or on
//   optimizer state (a `dlc.state` argument the forward does not read:
//   moments, the step counter), and the element-wise ops that only prepare
//   a gradient for them (read by update ops alone, reading no activation:
//   Adam's g² and (1 - β₁)·g);
// - **backward**: every other op (the gradients, clipping's norm, and what
//   dlc-rematerialize recomputes).
//
// A kernel (Liveness.h) runs in the forward *phase* when it computes a
// forward op, else in the update phase when it computes an update op, else
// in the backward phase. Its result buffers are then **saved** (a forward
// kernel's buffer that a later phase reads: an activation kept for the
// backward pass), **gradients** (a backward kernel's), **new state** (the
// new value of a state argument, returned), or **temporaries** (the rest:
// forward values only the forward reads, the update's intermediates).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_ANALYSIS_TRAINSTEP_H
#define DLC_PASSES_ANALYSIS_TRAINSTEP_H

#include "passes/analysis/Liveness.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace dlc {

/// A `dlc.train_step` function: what dlc-differentiate makes of a loss graph.
bool isTrainStep(mlir::func::FuncOp func);

enum class StepPart { Forward, Backward, Update };

/// Marks an op that dlc-rematerialize cloned from a forward op to run in the
/// backward pass (a unit attribute). dlc-fuse never puts such an op in the
/// kernel of a non-recomputed op whose result it reads.
inline constexpr llvm::StringLiteral kRecomputeAttr = "dlc.recompute";

enum class BufferRole { Saved, Gradient, NewState, Temporary };

class TrainStepParts {
public:
  /// Classifies every op of `func`, in fusion regions too. The loss is
  /// result 0; without a `dlc.train_step` attribute every op is forward.
  explicit TrainStepParts(mlir::func::FuncOp func);

  /// The part of `op`, an op that computes (not a dlc.fusion: the ops in it).
  StepPart part(mlir::Operation *op) const;
  /// The phase of a kernel: of a dlc.fusion, by the ops inside.
  StepPart phase(mlir::Operation *kernel) const;
  /// What buffer `index` of `liveness` (planned from the same function)
  /// holds.
  BufferRole role(const BufferLiveness &liveness, unsigned index) const;

private:
  llvm::DenseSet<mlir::Operation *> forward, update;
  llvm::DenseSet<unsigned> forwardArguments;
};

/// The bytes and allocations of each role live at `step` (an allocation
/// counts as the buffer of its chain live there, the one written last; new
/// state written in place takes no arena space and is not counted).
struct PeakBreakdown {
  int64_t bytes[4] = {0, 0, 0, 0};
  unsigned buffers[4] = {0, 0, 0, 0};
  int64_t of(BufferRole role) const { return bytes[unsigned(role)]; }
  unsigned count(BufferRole role) const { return buffers[unsigned(role)]; }
};
PeakBreakdown breakDownStep(const BufferLiveness &liveness,
                            const TrainStepParts &parts, int64_t step);

/// FLOPs per part (CostOpInterface, as FlopCount.h counts them); the
/// recomputed ops (kRecomputeAttr), part of the backward, also on their own.
struct StepFlops {
  int64_t forward = 0, backward = 0, update = 0, recomputed = 0;
  int64_t total() const { return forward + backward + update; }
};
StepFlops countStepFlops(mlir::func::FuncOp func, const TrainStepParts &parts);

} // namespace dlc

#endif // DLC_PASSES_ANALYSIS_TRAINSTEP_H
