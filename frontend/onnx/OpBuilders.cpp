//===- OpBuilders.cpp - the op-building helpers every op family shares ----===//
//
// Constants, reshape, cast, broadcast, transpose, compare and iota, each
// skipping the op when it would be the identity, and GatherElements as a
// one-hot selection built from them.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

using namespace mlir;

namespace dlc::onnximport {

Value NodeImporter::constant(const Constant &value) {
  return createTyped<ConstantOp>(value.type(), {},
                                 {named("value", value.toAttr())});
}

Value NodeImporter::scalar(double value, Type element) {
  Constant c = Constant::empty(element, {});
  c.push(value);
  return constant(c);
}

Value NodeImporter::reshape(Value x, ArrayRef<int64_t> shape) {
  if (!x)
    return {};
  auto type = llvm::cast<RankedTensorType>(x.getType());
  if (type.getShape() == shape)
    return x;
  return createTyped<ReshapeOp>(
      RankedTensorType::get(shape, type.getElementType()), {x});
}

Value NodeImporter::cast(Value x, Type element) {
  if (!x)
    return {};
  auto type = llvm::cast<RankedTensorType>(x.getType());
  if (type.getElementType() == element)
    return x;
  return createTyped<CastOp>(RankedTensorType::get(type.getShape(), element),
                             {x});
}

Value NodeImporter::widened(Value x) {
  if (!x || !llvm::cast<RankedTensorType>(x.getType()).getElementType().isInteger(8))
    return x;
  return cast(x, b.getI32Type());
}

Value NodeImporter::narrowed(Value y, Type element) {
  if (!y || !element.isInteger(8))
    return y;
  return cast(y, element);
}

Value NodeImporter::broadcastTo(Value x, ArrayRef<int64_t> shape) {
  if (!x)
    return {};
  auto type = llvm::cast<RankedTensorType>(x.getType());
  if (type.getShape() == shape)
    return x;
  return createTyped<BroadcastToOp>(
      RankedTensorType::get(shape, type.getElementType()), {x});
}

Value NodeImporter::transpose(Value x, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= static_cast<int64_t>(i) == p;
  if (identity)
    return x;
  return create<TransposeOp>({x}, {i64s("perm", perm)});
}

Value NodeImporter::compare(ComparePredicate predicate, Value lhs, Value rhs) {
  return create<CompareOp>(
      {lhs, rhs},
      {named("predicate", ComparePredicateAttr::get(&graph.context, predicate))});
}

Value NodeImporter::iota(ArrayRef<int64_t> shape, int64_t axis) {
  return createTyped<IotaOp>(RankedTensorType::get(shape, i64()), {},
                             {i64("axis", axis)});
}

SmallVector<int64_t> shapeOf(Value value) {
  auto shape = llvm::cast<RankedTensorType>(value.getType()).getShape();
  return {shape.begin(), shape.end()};
}

Value NodeImporter::gatherElements(Value x, Value indices, int64_t axis) {
  if (!x || !indices)
    return {};
  auto xShape = shapeOf(x), iShape = shapeOf(indices);
  int64_t rank = xShape.size(), size = xShape[axis];
  Type element = llvm::cast<RankedTensorType>(x.getType()).getElementType();
  // Indices in [0, size): negative ones count from the end.
  Value idx = cast(indices, i64());
  Value zero = scalar(0, i64());
  Value wrapped = create<AddOp>({idx, scalar(size, i64())});
  idx = create<SelectOp>({compare(ComparePredicate::lt, idx, zero), wrapped, idx});
  // hot[..., k] = (indices[...] == k), with k along a new last axis.
  SmallVector<int64_t> hotShape(iShape);
  hotShape.push_back(size);
  SmallVector<int64_t> idxShape(iShape);
  idxShape.push_back(1);
  Value hot = compare(ComparePredicate::eq, reshape(idx, idxShape),
                      iota(hotShape, rank));
  // x with `axis` moved last, a 1 left in its place, the other dimensions
  // cut to the indices' sizes.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  Value moved = transpose(x, perm);
  SmallVector<int64_t> withOne(xShape);
  withOne[axis] = 1;
  withOne.push_back(size);
  moved = reshape(moved, withOne);
  SmallVector<int64_t> limits(withOne), zeros(rank + 1, 0), ones(rank + 1, 1);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      limits[d] = iShape[d];
  if (ArrayRef<int64_t>(limits) != ArrayRef<int64_t>(withOne))
    moved = create<SliceOp>({moved}, {i64s("starts", zeros),
                                      i64s("limits", limits),
                                      i64s("strides", ones)});
  bool isBool = element.isInteger(1);
  if (isBool)
    moved = cast(moved, b.getI32Type());
  Type work = isBool ? b.getI32Type() : element;
  Value picked = create<SelectOp>({hot, moved, scalar(0, work)});
  Value sum = create<ReduceSumOp>({picked}, {i64s("axes", {rank})});
  return isBool ? cast(sum, element) : sum;
}

} // namespace dlc::onnximport
