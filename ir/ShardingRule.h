//===- ShardingRule.h - how an op's dimensions may split over a mesh -*- C++ -*-===//
//
// The factor form of GSPMD and Shardy: an op's iteration space has factors;
// each dimension of each operand and result is one factor, or whole (-1).
// Element-wise: result dim i and each operand's aligned dim i are one
// factor. Matmul [M, K] x [K, N]: factors M, K, N; K is in no result, a
// reduction, so splitting it leaves partial sums. The partitioner
// (passes/partition) gives each factor at most one mesh axis per op, from
// the shardings its operands already have, and derives the results'.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_IR_SHARDINGRULE_H
#define DLC_IR_SHARDINGRULE_H

#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir {
class Operation;
}

namespace dlc {

/// How a split reduction factor combines across the mesh axis.
enum class PartialKind { None, Sum, Max, Min, Avg };

struct ShardingRule {
  /// Per operand and per result, per dimension: its factor, or -1 (whole).
  llvm::SmallVector<llvm::SmallVector<int64_t, 4>, 4> operands, results;
  /// Each factor's size.
  llvm::SmallVector<int64_t, 8> factorSizes;
  /// Per factor: for a reduction factor (in no result), how the results
  /// combine when it is split; None forbids splitting it.
  llvm::SmallVector<PartialKind, 8> reductions;

  /// A new factor of `size` (and its reduction kind); returns its index.
  int64_t addFactor(int64_t size, PartialKind reduction = PartialKind::None);
  int64_t numFactors() const { return static_cast<int64_t>(factorSizes.size()); }
  /// Every dimension of every operand and result whole.
  static ShardingRule whole(mlir::Operation *op);
};

/// Element-wise ops' rule (and the interface's default): the result's dims
/// are factors; each operand dim aligned with one from the right (NumPy)
/// shares its factor unless it is a broadcast size-1 dim.
ShardingRule elementwiseShardingRule(mlir::Operation *op);

/// One result whose dims map to operand 0's through `resultToOperand`
/// (each result dim's operand dim, or -1 for a whole new dim); operand
/// dims not mapped are whole, other operands whole.
ShardingRule passThroughShardingRule(mlir::Operation *op,
                                     llvm::ArrayRef<int64_t> resultToOperand);

} // namespace dlc

#endif // DLC_IR_SHARDINGRULE_H
