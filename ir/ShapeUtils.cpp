//===- ShapeUtils.cpp - shape rules shared by the dlc ops -----------------===//

#include "ir/ShapeUtils.h"

#include "mlir/Dialect/Traits.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dlc {

std::string formatElementType(Type type) {
  if (type.isF64()) return "f64";
  if (type.isF32()) return "f32";
  if (type.isF16()) return "f16";
  if (type.isBF16()) return "bf16";
  if (auto intType = dyn_cast<IntegerType>(type))
    return (intType.isUnsigned() ? "u" : "i") +
           std::to_string(intType.getWidth());
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

int64_t saturatingProduct(std::initializer_list<int64_t> factors) {
  int64_t p = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(p, f, &p))
      return INT64_MAX;
  return p;
}

int64_t saturatingSum(int64_t a, int64_t b) {
  int64_t s;
  return __builtin_add_overflow(a, b, &s) ? INT64_MAX : s;
}

std::string shapeSizeProblem(ArrayRef<int64_t> shape) {
  for (int64_t d : shape)
    if (d < 0 && !ShapedType::isDynamic(d))
      return "has a negative dimension (a size computation overflowed?)";
  int64_t elements = 1;
  for (int64_t d : shape)
    if (!ShapedType::isDynamic(d) &&
        (__builtin_mul_overflow(elements, d, &elements) ||
         elements > (int64_t(1) << 48)))
      return "has more than 2^48 elements";
  return "";
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (i) text += ", ";
    text += ShapedType::isDynamic(dim) ? "?" : std::to_string(dim);
  }
  return text + "]";
}

std::string formatType(Type type) {
  if (auto ranked = dyn_cast<RankedTensorType>(type))
    return formatElementType(ranked.getElementType()) +
           formatShape(ranked.getShape());
  return formatElementType(type);
}

std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b) {
  SmallVector<int64_t> result;
  if (!OpTrait::util::getBroadcastedShape(a, b, result))
    return std::nullopt;
  return result;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

LogicalResult
requireAttrs(std::optional<Location> loc, StringRef opName,
             std::initializer_list<std::pair<StringRef, Attribute>> attrs) {
  for (auto [name, attr] : attrs)
    if (!attr)
      return opError(loc, opName, "needs attribute '", name, "'");
  return success();
}

int64_t axisOr(IntegerAttr attr, int64_t fallback) {
  return attr ? attr.getValue().getSExtValue() : fallback;
}

double floatOr(FloatAttr attr, double fallback) {
  return attr ? attr.getValueAsDouble() : fallback;
}

bool boolOr(BoolAttr attr, bool fallback) {
  return attr ? attr.getValue() : fallback;
}

RankedTensorType getRankedType(Value value) {
  return dyn_cast<RankedTensorType>(value.getType());
}

} // namespace dlc
