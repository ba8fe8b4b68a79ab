//===- Types.cpp - ONNX Cast, CastLike, Identity, Dropout -----------------===//
//
// Control of types: casts, quantization to and from 8-bit integers, and the
// ops that are the identity in an inference graph.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

using namespace mlir;

namespace dlc::onnximport {

/// Casts input 0 to `element` (a known value folds through the oracle).
static LogicalResult castTo(NodeImporter &n, Type element) {
  return n.setOutput(0, n.cast(n.input(0), element));
}

static LogicalResult importCast(NodeImporter &n) {
  auto to = n.intAttr("to", 0);
  if (!to)
    return failure();
  if (!n.hasAttr("to"))
    return n.error() << "attribute 'to' is required";
  auto element = n.graph.requireElementType(
      *to, n.loc, "node '" + n.name + "' (Cast): the target type");
  if (failed(element))
    return failure();
  return castTo(n, *element);
}

static LogicalResult importCastLike(NodeImporter &n) {
  RankedTensorType target = n.inputType(1);
  if (!target)
    return n.error() << "input 1 (target_type) is required";
  return castTo(n, target.getElementType());
}

static LogicalResult importIdentity(NodeImporter &n) {
  if (const Constant *c = n.foldable(0))
    return n.setConstant(0, *c);
  return n.setOutput(0, n.input(0));
}

static LogicalResult importDropout(NodeImporter &n) {
  // Opset 12 made ratio and training_mode inputs; dropout is random only in
  // training mode with a non-zero ratio.
  if (n.opset() >= 12 && n.hasInput(2)) {
    auto training = n.constantInput(2, "training_mode");
    if (!training)
      return failure();
    double ratio = 0.5;
    if (n.hasInput(1)) {
      auto r = n.constantInput(1, "ratio");
      if (!r)
        return failure();
      ratio = r->get(0);
    }
    if (training->getInt(0) && ratio != 0)
      return n.error() << "training-mode dropout is random; dlc imports "
                          "inference graphs";
  }
  Value x = n.input(0);
  if (failed(n.setOutput(0, x)))
    return failure();
  if (n.wantsOutput(1))
    return n.setOutput(1, n.broadcastTo(n.scalar(1, n.i1()), shapeOf(x)));
  return success();
}

/// A scale or zero point (scalar, or per channel along `axis`) shaped to
/// broadcast over a tensor of rank `rank`.
static Value alongAxis(NodeImporter &n, Value v, int64_t axis, int64_t rank) {
  if (!v)
    return {};
  auto shape = shapeOf(v);
  if (shape.size() == 0 || (shape.size() == 1 && shape[0] == 1))
    return n.reshape(v, {});
  if (shape.size() != 1) {
    n.error() << "scale and zero point must be scalars or 1-D (blocked "
                 "quantization is not supported)";
    return {};
  }
  auto normal = normalizeAxisOrError(n, axis, rank);
  if (!normal)
    return {};
  SmallVector<int64_t> aligned(rank, 1);
  aligned[*normal] = shape[0];
  return n.reshape(v, aligned);
}

/// The axis of a per-channel scale (blocked quantization refused).
static std::optional<int64_t> quantAxis(NodeImporter &n) {
  auto axis = n.intAttr("axis", 1);
  auto block = n.intAttr("block_size", 0);
  if (!axis || !block)
    return std::nullopt;
  if (*block != 0) {
    (void)n.unsupported("block_size", "blocked quantization is not supported");
    return std::nullopt;
  }
  return *axis;
}

/// y = saturate(round(x / scale) + zero_point), rounding half to even, to
/// the zero point's type (uint8 without one).
static LogicalResult importQuantizeLinear(NodeImporter &n) {
  Value x = n.input(0);
  if (!x)
    return failure();
  int64_t rank = shapeOf(x).size();
  auto axis = quantAxis(n);
  auto outType = n.intAttr("output_dtype", 0);
  if (!axis || !outType)
    return failure();
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  Type target = n.b.getIntegerType(8, /*isSigned=*/false);
  if (n.hasInput(2)) {
    RankedTensorType zeroPoint = n.inputType(2);
    if (!zeroPoint) // not defined (found by the onnx fuzz target)
      return failure();
    target = zeroPoint.getElementType();
  } else if (*outType) {
    auto t = n.graph.requireElementType(
        *outType, n.loc, "node '" + n.name + "' (QuantizeLinear): the output");
    if (failed(t))
      return failure();
    target = *t;
  }
  if (!target.isInteger(8))
    return n.error() << "quantization targets int8 and uint8 only";
  Value scale = n.cast(alongAxis(n, n.input(1), *axis, rank), element);
  Value q = n.create<RoundOp>({n.create<DivOp>({x, scale})});
  if (n.hasInput(2))
    q = n.create<AddOp>(
        {q, n.cast(alongAxis(n, n.input(2), *axis, rank), element)});
  bool isSigned = !target.isUnsignedInteger(8);
  q = n.create<MaxOp>({q, n.scalar(isSigned ? -128 : 0, element)});
  q = n.create<MinOp>({q, n.scalar(isSigned ? 127 : 255, element)});
  return n.setOutput(0, n.cast(q, target));
}

/// y = (x - zero_point) * scale, in the scale's type.
static LogicalResult importDequantizeLinear(NodeImporter &n) {
  Value x = n.input(0);
  if (!x)
    return failure();
  int64_t rank = shapeOf(x).size();
  auto axis = quantAxis(n);
  if (!axis)
    return failure();
  Value scale = alongAxis(n, n.input(1), *axis, rank);
  if (!scale)
    return failure();
  Type element = cast<RankedTensorType>(scale.getType()).getElementType();
  Value v = n.cast(x, element);
  if (n.hasInput(2))
    v = n.create<SubOp>(
        {v, n.cast(alongAxis(n, n.input(2), *axis, rank), element)});
  return n.setOutput(0, n.create<MulOp>({v, scale}));
}

void addTypeOps(OpTable &t) {
  t["QuantizeLinear"] = {{"axis", "block_size", "output_dtype", "saturate"},
                         importQuantizeLinear};
  t["DequantizeLinear"] = {{"axis", "block_size"}, importDequantizeLinear};
  // `saturate` (opset 19) concerns float8 targets only, which dlc has not.
  t["Cast"] = {{"saturate", "to"}, importCast};
  t["CastLike"] = {{"saturate"}, importCastLike};
  t["Identity"] = {{}, importIdentity};
  t["Dropout"] = {{"ratio", "seed"}, importDropout};
}

} // namespace dlc::onnximport
