//===- Canonicalize.cpp - folders and canonicalisation patterns -----------===//
//
// The algebraic simplifications `--canonicalize` applies to dlc ops:
//   * DRR (DlcCanonicalize.td): x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1,
//     when the constant is a splat of exactly 0 or 1 and x has the result's
//     type;
//   * C++: transpose(transpose(x)) is one transpose (or x); a transpose by
//     the identity folds to x; a broadcast_to feeding an element-wise op is
//     dropped when the op's own broadcasting gives the same result type.
// The folders of cast, reshape and broadcast_to live with their verifiers in
// DlcOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace dlc;

namespace dlc {

/// True when `attr` is a dense splat whose elements all equal `value`
/// exactly. (x + 0 = x up to the sign of a zero x, which compares equal.)
static bool isSplatOf(ElementsAttr attr, double value) {
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  Type element = dense.getElementType();
  if (isa<FloatType>(element))
    return dense.getSplatValue<APFloat>().isExactlyValue(value);
  if (element.isInteger(1))
    return false;
  return dense.getSplatValue<APInt>().getSExtValue() ==
             static_cast<int64_t>(value) &&
         static_cast<double>(static_cast<int64_t>(value)) == value;
}

} // namespace dlc

namespace {
#include "ir/DlcCanonicalize.inc"
} // namespace

//===----------------------------------------------------------------------===//
// Folders
//===----------------------------------------------------------------------===//

static bool isIdentityPermutation(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (p != static_cast<int64_t>(i))
      return false;
  return true;
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  if (isIdentityPermutation(getPerm()))
    return getX();
  return {};
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {

/// transpose(transpose(x, p), q) = transpose(x, p ∘ q): result dimension i
/// is x's dimension p[q[i]]. An identity composition is x itself.
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getX().getDefiningOp<TransposeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "operand is not a transpose");
    ArrayRef<int64_t> first = inner.getPerm();
    SmallVector<int64_t> perm;
    for (int64_t p : op.getPerm())
      perm.push_back(first[p]);
    if (isIdentityPermutation(perm)) {
      rewriter.replaceOp(op, inner.getX());
      return success();
    }
    rewriter.replaceOpWithNewOp<TransposeOp>(
        op, op.getType(), inner.getX(), rewriter.getDenseI64ArrayAttr(perm));
    return success();
  }
};

/// op(..., broadcast_to(y), ...) = op(..., y, ...) for an element-wise op
/// (binary, compare, select) whose own NumPy broadcasting of y with its
/// other operands already gives the result's shape: the explicit broadcast
/// is redundant. The result type is unchanged.
struct DropRedundantBroadcast : RewritePattern {
  DropRedundantBroadcast(StringRef opName, MLIRContext *context)
      : RewritePattern(opName, /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    auto result = cast<RankedTensorType>(op->getResult(0).getType());
    for (OpOperand &operand : op->getOpOperands()) {
      auto broadcast = operand.get().getDefiningOp<BroadcastToOp>();
      if (!broadcast)
        continue;
      std::optional<SmallVector<int64_t>> shape(
          broadcast.getX().getType().getShape());
      for (OpOperand &other : op->getOpOperands())
        if (&other != &operand && shape)
          shape = broadcastShapes(
              *shape, cast<RankedTensorType>(other.get().getType()).getShape());
      if (!shape || ArrayRef<int64_t>(*shape) != result.getShape())
        continue;
      rewriter.modifyOpInPlace(op, [&] { operand.set(broadcast.getX()); });
      return success();
    }
    return rewriter.notifyMatchFailure(
        op, "no broadcast_to operand is redundant with the op's broadcasting");
  }
};

} // namespace

void AddOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<AddZeroRight, AddZeroLeft>(context);
  results.add<DropRedundantBroadcast>(getOperationName(), context);
}

void SubOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<SubZero>(context);
  results.add<DropRedundantBroadcast>(getOperationName(), context);
}

void MulOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<MulOneRight, MulOneLeft>(context);
  results.add<DropRedundantBroadcast>(getOperationName(), context);
}

void DivOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<DivOne>(context);
  results.add<DropRedundantBroadcast>(getOperationName(), context);
}

#define DLC_BROADCAST_ONLY_CANONICALIZER(OP)                                   \
  void OP::getCanonicalizationPatterns(RewritePatternSet &results,             \
                                       MLIRContext *context) {                 \
    results.add<DropRedundantBroadcast>(getOperationName(), context);          \
  }
DLC_BROADCAST_ONLY_CANONICALIZER(MaxOp)
DLC_BROADCAST_ONLY_CANONICALIZER(MinOp)
DLC_BROADCAST_ONLY_CANONICALIZER(PowOp)
DLC_BROADCAST_ONLY_CANONICALIZER(CompareOp)
DLC_BROADCAST_ONLY_CANONICALIZER(SelectOp)
#undef DLC_BROADCAST_ONLY_CANONICALIZER

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeTransposes>(context);
}
