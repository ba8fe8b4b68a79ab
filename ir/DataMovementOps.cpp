//===- DataMovementOps.cpp - shape rules of concat, gather, slice, ... ----===//

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"

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
    shape[*axis] += type.getDimSize(*axis);
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
    shape.push_back(x.getDimSize(d) + low[d] + high[d]);
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
    shape.push_back((limits[d] - starts[d] + strides[d] - 1) / strides[d]);
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
