//===- FlopCount.cpp - floating-point operations of a graph ---------------===//

#include "passes/FlopCount.h"

#include "ir/DlcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace dlc {

static int64_t numElements(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

FlopCount countFlops(Operation *op) {
  FlopCount count;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](MatmulOp m) {
        auto lhs = m.getLhs().getType();
        int64_t k = m.getTransposeA() ? lhs.getDimSize(lhs.getRank() - 2)
                                      : lhs.getDimSize(lhs.getRank() - 1);
        count.contraction = 2 * numElements(m.getResult()) * k;
      })
      .Case([&](Conv2dOp c) {
        auto w = c.getW().getType();
        int64_t perOutput = w.getDimSize(1) * w.getDimSize(2) * w.getDimSize(3);
        count.contraction = 2 * numElements(c.getResult()) * perOutput;
        if (c.getBias())
          count.other = numElements(c.getResult());
      })
      .Case<MaxPool2dOp, AvgPool2dOp>([&](auto p) {
        ArrayRef<int64_t> kernel = p.getKernel();
        count.other = numElements(p.getResult()) * kernel[0] * kernel[1];
      })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(
          [&](auto r) { count.other = numElements(r.getX()); })
      // max, subtract, exp, sum, divide (or log).
      .Case<SoftmaxOp, LogSoftmaxOp>(
          [&](auto s) { count.other = 5 * numElements(s.getX()); })
      // mean, subtract, square, sum, scale, shift, ...
      .Case([&](LayerNormOp n) { count.other = 8 * numElements(n.getX()); })
      .Case([&](RmsNormOp n) { count.other = 4 * numElements(n.getX()); })
      .Case([&](CrossEntropyOp c) {
        count.other = 5 * numElements(c.getLogits());
      })
      .Case([&](MseOp m) { count.other = 3 * numElements(m.getPred()); })
      .Case<AbsOp, ExpOp, LogOp, NegOp, ReluOp, RsqrtOp, SigmoidOp, SiluOp,
            SqrtOp, TanhOp, GeluOp, AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp,
            MinOp, CompareOp, SelectOp>(
          [&](Operation *e) { count.other = numElements(e->getResult(0)); })
      .Default([](Operation *) {});
  return count;
}

FlopCount countFlops(func::FuncOp func) {
  FlopCount total;
  func.walk([&](Operation *op) {
    FlopCount c = countFlops(op);
    total.contraction += c.contraction;
    total.other += c.other;
  });
  return total;
}

} // namespace dlc
