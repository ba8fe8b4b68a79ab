//===- Legality.h - which ops may share a kernel ----------------*- C++ -*-===//
//
// The rules dlc-fuse groups ops by. Each op has a class (what it does to the
// elements it reads); a set of ops is a legal kernel when it has at most one
// expensive anchor (or the attention pattern's two matmuls, or a
// convolution and the pooling of its activations), and every value
// computed inside is produced in the kernel's own iteration space, so that
// each thread computes each value once from what it loads: no value is
// recomputed, and none is read at another thread's position.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_FUSION_LEGALITY_H
#define DLC_PASSES_FUSION_LEGALITY_H

#include "ir/DlcInterfaces.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace dlc::fusion {

/// What fusion needs of an op is its role (KernelRole, ir/DlcInterfaces.h):
/// element-wise ops and layout remaps join anchors (contraction,
/// convolution, pooling) or rows (RowOpInterface); data movement that
/// selects (slice, pad, concat, gather, embedding) and losses are kernels of
/// their own.

/// True for the ops dlc-fuse puts in regions: the dlc ops of a graph but
/// params, constants and existing fusion regions.
bool isFusible(mlir::Operation *op);

/// `v` without the cast that produced it, if one did: the attention pattern
/// allows the probabilities cast to the second matmul's type.
mlir::Value skipCast(mlir::Value v);

/// The `kind` of a kernel holding `ops` (given in program order), or nullopt
/// when they may not form one kernel. The rules, by the kernel's anchors:
///  * one matmul / conv2d / pool: its operands are loaded (layout load
///    remaps allowed, no element-wise prologue, which would be recomputed
///    per use), and element-wise ops of exactly its result's shape form
///    the epilogue: "contraction", "convolution", "reduction";
///  * row ops only, all over the same input shape S and the same axes A:
///    element-wise ops of shape S (prologue or epilogue) or of the reduced
///    shape; a reduced value may be combined with a full one only in its
///    keepdims form, so every use stays in its row: "reduction";
///  * matmul → element-wise → softmax (last axis) → matmul: "attention",
///    when nothing of the score matrix is needed outside;
///  * conv2d → element-wise → max/avg pool: "convolution", when nothing
///    of the activations before pooling is needed outside (inference; a
///    train step keeps them for the backward pass, so it does not fuse);
///  * element-wise ops only, all of one result shape: "elementwise";
///    layout ops only: "data_movement".
/// A layout op must be a load remap (its operand comes from outside, maybe
/// through other layout ops) or a store remap (only layout ops in the
/// kernel read it), except that a reduced value may be reshaped between its
/// keepdims and dropped forms, or broadcast_to'd back over its rows. A
/// single op is always a legal kernel.
std::optional<llvm::StringRef>
regionKind(llvm::ArrayRef<mlir::Operation *> ops);

} // namespace dlc::fusion

#endif // DLC_PASSES_FUSION_LEGALITY_H
