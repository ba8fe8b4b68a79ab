//===- State.h - a train step's state and where it is written --*- C++ -*-===//
//
// A train step (docs/design/2026-11-25-training.md §2) has arguments marked
// `dlc.state` and returns each one's new value as a result with the same
// `dlc.state` name. The runtime keeps one buffer per state tensor; the
// kernel computing a new value writes it in place when that is safe, which
// the scheduler, the memory planner, the plan verifier and code generation
// must agree on: they all ask `stateTies`.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_ANALYSIS_STATE_H
#define DLC_PASSES_ANALYSIS_STATE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

namespace dlc {

/// The name of a state argument or result (`dlc.state`), or "".
llvm::StringRef stateName(mlir::func::FuncOp func, unsigned index,
                          bool result);

/// A result that replaces a state argument.
struct StateTie {
  unsigned result;          ///< index among the function's results
  mlir::BlockArgument arg;  ///< the state argument of the same name
  mlir::Value value;        ///< what the function returns for it
  /// The top-level kernel computing `value`; null when `value` is not a
  /// kernel's result (the argument itself: the state does not change).
  mlir::Operation *writer = nullptr;
  /// The writer writes the state's buffer directly. Then every other
  /// kernel reading the argument runs before it (dlc-schedule orders
  /// them, dlc-verify-memory-plan checks it), the writer reads the argument
  /// at most element by element, and the value takes no arena space.
  /// Otherwise the value is copied to the state at the end of the plan.
  bool inPlace = false;
};

/// Every state result of `func`, paired with its argument; an error at the
/// function when a state result has no argument of its name, or two
/// results the same name.
mlir::FailureOr<llvm::SmallVector<StateTie>> stateTies(mlir::func::FuncOp func);

/// The values written straight into state buffers (`inPlace` ties).
llvm::DenseSet<mlir::Value> inPlaceStateValues(mlir::func::FuncOp func);

/// Whether `kernel` (a top-level op) reads `value`, in its own operands or
/// those of ops nested in it.
bool kernelReads(mlir::Operation *kernel, mlir::Value value);

} // namespace dlc

#endif // DLC_PASSES_ANALYSIS_STATE_H
