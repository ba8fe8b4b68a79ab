//===- Liveness.h - arena buffers and their live ranges ---------*- C++ -*-===//
//
// The memory model that dlc-schedule, dlc-plan-memory and
// dlc-verify-memory-plan share (docs/design/2026-11-22-memory-planning.md).
// A graph's top-level ops other than parameters, constants and the return
// are *kernels*, run one per step in block order; each kernel result is one
// arena buffer, live from its kernel's step to the last step that reads it
// (graph outputs: to the last step). Parameters and constants live in the
// weight section and graph inputs in the caller's buffers: neither is a
// buffer here.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_ANALYSIS_LIVENESS_H
#define DLC_PASSES_ANALYSIS_LIVENESS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace dlc {

/// Every offset in the arena, and every buffer's reserved size, is a
/// multiple of this.
inline constexpr int64_t kArenaAlignment = 256;

/// `bytes` rounded up to kArenaAlignment.
inline int64_t alignToArena(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

/// Whether `op`, a top-level op of a graph, is a kernel: every op but the
/// terminator, `dlc.param` and `dlc.constant`.
bool isKernel(mlir::Operation *op);

/// The kernels of `func`'s body, in block order.
llvm::SmallVector<mlir::Operation *> kernelsOf(mlir::func::FuncOp func);

/// Fails, with an error at the first kernel whose result is not a
/// statically shaped tensor (which has no size to plan), unless every
/// kernel result of `func` is one.
mlir::LogicalResult checkStaticResults(mlir::func::FuncOp func);

/// The (operand, result) index pairs for which `kernel` may write the
/// result into the operand's buffer. Either the kernel is an element-wise
/// op (the unary and binary ops, gelu, cast, compare, select, reshape,
/// broadcast_to), or a dlc.fusion in which the operand is read only by
/// such ops, through values of its own element count, and the result is
/// one of those values; in both, the operand and the result have the same
/// element count and byte size. So element i of the result is computed
/// from element i of the operand alone, and a kernel that reads it just
/// before writing it may share the buffer. Whether the operand's buffer may
/// be given up (it dies here) is the caller's business.
llvm::SmallVector<std::pair<unsigned, unsigned>>
inPlaceCandidates(mlir::Operation *kernel);

/// One kernel result.
struct Buffer {
  mlir::Value value;
  /// Bytes of its elements, and the aligned size it reserves.
  int64_t bytes = 0, size = 0;
  /// The steps where it is written and last read (inclusive).
  int64_t first = 0, last = 0;
  /// Returned by the graph: live to the last step, never given up.
  bool isOutput = false;
  /// The buffer whose memory it reuses in place, or -1.
  int donor = -1;
  /// The allocation it lies in.
  unsigned allocation = 0;
};

/// A block of the arena: one buffer, or a chain of buffers each written in
/// place of the one before. Its live range is the union of theirs.
struct Allocation {
  int64_t size = 0, first = 0, last = 0;
  llvm::SmallVector<unsigned, 2> buffers;
};

struct BufferLiveness {
  llvm::SmallVector<mlir::Operation *> kernels;
  std::vector<Buffer> buffers;
  llvm::DenseMap<mlir::Value, unsigned> bufferOf;
  std::vector<Allocation> allocations;
  /// The largest sum of allocation sizes live at one step (a lower bound on
  /// any arena for this schedule), and the first step where it is reached.
  int64_t peakBytes = 0, peakStep = 0;
  /// The sum of every buffer's size: the arena with no reuse at all.
  int64_t naiveBytes = 0;

  /// The buffer of kernel result `v`, or -1 when `v` is not in the arena.
  int lookup(mlir::Value v) const {
    auto it = bufferOf.find(v);
    return it == bufferOf.end() ? -1 : int(it->second);
  }
};

/// The buffers of `kernels` run in this order (which must be topological),
/// each in its own allocation.
BufferLiveness analyzeBuffers(llvm::ArrayRef<mlir::Operation *> kernels);

/// The in-place reuses (donor, result buffer) to make: walking the steps in
/// order, a result takes the buffer of the first operand that
/// inPlaceCandidates allows, that dies at this step, is not a graph output
/// and has not been given to another result.
llvm::SmallVector<std::pair<unsigned, unsigned>>
chooseInPlace(const BufferLiveness &liveness);

/// Groups the buffers into allocations, `inPlace` pairs (donor, result)
/// sharing one, and recomputes the peak.
void groupAllocations(BufferLiveness &liveness,
                      llvm::ArrayRef<std::pair<unsigned, unsigned>> inPlace);

} // namespace dlc

#endif // DLC_PASSES_ANALYSIS_LIVENESS_H
