//===- Recompute.h - a forward value computed again for the backward -*- C++ -*-===//
//
// The mechanics of rematerialisation (dlc-rematerialize decides what to
// recompute): a train step's *saved activation* is a forward value that its
// backward or update part reads (passes/analysis/TrainStep.h); recomputing
// it clones the forward ops that compute it just before its first backward
// reader and gives the clone to every backward reader, so that the forward
// value dies with its last forward reader. The clones are the same ops on
// the same operands: every value stays what it was.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_AUTODIFF_RECOMPUTE_H
#define DLC_PASSES_AUTODIFF_RECOMPUTE_H

#include "passes/analysis/TrainStep.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace dlc {

/// How costly recomputing `op` is: 1 for element-wise and layout ops, 2 for
/// reductions, normalisations, pooling, data movement and losses, 3 for
/// matmul and conv2d; 0 for what is never recomputed (parameters,
/// constants, regions, other dialects).
int recomputeTier(mlir::Operation *op);

/// The uses of `v` by backward or update ops (the return excluded).
llvm::SmallVector<mlir::OpOperand *>
backwardUses(mlir::Value v, const TrainStepParts &parts);

/// The forward values of `func` that its backward or update part reads, in
/// program order.
llvm::SmallVector<mlir::Value> savedActivations(mlir::func::FuncOp func,
                                                const TrainStepParts &parts);

/// The forward ops to clone for one saved value.
struct RecomputeChain {
  /// In program order, ending with the saved value's op.
  llvm::SmallVector<mlir::Operation *> ops;
  /// The highest recomputeTier among them.
  int tier = 0;
  /// The saved value's reserved bytes less those of the forward values the
  /// clones read that the backward did not read before (kept alive longer).
  int64_t bytesFreed = 0;
  /// FLOPs of the clones.
  int64_t flops = 0;
};

/// The ops that recompute `saved` from what the backward reads anyway
/// (arguments, parameters, constants, saved activations), going up through
/// forward ops of at most `maxTier`; an operand that is neither is read
/// where it is, and kept alive for the clone.
RecomputeChain recomputeChain(mlir::Value saved, int maxTier,
                              const TrainStepParts &parts);

/// Clones `chain` (of `saved`) before the first backward reader of `saved`,
/// marks the clones with kRecomputeAttr and gives the clone of `saved` to
/// every backward reader. An op of the chain that an earlier recomputation
/// cloned already (the same op on the same operands) is not cloned again:
/// that clone is read instead, moved before the reader if it was after it.
/// Returns the
/// value the backward reads now (null when nothing reads `saved` in the
/// backward), and appends the ops cloned to `clones`. `parts` describes the
/// function before.
mlir::Value recompute(mlir::Value saved, const RecomputeChain &chain,
                      const TrainStepParts &parts,
                      llvm::SmallVectorImpl<mlir::Operation *> *clones = nullptr);

} // namespace dlc

#endif // DLC_PASSES_AUTODIFF_RECOMPUTE_H
