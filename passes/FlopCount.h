//===- FlopCount.h - floating-point operations of a graph -------*- C++ -*-===//
//
// How many floating-point operations a graph does, from each op's own count
// (CostOpInterface): matrix products and convolutions 2 per multiply-add,
// element-wise ops 1 per result element, the composite ops (softmax, norms,
// losses) the handful they do per element, data movement 0.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_FLOPCOUNT_H
#define DLC_PASSES_FLOPCOUNT_H

#include <cstdint>

namespace mlir {
class Operation;
namespace func {
class FuncOp;
}
} // namespace mlir

namespace dlc {

struct FlopCount {
  /// In matrix products and convolutions.
  int64_t contraction = 0;
  /// Everywhere else.
  int64_t other = 0;
  /// Saturated at INT64_MAX, as the parts are.
  int64_t total() const {
    int64_t s;
    return __builtin_add_overflow(contraction, other, &s) ? INT64_MAX : s;
  }
};

/// The operations `op` performs.
FlopCount countFlops(mlir::Operation *op);
/// The sum over a graph.
FlopCount countFlops(mlir::func::FuncOp func);

} // namespace dlc

#endif // DLC_PASSES_FLOPCOUNT_H
