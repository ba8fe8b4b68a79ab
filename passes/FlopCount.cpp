//===- FlopCount.cpp - floating-point operations of a graph ---------------===//
//
// Sums what each op says it costs (CostOpInterface), split by role.
//
//===----------------------------------------------------------------------===//

#include "passes/FlopCount.h"

#include "ir/DlcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace dlc {

/// The product of non-negative counts, saturated at INT64_MAX (a FLOP count
/// past 2^63 must not wrap to 0 or a negative number).
static int64_t saturatingProduct(std::initializer_list<int64_t> factors) {
  int64_t p = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(p, f, &p))
      return INT64_MAX;
  return p;
}
static int64_t saturatingSum(int64_t a, int64_t b) {
  int64_t s;
  return __builtin_add_overflow(a, b, &s) ? INT64_MAX : s;
}

FlopCount countFlops(Operation *op) {
  FlopCount count;
  auto cost = dyn_cast<CostOpInterface>(op);
  if (!cost || isa<FusionOp>(op)) // a region's ops are counted one by one
    return count;
  KernelRole role = kernelRoleOf(op);
  bool contraction =
      role == KernelRole::Contraction || role == KernelRole::Convolution;
  (contraction ? count.contraction : count.other) = cost.getFlops();
  return count;
}

FlopCount countFlops(func::FuncOp func) {
  FlopCount total;
  func.walk([&](Operation *op) {
    FlopCount c = countFlops(op);
    total.contraction = saturatingSum(total.contraction, c.contraction);
    total.other = saturatingSum(total.other, c.other);
  });
  return total;
}

} // namespace dlc
