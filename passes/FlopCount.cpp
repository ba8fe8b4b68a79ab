//===- FlopCount.cpp - floating-point operations of a graph ---------------===//
//
// Sums what each op says it costs (CostOpInterface), split by role.
//
//===----------------------------------------------------------------------===//

#include "passes/FlopCount.h"

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace dlc {


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
