//===- ReductionOps.cpp - shape rules of reductions, norms and losses -----===//

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"

#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace dlc;

/// Reductions drop (or keep as 1) the dimensions named by `axes`.
static LogicalResult inferReduce(std::optional<Location> loc, StringRef opName,
                                 Value input, DenseI64ArrayAttr axesAttr,
                                 bool keepdims, SmallVectorImpl<Type> &types) {
  if (failed(requireAttrs(loc, opName, {{"axes", axesAttr}})))
    return failure();
  auto x = getRankedType(input);
  if (!x)
    return opError(loc, opName, "needs a ranked tensor operand");
  if (x.getElementType().isInteger(1))
    return opError(loc, opName, "does not take i1 operands, got ",
                   formatType(x));
  llvm::SmallSet<int64_t, 4> reduced;
  for (int64_t axis : axesAttr.asArrayRef()) {
    auto normalized = normalizeAxis(axis, x.getRank());
    if (!normalized)
      return opError(loc, opName, "axis ", axis, " is out of range for ",
                     formatType(x));
    if (!reduced.insert(*normalized).second)
      return opError(loc, opName, "axis ", axis, " is listed twice in ",
                     formatShape(axesAttr.asArrayRef()));
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < x.getRank(); ++i) {
    if (!reduced.contains(i))
      shape.push_back(x.getDimSize(i));
    else if (keepdims)
      shape.push_back(1);
  }
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

#define DLC_REDUCE_INFERENCE(OP)                                               \
  LogicalResult OP::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &types) {           \
    return inferReduce(loc, getOperationName(), adaptor.getX(),                \
                       adaptor.getAxesAttr(),                                  \
                       adaptor.getKeepdimsAttr() && adaptor.getKeepdims(),     \
                       types);                                                 \
  }

DLC_REDUCE_INFERENCE(ReduceMaxOp)
DLC_REDUCE_INFERENCE(ReduceMeanOp)
DLC_REDUCE_INFERENCE(ReduceMinOp)
DLC_REDUCE_INFERENCE(ReduceProdOp)
DLC_REDUCE_INFERENCE(ReduceSumOp)
#undef DLC_REDUCE_INFERENCE

/// softmax and log_softmax keep their operand's type; the axis must exist.
static LogicalResult inferSoftmax(std::optional<Location> loc, StringRef opName,
                                  Value input, int64_t axis,
                                  SmallVectorImpl<Type> &types) {
  auto x = getRankedType(input);
  if (!x || x.getRank() == 0)
    return opError(loc, opName, "needs an operand of rank at least 1, got ",
                   formatType(input.getType()));
  if (!normalizeAxis(axis, x.getRank()))
    return opError(loc, opName, "axis ", axis, " is out of range for ",
                   formatType(x));
  types.push_back(x);
  return success();
}

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferSoftmax(loc, getOperationName(), adaptor.getX(),
                      axisOr(adaptor.getAxisAttr(), -1), types);
}

LogicalResult LogSoftmaxOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  return inferSoftmax(loc, getOperationName(), adaptor.getX(),
                      axisOr(adaptor.getAxisAttr(), -1), types);
}

/// layer_norm and rms_norm: `params` (scale, bias) have exactly the shape of
/// the normalised trailing dimensions `[axis, rank)`.
static LogicalResult inferNorm(std::optional<Location> loc, StringRef opName,
                               Value input, ArrayRef<std::pair<StringRef, Value>> params,
                               int64_t axis, double epsilon,
                               SmallVectorImpl<Type> &types) {
  auto x = getRankedType(input);
  if (!x || x.getRank() == 0)
    return opError(loc, opName, "needs an operand of rank at least 1, got ",
                   formatType(input.getType()));
  auto normalized = normalizeAxis(axis, x.getRank());
  if (!normalized)
    return opError(loc, opName, "axis ", axis, " is out of range for ",
                   formatType(x));
  if (!(epsilon >= 0))
    return opError(loc, opName, "epsilon must be non-negative, got ", epsilon);
  auto expected = RankedTensorType::get(x.getShape().drop_front(*normalized),
                                        x.getElementType());
  for (auto [name, value] : params) {
    if (!value)
      continue;
    if (value.getType() != expected)
      return opError(loc, opName, name, " must be ", formatType(expected),
                     " to normalise ", formatType(x), " from axis ", axis,
                     ", got ", formatType(value.getType()));
  }
  types.push_back(x);
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferNorm(loc, getOperationName(), adaptor.getX(),
                   {{"scale", adaptor.getScale()}, {"bias", adaptor.getBias()}},
                   axisOr(adaptor.getAxisAttr(), -1),
                   floatOr(adaptor.getEpsilonAttr(), 1e-5), types);
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferNorm(loc, getOperationName(), adaptor.getX(),
                   {{"scale", adaptor.getScale()}},
                   axisOr(adaptor.getAxisAttr(), -1),
                   floatOr(adaptor.getEpsilonAttr(), 1e-6), types);
}

/// The reduction of a loss; `mean` when the attribute is absent (inference
/// runs while parsing, before default values are filled in).
static LossReduction reductionOr(LossReductionAttr attr) {
  return attr ? attr.getValue() : LossReduction::mean;
}

/// Losses produce a scalar, or the per-example shape with reduction none.
static Type lossResultType(ArrayRef<int64_t> perExample, Type element,
                           LossReduction reduction) {
  if (reduction == LossReduction::none)
    return RankedTensorType::get(perExample, element);
  return RankedTensorType::get({}, element);
}

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  StringRef opName = getOperationName();
  auto logits = getRankedType(adaptor.getLogits());
  auto labels = getRankedType(adaptor.getLabels());
  if (!logits || !labels)
    return opError(loc, opName, "needs ranked tensor operands");
  if (!isa<FloatType>(logits.getElementType()))
    return opError(loc, opName, "needs floating-point logits, got ",
                   formatType(logits));
  if (!labels.getElementType().isInteger(32) &&
      !labels.getElementType().isInteger(64))
    return opError(loc, opName, "needs i32 or i64 class labels, got ",
                   formatType(labels));
  if (logits.getRank() < 1 ||
      logits.getShape().drop_back() != labels.getShape())
    return opError(loc, opName, "logits ", formatType(logits),
                   " need labels of shape ",
                   formatShape(logits.getRank() ? logits.getShape().drop_back()
                                                : ArrayRef<int64_t>()),
                   " (one class index per row), got ", formatType(labels));
  types.push_back(lossResultType(labels.getShape(), logits.getElementType(),
                                 reductionOr(adaptor.getReductionAttr())));
  return success();
}

LogicalResult MseOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  StringRef opName = getOperationName();
  auto pred = getRankedType(adaptor.getPred());
  auto target = getRankedType(adaptor.getTarget());
  if (!pred || !target)
    return opError(loc, opName, "needs ranked tensor operands");
  if (pred != target)
    return opError(loc, opName, "prediction and target differ: ",
                   formatType(pred), " vs ", formatType(target));
  types.push_back(lossResultType(pred.getShape(), pred.getElementType(),
                                 reductionOr(adaptor.getReductionAttr())));
  return success();
}

//===----------------------------------------------------------------------===//
// Rows
//===----------------------------------------------------------------------===//

/// `axes` of an operand of `rank`, non-negative and sorted.
static SmallVector<int64_t> sortedAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t a : axes)
    result.push_back(a < 0 ? a + rank : a);
  llvm::sort(result);
  return result;
}

/// The trailing axes `[axis, rank)` that norms normalise over.
static SmallVector<int64_t> trailingAxes(int64_t axis, int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t a = axis < 0 ? axis + rank : axis; a < rank; ++a)
    result.push_back(a);
  return result;
}

#define DLC_REDUCE_ROWS(OP)                                                    \
  SmallVector<int64_t> OP::getRowAxes() {                                      \
    return sortedAxes(getAxes(), getX().getType().getRank());                  \
  }                                                                            \
  bool OP::reducesRows() { return true; }
DLC_REDUCE_ROWS(ReduceMaxOp)
DLC_REDUCE_ROWS(ReduceMeanOp)
DLC_REDUCE_ROWS(ReduceMinOp)
DLC_REDUCE_ROWS(ReduceProdOp)
DLC_REDUCE_ROWS(ReduceSumOp)
#undef DLC_REDUCE_ROWS

#define DLC_SOFTMAX_ROWS(OP)                                                   \
  SmallVector<int64_t> OP::getRowAxes() {                                      \
    return sortedAxes({getAxis()}, getX().getType().getRank());                \
  }                                                                            \
  bool OP::reducesRows() { return false; }
DLC_SOFTMAX_ROWS(SoftmaxOp)
DLC_SOFTMAX_ROWS(LogSoftmaxOp)
#undef DLC_SOFTMAX_ROWS

#define DLC_NORM_ROWS(OP)                                                      \
  SmallVector<int64_t> OP::getRowAxes() {                                      \
    return trailingAxes(getAxis(), getX().getType().getRank());                \
  }                                                                            \
  bool OP::reducesRows() { return false; }
DLC_NORM_ROWS(LayerNormOp)
DLC_NORM_ROWS(RmsNormOp)
#undef DLC_NORM_ROWS
