//===- DataMovementOps.cpp - shape rules of concat, gather, slice, ... ----===//

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"
#include "ir/Vjp.h"

#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace dlc;

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  StringRef opName = getOperationName();
  if (failed(requireAttrs(loc, opName, {{"axis", adaptor.getAxisAttr()}})))
    return failure();
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return opError(loc, opName, "needs at least one operand");
  auto first = getRankedType(inputs[0]);
  if (!first || first.getRank() == 0)
    return opError(loc, opName, "needs operands of rank at least 1, got ",
                   formatType(inputs[0].getType()));
  int64_t requested = axisOr(adaptor.getAxisAttr(), 0);
  auto axis = normalizeAxis(requested, first.getRank());
  if (!axis)
    return opError(loc, opName, "axis ", requested,
                   " is out of range for ", formatType(first));
  SmallVector<int64_t> shape(first.getShape());
  for (auto [i, value] : llvm::enumerate(inputs.drop_front())) {
    auto type = getRankedType(value);
    if (!type || type.getRank() != first.getRank() ||
        type.getElementType() != first.getElementType())
      return opError(loc, opName, "operand ", i + 1, " is ",
                     formatType(value.getType()), ", operand 0 is ",
                     formatType(first),
                     ": concatenated tensors need one rank and element type");
    for (int64_t d = 0; d < first.getRank(); ++d) {
      if (d == *axis)
        continue;
      if (type.getDimSize(d) != first.getDimSize(d))
        return opError(loc, opName, "operand ", i + 1, " is ", formatType(type),
                       ", operand 0 is ", formatType(first),
                       ": they differ in dimension ", d,
                       ", which is not the concatenation axis ", *axis);
    }
    if (__builtin_add_overflow(shape[*axis], type.getDimSize(*axis),
                               &shape[*axis]))
      return opError(loc, opName, "the concatenated dimension ", *axis,
                     " overflows 64 bits");
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  StringRef opName = getOperationName();
  auto table = getRankedType(adaptor.getTable());
  auto ids = getRankedType(adaptor.getIds());
  if (!table || !ids)
    return opError(loc, opName, "needs ranked tensor operands");
  if (table.getRank() != 2)
    return opError(loc, opName, "needs a table of shape [V, D], got ",
                   formatType(table));
  if (!ids.getElementType().isInteger(32) && !ids.getElementType().isInteger(64))
    return opError(loc, opName, "needs i32 or i64 ids, got ", formatType(ids));
  SmallVector<int64_t> shape(ids.getShape());
  shape.push_back(table.getDimSize(1));
  types.push_back(RankedTensorType::get(shape, table.getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  StringRef opName = getOperationName();
  if (failed(requireAttrs(loc, opName, {{"axis", adaptor.getAxisAttr()}})))
    return failure();
  auto x = getRankedType(adaptor.getX());
  auto indices = getRankedType(adaptor.getIndices());
  if (!x || !indices)
    return opError(loc, opName, "needs ranked tensor operands");
  if (!indices.getElementType().isInteger(32) &&
      !indices.getElementType().isInteger(64))
    return opError(loc, opName, "needs i32 or i64 indices, got ",
                   formatType(indices));
  int64_t requested = axisOr(adaptor.getAxisAttr(), 0);
  auto axis = normalizeAxis(requested, x.getRank());
  if (!axis)
    return opError(loc, opName, "axis ", requested,
                   " is out of range for ", formatType(x));
  SmallVector<int64_t> shape(x.getShape().take_front(*axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, x.getShape().drop_front(*axis + 1));
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  StringRef opName = getOperationName();
  if (failed(requireAttrs(loc, opName, {{"low", adaptor.getLowAttr()},
                                        {"high", adaptor.getHighAttr()}})))
    return failure();
  auto x = getRankedType(adaptor.getX());
  if (!x)
    return opError(loc, opName, "needs a ranked tensor operand");
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh();
  if ((int64_t)low.size() != x.getRank() || (int64_t)high.size() != x.getRank())
    return opError(loc, opName, "needs one low and one high padding per "
                   "dimension of ", formatType(x), ", got low ",
                   formatShape(low), " and high ", formatShape(high));
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < x.getRank(); ++d) {
    if (low[d] < 0 || high[d] < 0)
      return opError(loc, opName, "paddings must be non-negative, got low ",
                     formatShape(low), " and high ", formatShape(high));
    int64_t size;
    if (__builtin_add_overflow(x.getDimSize(d), low[d], &size) ||
        __builtin_add_overflow(size, high[d], &size))
      return opError(loc, opName, "dimension ", d, " of ", formatType(x),
                     " padded by ", low[d], " and ", high[d],
                     " overflows 64 bits");
    shape.push_back(size);
  }
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  StringRef opName = getOperationName();
  if (failed(requireAttrs(loc, opName, {{"starts", adaptor.getStartsAttr()},
                                        {"limits", adaptor.getLimitsAttr()},
                                        {"strides", adaptor.getStridesAttr()}})))
    return failure();
  auto x = getRankedType(adaptor.getX());
  if (!x)
    return opError(loc, opName, "needs a ranked tensor operand");
  ArrayRef<int64_t> starts = adaptor.getStarts(), limits = adaptor.getLimits(),
                    strides = adaptor.getStrides();
  int64_t rank = x.getRank();
  if ((int64_t)starts.size() != rank || (int64_t)limits.size() != rank ||
      (int64_t)strides.size() != rank)
    return opError(loc, opName, "needs starts, limits and strides for each of "
                   "the ", rank, " dimensions of ", formatType(x));
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (starts[d] < 0 || starts[d] > limits[d] || limits[d] > x.getDimSize(d) ||
        strides[d] < 1)
      return opError(loc, opName, "dimension ", d, " of ", formatType(x),
                     ": needs 0 <= start <= limit <= ", x.getDimSize(d),
                     " and stride >= 1, got start ", starts[d], ", limit ",
                     limits[d], ", stride ", strides[d]);
    // ceil((limit - start) / stride), without adding the stride (a huge
    // one would wrap).
    shape.push_back(limits[d] == starts[d]
                        ? 0
                        : (limits[d] - starts[d] - 1) / strides[d] + 1);
  }
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  StringRef opName = getOperationName();
  if (failed(requireAttrs(loc, opName, {{"perm", adaptor.getPermAttr()}})))
    return failure();
  auto x = getRankedType(adaptor.getX());
  if (!x)
    return opError(loc, opName, "needs a ranked tensor operand");
  ArrayRef<int64_t> perm = adaptor.getPerm();
  int64_t rank = x.getRank();
  llvm::SmallBitVector seen(rank);
  bool valid = (int64_t)perm.size() == rank;
  for (int64_t p : perm) {
    if (!valid || p < 0 || p >= rank || seen.test(p)) {
      valid = false;
      break;
    }
    seen.set(p);
  }
  if (!valid)
    return opError(loc, opName, "perm ", formatShape(perm),
                   " is not a permutation of the ", rank, " dimensions of ",
                   formatType(x));
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(x.getDimSize(p));
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Derivatives
//===----------------------------------------------------------------------===//

static SmallVector<int64_t> inversePermutation(ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  return inverse;
}

/// The gradient of a pad is the window of g the operand occupies.
static Value padGrad(VjpBuilder &b, Value g, ArrayRef<int64_t> low,
                     ArrayRef<int64_t> shape) {
  SmallVector<int64_t> limits, strides(shape.size(), 1);
  for (auto [l, d] : llvm::zip(low, shape))
    limits.push_back(l + d);
  return b.slice(g, low, limits, strides);
}

#define DLC_SINGLE_VJP(OP, EXPR)                                               \
  LogicalResult OP::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,       \
                             SmallVectorImpl<Value> &grads) {                  \
    Value g = resultGrads[0];                                                  \
    grads.assign((*this)->getNumOperands(), Value());                           \
    if (g)                                                                     \
      grads[0] = EXPR;                                                         \
    return success();                                                          \
  }

DLC_SINGLE_VJP(BroadcastToOp, b.sumToShape(g, getX().getType()))
DLC_SINGLE_VJP(ReshapeOp, b.reshape(g, shapeOfValue(getX())))
DLC_SINGLE_VJP(TransposeOp, b.transpose(g, inversePermutation(getPerm())))
DLC_SINGLE_VJP(SliceOp, b.unslice(g, shapeOfValue(getX()), getStarts(),
                                  getStrides()))
DLC_SINGLE_VJP(PadOp, padGrad(b, g, getLow(), shapeOfValue(getX())))
#undef DLC_SINGLE_VJP

/// Each input gets its slice of the gradient along the axis.
LogicalResult ConcatOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                 SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.assign((*this)->getNumOperands(), Value());
  if (!g)
    return success();
  ArrayRef<int64_t> full = shapeOfValue(g);
  int64_t axis = *normalizeAxis(getAxis(), full.size());
  int64_t offset = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    int64_t size = shapeOfValue(input)[axis];
    SmallVector<int64_t> starts(full.size(), 0), limits(full),
        strides(full.size(), 1);
    starts[axis] = offset;
    limits[axis] = offset + size;
    grads[i] = b.slice(g, starts, limits, strides);
    offset += size;
  }
  return success();
}

/// One-hot rows of `indices` (flattened, negative ones counted from the
/// end) against `n` classes: [indices, n] in `element`.
static Value oneHot(VjpBuilder &b, Value indices, int64_t n, Type element) {
  int64_t count = numElementsOf(indices);
  Type idx = cast<RankedTensorType>(indices.getType()).getElementType();
  Value flat = b.reshape(indices, {count});
  Value wrapped = b.select(b.compare(ComparePredicate::lt, flat, b.like(flat, 0)),
                           b.add(flat, b.like(flat, double(n))), flat);
  Value rows = b.broadcastTo(b.reshape(wrapped, {count, 1}), {count, n});
  Value hit = b.compare(ComparePredicate::eq, rows, b.iota({count, n}, 1, idx));
  return b.select(hit, b.scalar(1, element), b.scalar(0, element));
}

/// The gradient of a gather is a scatter-add of g's slices to the rows they
/// came from: a product with the one-hot matrix of the indices (exact, and
/// a GEMM; proportional to rows x indices).
LogicalResult GatherOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                 SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0], x = getX(), indices = getIndices();
  grads.assign(2, Value());
  if (!g)
    return success();
  ArrayRef<int64_t> xs = shapeOfValue(x);
  int64_t axis = *normalizeAxis(getAxis(), xs.size());
  int64_t before = 1, after = 1, n = xs[axis], count = numElementsOf(indices);
  for (int64_t d = 0; d < axis; ++d)
    before *= xs[d];
  for (size_t d = axis + 1; d < xs.size(); ++d)
    after *= xs[d];
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  Value hot = oneHot(b, indices, n, element);                 // [count, n]
  Value rows = b.reshape(g, {before, count, after});          // g's slices
  Value summed = b.matmul(hot, rows, /*transposeA=*/true, false); // [before, n, after]
  grads[0] = b.reshape(summed, xs);
  return success();
}

LogicalResult EmbeddingOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0], table = getTable(), ids = getIds();
  grads.assign(2, Value());
  if (!g)
    return success();
  ArrayRef<int64_t> ts = shapeOfValue(table);
  int64_t count = numElementsOf(ids);
  Type element = cast<RankedTensorType>(table.getType()).getElementType();
  Value hot = oneHot(b, ids, ts[0], element);
  grads[0] = b.matmul(hot, b.reshape(g, {count, ts[1]}), true, false);
  return success();
}
