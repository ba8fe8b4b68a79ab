//===- ReductionOps.cpp - shape rules of reductions, norms and losses -----===//

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"
#include "ir/Vjp.h"

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
  if (auto ignore = adaptor.getIgnoreIndexAttr()) {
    unsigned bits = labels.getElementType().getIntOrFloatBitWidth();
    if (ignore.getValue().getSignificantBits() > bits)
      return opError(loc, opName, "ignore_index ", ignore.getInt(),
                     " is not an i", bits, " label");
  }
  double smoothing = floatOr(adaptor.getLabelSmoothingAttr(), 0.0);
  if (!(smoothing >= 0 && smoothing < 1))
    return opError(loc, opName, "label_smoothing must be in [0, 1), got ",
                   smoothing);
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

//===----------------------------------------------------------------------===//
// Derivatives
//===----------------------------------------------------------------------===//

/// Elements per row of `x` over `axes`.
static int64_t rowSize(Value x, ArrayRef<int64_t> axes) {
  int64_t n = 1;
  for (int64_t a : axes)
    n *= shapeOfValue(x)[a];
  return n;
}

LogicalResult ReduceSumOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.assign(1, g ? b.unreduce(g, shapeOfValue(getX()), getRowAxes())
                    : Value());
  return success();
}

LogicalResult ReduceMeanOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                     SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.assign(1, Value());
  if (g)
    grads[0] = b.unreduce(
        b.div(g, b.like(g, double(rowSize(getX(), getRowAxes())))),
        shapeOfValue(getX()), getRowAxes());
  return success();
}

/// max and min: shared equally by the elements equal to the result.
static LogicalResult chooserGrad(VjpBuilder &b, RowOpInterface op, Value g,
                                 SmallVectorImpl<Value> &grads) {
  grads.assign(1, Value());
  if (!g)
    return success();
  Value x = op.getRowInput();
  ArrayRef<int64_t> full = shapeOfValue(x);
  SmallVector<int64_t> axes = op.getRowAxes();
  Value y = b.unreduce(op->getResult(0), full, axes);
  Value zero = b.like(x, 0);
  Value hit = b.select(b.compare(ComparePredicate::eq, x, y), b.like(x, 1), zero);
  Value count = b.unreduce(b.reduceSum(hit, axes, true), full, axes);
  grads[0] = b.div(b.mul(b.unreduce(g, full, axes), hit), count);
  return success();
}

LogicalResult ReduceMaxOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  return chooserGrad(b, *this, resultGrads[0], grads);
}
LogicalResult ReduceMinOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  return chooserGrad(b, *this, resultGrads[0], grads);
}

/// y / x per element: exact where no element of the row is zero (a zero
/// makes that row's gradient inf or NaN).
LogicalResult ReduceProdOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                     SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.assign(1, Value());
  if (!g)
    return success();
  ArrayRef<int64_t> full = shapeOfValue(getX());
  Value gy = b.unreduce(b.mul(g, getResult()), full, getRowAxes());
  grads[0] = b.div(gy, getX());
  return success();
}

/// dx = y (g - sum(g y)) over the row: one row kernel after fusion.
LogicalResult SoftmaxOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                  SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0], y = getResult();
  grads.assign(1, Value());
  if (!g)
    return success();
  ArrayRef<int64_t> full = shapeOfValue(y);
  SmallVector<int64_t> axes = getRowAxes();
  Value dot = b.unreduce(b.reduceSum(b.mul(g, y), axes, true), full, axes);
  grads[0] = b.mul(y, b.sub(g, dot));
  return success();
}

/// dx = g - exp(y) sum(g) over the row.
LogicalResult LogSoftmaxOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                     SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0], y = getResult();
  grads.assign(1, Value());
  if (!g)
    return success();
  ArrayRef<int64_t> full = shapeOfValue(y);
  SmallVector<int64_t> axes = getRowAxes();
  Value sum = b.unreduce(b.reduceSum(g, axes, true), full, axes);
  grads[0] = b.sub(g, b.mul(b.exp(y), sum));
  return success();
}

/// The leading (batch) axes `[0, first row axis)` a norm's scale and bias
/// gradients sum over.
static SmallVector<int64_t> leadingAxes(ArrayRef<int64_t> rowAxes) {
  SmallVector<int64_t> axes;
  for (int64_t a = 0; a < rowAxes.front(); ++a)
    axes.push_back(a);
  return axes;
}

/// With x̂ = (x - mean) rstd and ĝ = g scale, over each row:
/// dx = rstd (ĝ - mean(ĝ) - x̂ mean(ĝ x̂)); dscale = Σ_batch g x̂;
/// dbias = Σ_batch g. The statistics are recomputed from x (cheaper than
/// keeping them: they fuse into the same row kernel).
LogicalResult LayerNormOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0], x = getX();
  grads.assign((*this)->getNumOperands(), Value());
  if (!g)
    return success();
  ArrayRef<int64_t> full = shapeOfValue(x);
  SmallVector<int64_t> axes = getRowAxes();
  auto rowMean = [&](Value v) {
    return b.unreduce(b.reduceMean(v, axes, true), full, axes);
  };
  Value centred = b.sub(x, rowMean(x));
  Value rstd = b.create<RsqrtOp>(
      {b.add(rowMean(b.mul(centred, centred)),
             b.like(x, getEpsilon().convertToDouble()))});
  Value xhat = b.mul(centred, rstd);
  Value gs = b.mul(g, getScale());
  grads[0] = b.mul(rstd, b.sub(b.sub(gs, rowMean(gs)),
                               b.mul(xhat, rowMean(b.mul(gs, xhat)))));
  SmallVector<int64_t> batch = leadingAxes(axes);
  grads[1] = b.reduceSum(b.mul(g, xhat), batch, false);
  if (getBias())
    grads[2] = b.reduceSum(g, batch, false);
  return success();
}

/// With r = rsqrt(mean(x²) + eps) and ĝ = g scale:
/// dx = r ĝ - x r³ mean(ĝ x); dscale = Σ_batch g x r.
LogicalResult RmsNormOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                  SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0], x = getX();
  grads.assign(2, Value());
  if (!g)
    return success();
  ArrayRef<int64_t> full = shapeOfValue(x);
  SmallVector<int64_t> axes = getRowAxes();
  auto rowMean = [&](Value v) {
    return b.unreduce(b.reduceMean(v, axes, true), full, axes);
  };
  Value r = b.create<RsqrtOp>(
      {b.add(rowMean(b.mul(x, x)), b.like(x, getEpsilon().convertToDouble()))});
  Value gs = b.mul(g, getScale());
  Value r3 = b.mul(r, b.mul(r, r));
  grads[0] = b.sub(b.mul(r, gs), b.mul(b.mul(x, r3), rowMean(b.mul(gs, x))));
  grads[1] = b.reduceSum(b.mul(g, b.mul(x, r)), leadingAxes(axes), false);
  return success();
}

/// The gradient of each example's loss: g itself for `none`, else g (or
/// g / count for `mean`) broadcast to every example.
static Value perExample(VjpBuilder &b, Value g, LossReduction reduction,
                        ArrayRef<int64_t> examples, double count) {
  if (reduction == LossReduction::mean)
    g = b.div(g, b.like(g, count));
  return b.broadcastTo(g, examples);
}

/// d logits = (softmax(logits) - target) times each example's gradient,
/// where target = (1 - label_smoothing) onehot(label) + label_smoothing / C;
/// zero for the examples whose label is ignore_index, which `mean` does not
/// count either. Labels get none.
LogicalResult CrossEntropyOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                       SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0], logits = getLogits(), labels = getLabels();
  grads.assign(2, Value());
  if (!g)
    return success();
  ArrayRef<int64_t> full = shapeOfValue(logits);
  int64_t rank = full.size();
  ArrayRef<int64_t> examples = shapeOfValue(labels);
  SmallVector<int64_t> kept(examples);
  kept.push_back(1);
  auto perRow = [&](Value perExample) {
    return b.broadcastTo(b.reshape(perExample, kept), full);
  };
  Type element = cast<RankedTensorType>(logits.getType()).getElementType();
  // (ODS hands I64Attr out as uint64_t.)
  int64_t ignored = static_cast<int64_t>(getIgnoreIndex());
  Value counted = b.compare(ComparePredicate::ne, labels,
                            b.like(labels, double(ignored)));
  Value ge;
  if (getReduction() == LossReduction::mean) {
    // g / (the number of examples not ignored), a value of the data.
    Value count = b.cast(counted, element);
    SmallVector<int64_t> all;
    for (size_t d = 0; d < examples.size(); ++d)
      all.push_back(d);
    if (!all.empty())
      count = b.reduceSum(count, all, false);
    ge = b.broadcastTo(b.div(g, count), examples);
  } else {
    ge = perExample(b, g, getReduction(), examples, 1);
  }
  OpBuilder &o = b.builder();
  Value probs = b.create<SoftmaxOp>(
      {logits}, {o.getNamedAttr("axis", o.getI64IntegerAttr(-1))});
  Type labelType = cast<RankedTensorType>(labels.getType()).getElementType();
  Value classes = b.iota(full, rank - 1, labelType);
  Value isLabel = b.compare(ComparePredicate::eq, classes, perRow(labels));
  double smoothing = getLabelSmoothing().convertToDouble();
  double others = smoothing / double(full.back());
  Value target = b.select(isLabel, b.like(logits, 1 - smoothing + others),
                          b.like(logits, others));
  Value d = b.mul(b.sub(probs, target), perRow(ge));
  grads[0] = b.select(perRow(counted), d, b.like(logits, 0));
  return success();
}

/// d pred = 2 (pred - target) times each example's gradient; d target the
/// negation.
LogicalResult MseOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                              SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0], pred = getPred(), target = getTarget();
  grads.assign(2, Value());
  if (!g)
    return success();
  ArrayRef<int64_t> full = shapeOfValue(pred);
  Value ge = perExample(b, g, getReduction(), full,
                        double(std::max<int64_t>(1, numElementsOf(pred))));
  Value d = b.mul(b.mul(b.sub(pred, target), b.like(pred, 2)), ge);
  grads[0] = d;
  grads[1] = b.neg(d);
  return success();
}
