//===- KernelAnalysis.h - what a kernel computes, and how it splits -*- C++ -*-===//
//
// A kernel is one top-level op of a compiled function: a dlc.fusion region,
// or a lone op the fusion pass left alone (seen as a region of one op). Its
// ops are either *elemental* (an element of the result at a multi-index is
// computed from operand elements at derived indices: element-wise math,
// broadcast, reshape, transpose, slice, pad, concat, gather, embedding,
// iota) or *stages* (matmul, conv2d, pools, reductions, softmax, norms,
// losses), which a target computes with loops or library calls into
// kernel-local scratch. Elemental ops are never stored: they are inlined
// into the loops that read them (XLA's elemental emitter).
//
// Parallel split: the kernel iterates over the leading `parallelDims`
// dimensions of its results (the *rows*, `rows` of them in all). A call
// computes every stage and every result for a contiguous block of rows;
// this is only chosen when no value crosses rows, so calls are independent.
// When no such split exists, parallelDims is 0: one row, one call.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_COMMON_KERNELANALYSIS_H
#define DLC_CODEGEN_COMMON_KERNELANALYSIS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace dlc::codegen {

/// One kernel as the emitters see it.
struct KernelView {
  mlir::Operation *op = nullptr;               ///< the top-level op
  llvm::SmallVector<mlir::Value> args;         ///< inside: operands as seen by the body
  llvm::SmallVector<mlir::Operation *> body;   ///< in order, without the yield
  llvm::SmallVector<mlir::Value> results;      ///< inside: the values yielded
  /// Per result, the operand whose buffer it takes (dlc.inplace), or -1.
  llvm::SmallVector<int64_t> inplace;
  /// Per operand: defined by a param or constant outside the kernel, so a
  /// module weight, immutable and at one address while the module runs.
  llvm::SmallVector<bool> constantArgs;
};

KernelView viewKernel(mlir::Operation *topLevelOp);


/// True for the ops computed as stages (see the file comment).
bool isStage(mlir::Operation *op);

struct KernelAnalysis {
  /// The stage ops, in body order.
  llvm::SmallVector<mlir::Operation *> stages;
  /// Values whose computation reads a stage result (directly or not).
  llvm::DenseSet<mlir::Value> afterStage;
  /// The split (file comment); rowShape are the sizes of the parallel dims.
  unsigned parallelDims = 0;
  llvm::SmallVector<int64_t> rowShape;
  int64_t rows = 1;
  /// Why the split stops where it does (for the generated comment).
  std::string splitReason;
  /// Results are computed into scratch first and copied out at the end
  /// (an in-place kernel whose results need more than one loop).
  bool stageResultsThroughScratch = false;
  /// Results grouped by shape: each group is one loop nest.
  std::vector<llvm::SmallVector<unsigned>> resultGroups;
  /// Per result, the value whose index space the result loops iterate
  /// (the split's rows are rows of it). It is the result itself unless the
  /// analysis was asked to remap stores (AnalysisOptions) and a result is a
  /// reshape/transpose chain of a value that splits better: then the loops
  /// run over that value and store each element through the chain's index
  /// map. resultGroups group by the iterated values' shapes.
  llvm::SmallVector<mlir::Value> iterated;
  /// The reshape/transpose ops skipped by a store remap (not emitted).
  llvm::DenseSet<mlir::Operation *> remapOps;
  bool remapped = false;
};

struct AnalysisOptions {
  /// Allow iterating a result's rows through a store remap (see
  /// KernelAnalysis::iterated). Off by default: an emitter that sets it
  /// must store through the remap.
  bool remapStores = false;
  /// A kernel whose one stage is an f32/f64 product of a single row (a
  /// classifier at batch 1: a GEMV), followed by element-wise ops only,
  /// splits over the columns (KernelAnalysis::parallelDims is then the
  /// result's rank). Off by default: an emitter that sets it must compute
  /// a column range of the product.
  bool splitSingleRowColumns = false;
};

KernelAnalysis analyzeKernel(const KernelView &kernel,
                             AnalysisOptions options = {});

/// Elements of `value`'s tensor per row of the split.
int64_t elementsPerRow(mlir::Value value, const KernelAnalysis &analysis);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_COMMON_KERNELANALYSIS_H
