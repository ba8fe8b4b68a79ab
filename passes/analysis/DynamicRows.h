//===- DynamicRows.h - one module for a range of a dimension ----*- C++ -*-===//
//
// `dlc compile M --dim N=1..64` writes one module, compiled for N = 64,
// that runs any N in the range (module format 1.3, module.fbs DynamicDim).
// That is sound exactly when every value at N = n is the first rows of the
// same value at N = max: then a run at n computes only those rows (the CPU
// runs a kernel's first rows) or computes all of them over inputs padded
// with valid rows, and its outputs are bit for bit those of a module
// compiled for n.
//
// The analysis proves it on two builds of the model, at max and at a
// second size: the graphs must have the same ops; a value whose type
// differs between them depends on N, and must have N (times a constant) as
// its outermost dimension, or only dimensions of 1 before it (the rows are
// still outermost in memory; the inputs and outputs have it first), and
// nothing else changed; and every op touching
// such a value must keep rows apart, which its sharding rule says
// (ir/ShardingRule.h): splitting the outermost dimension of its dependent
// results into blocks must split the outermost dimension of its dependent
// operands alike, with no other operand dimension on that factor and no
// reduction over it. That is the condition for data parallelism without a
// collective, and a prefix of rows is one block of such a split. Softmax
// over the batch, a concat along it, a transpose moving it inward or a
// loss averaged over it fail, each with the op's location.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_ANALYSIS_DYNAMICROWS_H
#define DLC_PASSES_ANALYSIS_DYNAMICROWS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace dlc {

/// The function attribute naming the dimension ({name, min, max}) and the
/// argument/result attribute (unit) of a tensor whose rows grow with it,
/// also set on every op with such a result.
inline constexpr const char *kDynamicDimAttr = "dlc.dynamic_dim";
inline constexpr const char *kDynamicRowsAttr = "dlc.dynamic_rows";

struct DynamicDimRange {
  std::string name;
  int64_t min = 1, max = 1;
};

/// Checks that `atMax` (built at N = range.max) may serve every N of the
/// range, by comparison with `atProbe`, the same model built at N = probe
/// (another size in the range); on success marks `atMax` (the function
/// attribute and the arguments and results whose rows grow with N), on
/// failure emits an error at the op that prevents it.
mlir::LogicalResult markDynamicRows(mlir::func::FuncOp atMax, mlir::func::FuncOp atProbe,
                                    const DynamicDimRange &range, int64_t probe);

/// The range `func` was marked with, if any.
std::optional<DynamicDimRange> dynamicDimOf(mlir::func::FuncOp func);

} // namespace dlc

#endif // DLC_PASSES_ANALYSIS_DYNAMICROWS_H
