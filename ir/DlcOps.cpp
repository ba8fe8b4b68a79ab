//===- DlcOps.cpp - the dlc ops: generated code and source ops ------------===//
//
// The ODS-generated definitions, and the verifiers and folders of the ops
// that produce values from nothing (constant, iota, param) or reinterpret
// one (cast, reshape, broadcast_to). The shape rules of the other families
// live in <Family>Ops.cpp beside this file.
//
//===----------------------------------------------------------------------===//

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace dlc;

#define GET_OP_CLASSES
#include "ir/DlcOps.cpp.inc"

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  auto value = dyn_cast_or_null<ElementsAttr>(adaptor.getValueAttr());
  if (!value)
    return opError(loc, getOperationName(), "needs an elements attribute 'value'");
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return opError(loc, getOperationName(), "value must be a ranked tensor");
  types.push_back(type);
  return success();
}

LogicalResult ConstantOp::verify() { return success(); }

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// IotaOp
//===----------------------------------------------------------------------===//

LogicalResult IotaOp::verify() {
  int64_t rank = getType().getRank();
  if (rank == 0)
    return emitOpError("needs a result of rank at least 1");
  if (!normalizeAxis(getAxis(), rank))
    return emitOpError("axis ") << static_cast<int64_t>(getAxis()) << " is out of range for "
                                << formatType(getType());
  return success();
}

//===----------------------------------------------------------------------===//
// ParamOp
//===----------------------------------------------------------------------===//

/// Checks that `init[key]` is present (unless optional) and of the expected
/// kind of attribute.
template <typename AttrT>
static LogicalResult checkInitEntry(ParamOp op, DictionaryAttr init,
                                    StringRef key, StringRef what,
                                    bool optional) {
  Attribute value = init.get(key);
  if (!value) {
    if (optional) return success();
    return op.emitOpError("initialiser '")
           << init.getAs<StringAttr>("kind").getValue() << "' needs '" << key
           << "' (" << what << ")";
  }
  if (!isa<AttrT>(value))
    return op.emitOpError("initialiser entry '") << key << "' must be " << what;
  return success();
}

LogicalResult ParamOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty name");
  DictionaryAttr init = getInit();
  auto kind = init.getAs<StringAttr>("kind");
  if (!kind)
    return emitOpError("initialiser needs a string 'kind'");
  StringRef k = kind.getValue();
  bool isFloat = isa<FloatType>(getType().getElementType());
  if (k == "zeros" || k == "ones")
    return success();
  if (k == "normal" || k == "uniform" || k == "xavier" || k == "he") {
    if (!isFloat)
      return emitOpError("random initialiser '")
             << k << "' needs a floating-point parameter, not "
             << formatType(getType());
    for (StringRef key : {"mean", "std", "low", "high"}) {
      Attribute v = init.get(key);
      if (v && !isa<FloatAttr, IntegerAttr>(v))
        return emitOpError("initialiser entry '") << key << "' must be a number";
    }
    return checkInitEntry<IntegerAttr>(*this, init, "seed", "an integer seed",
                                       /*optional=*/true);
  }
  if (k == "data") {
    auto value = dyn_cast_or_null<ElementsAttr>(init.get("value"));
    if (!value)
      return emitOpError("initialiser 'data' needs 'value' (an elements "
                         "attribute holding the parameter's value)");
    if (value.getType() != getType())
      return emitOpError("initialiser 'data' holds ")
             << formatType(value.getType()) << ", but the parameter is "
             << formatType(getType());
    return success();
  }
  if (k == "file") {
    if (failed(checkInitEntry<StringAttr>(*this, init, "path", "a file path",
                                          /*optional=*/false)) ||
        failed(checkInitEntry<StringAttr>(*this, init, "key",
                                          "an archive key", /*optional=*/true)))
      return failure();
    return success();
  }
  return emitOpError("unknown initialiser '")
         << k << "' (expected zeros, ones, normal, uniform, xavier, he, file or data)";
}

//===----------------------------------------------------------------------===//
// CastOp, ReshapeOp, BroadcastToOp
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  auto in = getX().getType(), out = getType();
  if (in.getShape() != out.getShape())
    return emitOpError("changes the shape: ")
           << formatType(in) << " to " << formatType(out);
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto in = getX().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("changes the element type: ")
           << formatType(in) << " to " << formatType(out);
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << formatType(in) << " (" << in.getNumElements() << " elements) to "
           << formatType(out) << " (" << out.getNumElements() << " elements)";
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getX().getType() == getType())
    return getX();
  return {};
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getX().getType() == getType())
    return getX();
  // A reshaped constant is the same elements under the new shape; a large
  // one is only rewritten when nothing else reads the old shape.
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getX()))
    if (dense.isSplat() || getX().hasOneUse())
      return dense.reshape(getType());
  // reshape(reshape(x)) = reshape(x): skip the inner one.
  if (auto inner = getX().getDefiningOp<ReshapeOp>()) {
    getXMutable().assign(inner.getX());
    return getResult();
  }
  return {};
}

LogicalResult BroadcastToOp::verify() {
  auto in = getX().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("changes the element type: ")
           << formatType(in) << " to " << formatType(out);
  auto shape = broadcastShapes(in.getShape(), out.getShape());
  if (!shape || ArrayRef<int64_t>(*shape) != out.getShape())
    return emitOpError("cannot broadcast ")
           << formatType(in) << " to " << formatType(out);
  return success();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (getX().getType() == getType())
    return getX();
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getX()))
    return SplatElementsAttr::get(getType(), splat.getSplatValue<Attribute>());
  return {};
}
