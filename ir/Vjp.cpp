//===- Vjp.cpp - what a derivative rule builds with -----------------------===//

#include "ir/Vjp.h"

#include "ir/ShapeUtils.h"

#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;

namespace dlc {

ArrayRef<int64_t> shapeOfValue(Value v) {
  return mlir::cast<RankedTensorType>(v.getType()).getShape();
}

Value VjpBuilder::create(StringRef opName, ValueRange operands,
                         ArrayRef<NamedAttribute> attrs) {
  MLIRContext *context = b.getContext();
  auto name = RegisteredOperationName::lookup(opName, context);
  assert(name && "not a registered op");
  SmallVector<Type> types;
  auto dict = DictionaryAttr::get(context, attrs);
  auto infer = name->getInterface<InferTypeOpInterface>();
  if (!infer ||
      mlir::failed(infer->inferReturnTypes(context, loc, operands, dict,
                                           OpaqueProperties(nullptr), {},
                                           types))) {
    hadError = true;
    mlir::emitError(loc) << "internal error: a derivative rule built an "
                            "ill-typed '"
                         << opName << "'";
    return Value();
  }
  return createTyped(opName, types.front(), operands, attrs);
}

Value VjpBuilder::createTyped(StringRef opName, Type type, ValueRange operands,
                              ArrayRef<NamedAttribute> attrs) {
  OperationState state(loc, opName);
  state.addOperands(operands);
  state.addTypes(type);
  state.addAttributes(attrs);
  return b.create(state)->getResult(0);
}

Value VjpBuilder::scalar(double value, Type elementType) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute attr;
  if (auto f = dyn_cast<FloatType>(elementType))
    attr = DenseElementsAttr::get(type, b.getFloatAttr(f, value));
  else
    attr = DenseElementsAttr::get(
        type, b.getIntegerAttr(elementType, static_cast<int64_t>(value)));
  return b.create<ConstantOp>(loc, type, mlir::cast<ElementsAttr>(attr));
}

Value VjpBuilder::like(Value x, double value) {
  return scalar(value, mlir::cast<RankedTensorType>(x.getType()).getElementType());
}

Value VjpBuilder::add(Value a, Value c) { return create<AddOp>({a, c}); }
Value VjpBuilder::sub(Value a, Value c) { return create<SubOp>({a, c}); }
Value VjpBuilder::mul(Value a, Value c) { return create<MulOp>({a, c}); }
Value VjpBuilder::div(Value a, Value c) { return create<DivOp>({a, c}); }
Value VjpBuilder::neg(Value a) { return create<NegOp>({a}); }
Value VjpBuilder::exp(Value a) { return create<ExpOp>({a}); }

Value VjpBuilder::compare(ComparePredicate predicate, Value a, Value c) {
  return create<CompareOp>(
      {a, c}, {b.getNamedAttr("predicate", ComparePredicateAttr::get(
                                               b.getContext(), predicate))});
}

Value VjpBuilder::select(Value cond, Value onTrue, Value onFalse) {
  return create<SelectOp>({cond, onTrue, onFalse});
}

Value VjpBuilder::cast(Value x, Type elementType) {
  auto type = mlir::cast<RankedTensorType>(x.getType());
  if (type.getElementType() == elementType)
    return x;
  return createTyped(CastOp::getOperationName(), type.clone(elementType), {x});
}

Value VjpBuilder::reshape(Value x, ArrayRef<int64_t> shape) {
  auto type = mlir::cast<RankedTensorType>(x.getType());
  if (type.getShape() == shape)
    return x;
  return createTyped(ReshapeOp::getOperationName(), type.clone(shape), {x});
}

Value VjpBuilder::broadcastTo(Value x, ArrayRef<int64_t> shape) {
  auto type = mlir::cast<RankedTensorType>(x.getType());
  if (type.getShape() == shape)
    return x;
  return createTyped(BroadcastToOp::getOperationName(), type.clone(shape), {x});
}

Value VjpBuilder::transpose(Value x, ArrayRef<int64_t> perm) {
  return create<TransposeOp>({x},
                             {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))});
}

Value VjpBuilder::matmul(Value a, Value c, bool transposeA, bool transposeB) {
  return create<MatmulOp>(
      {a, c}, {b.getNamedAttr("transpose_a", b.getBoolAttr(transposeA)),
               b.getNamedAttr("transpose_b", b.getBoolAttr(transposeB))});
}

Value VjpBuilder::reduceSum(Value x, ArrayRef<int64_t> axes, bool keepdims) {
  if (axes.empty())
    return x;
  return create<ReduceSumOp>(
      {x}, {b.getNamedAttr("axes", b.getDenseI64ArrayAttr(axes)),
            b.getNamedAttr("keepdims", b.getBoolAttr(keepdims))});
}

Value VjpBuilder::reduceMean(Value x, ArrayRef<int64_t> axes, bool keepdims) {
  return create<ReduceMeanOp>(
      {x}, {b.getNamedAttr("axes", b.getDenseI64ArrayAttr(axes)),
            b.getNamedAttr("keepdims", b.getBoolAttr(keepdims))});
}

Value VjpBuilder::slice(Value x, ArrayRef<int64_t> starts,
                        ArrayRef<int64_t> limits, ArrayRef<int64_t> strides) {
  return create<SliceOp>(
      {x}, {b.getNamedAttr("starts", b.getDenseI64ArrayAttr(starts)),
            b.getNamedAttr("limits", b.getDenseI64ArrayAttr(limits)),
            b.getNamedAttr("strides", b.getDenseI64ArrayAttr(strides))});
}

Value VjpBuilder::pad(Value x, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                      double value) {
  if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v == 0; }))
    return x;
  return create<PadOp>({x}, {b.getNamedAttr("low", b.getDenseI64ArrayAttr(low)),
                             b.getNamedAttr("high", b.getDenseI64ArrayAttr(high)),
                             b.getNamedAttr("value", b.getF64FloatAttr(value))});
}

Value VjpBuilder::concat(ValueRange inputs, int64_t axis) {
  return create<ConcatOp>(inputs,
                          {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))});
}

Value VjpBuilder::gather(Value x, Value idx, int64_t axis) {
  return create<GatherOp>({x, idx},
                          {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))});
}

Value VjpBuilder::iota(ArrayRef<int64_t> shape, int64_t axis, Type elementType) {
  return createTyped(IotaOp::getOperationName(),
                     RankedTensorType::get(shape, elementType), {},
                     {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))});
}

Value VjpBuilder::indices(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({(int64_t)values.size()}, b.getI64Type());
  return b.create<ConstantOp>(
      loc, type, mlir::cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
}

Value VjpBuilder::boolean(bool value) {
  auto type = RankedTensorType::get({}, b.getI1Type());
  return b.create<ConstantOp>(
      loc, type, mlir::cast<ElementsAttr>(DenseElementsAttr::get(type, value)));
}

Value VjpBuilder::unslice(Value grad, ArrayRef<int64_t> full,
                          ArrayRef<int64_t> starts, ArrayRef<int64_t> strides) {
  // Dimension by dimension: interleave stride - 1 zeros after each element
  // (a new axis of size 1 padded to the stride, then merged), then pad to
  // the start and to the full size, cutting what runs past the end.
  Value g = grad;
  for (size_t d = 0; d < full.size(); ++d) {
    SmallVector<int64_t> shape(shapeOfValue(g));
    int64_t m = shape[d], s = strides[d];
    if (s > 1 && m > 0) {
      SmallVector<int64_t> split(shape);
      split.insert(split.begin() + d + 1, 1);
      SmallVector<int64_t> low(split.size(), 0), high(split.size(), 0);
      high[d + 1] = s - 1;
      g = pad(reshape(g, split), low, high);
      shape[d] = m * s;
      g = reshape(g, shape);
    }
    int64_t size = shapeOfValue(g)[d];
    int64_t end = starts[d] + size;
    if (end > full[d]) { // the interleaved zeros past the last element
      SmallVector<int64_t> lo(shape.size(), 0), hi(shapeOfValue(g)),
          st(shape.size(), 1);
      hi[d] = full[d] - starts[d];
      g = slice(g, lo, hi, st);
      end = full[d];
    }
    SmallVector<int64_t> low(shape.size(), 0), high(shape.size(), 0);
    low[d] = starts[d];
    high[d] = full[d] - end;
    g = pad(g, low, high);
  }
  return g;
}

Value VjpBuilder::sumToShape(Value grad, Type type) {
  if (!grad)
    return grad;
  ArrayRef<int64_t> from = shapeOfValue(grad);
  ArrayRef<int64_t> to = mlir::cast<RankedTensorType>(type).getShape();
  if (from == to)
    return grad;
  // Leading dimensions the operand does not have, and the ones it has as 1.
  size_t extra = from.size() - to.size();
  SmallVector<int64_t> axes;
  for (size_t d = 0; d < from.size(); ++d)
    if (d < extra || (to[d - extra] == 1 && from[d] != 1))
      axes.push_back(d);
  return reshape(reduceSum(grad, axes, /*keepdims=*/false), to);
}

Value VjpBuilder::unreduce(Value x, ArrayRef<int64_t> full,
                           ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept(full);
  for (int64_t a : axes)
    kept[a] = 1;
  return broadcastTo(reshape(x, kept), full);
}

} // namespace dlc
