//===- Constant.cpp - values known at import time -------------------------===//
//
// `Constant`, the host-side value of a tensor known while importing (a
// Constant node, folded shape arithmetic, a small initializer): appending
// elements rounded to the element type, and turning it into an attribute.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>

using namespace mlir;

namespace dlc::onnximport {

int64_t Constant::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

void Constant::push(double value) {
  if (isFloat()) {
    if (element.isF32())
      value = static_cast<float>(value);
    floats.push_back(value);
  } else if (element.isInteger(1)) {
    ints.push_back(value != 0);
  } else {
    int64_t v = std::isnan(value) ? 0
                : value >= 9.2233720368547758e18
                    ? INT64_MAX
                    : value <= -9.2233720368547758e18 ? INT64_MIN
                                                      : int64_t(value);
    pushInt(v);
  }
}

void Constant::pushInt(int64_t value) {
  if (isFloat())
    floats.push_back(static_cast<double>(value));
  else if (element.isInteger(1))
    ints.push_back(value != 0);
  else if (element.isInteger(32))
    ints.push_back(static_cast<int32_t>(value));
  else if (element.isUnsignedInteger(8))
    ints.push_back(static_cast<uint8_t>(value));
  else if (element.isInteger(8))
    ints.push_back(static_cast<int8_t>(value));
  else
    ints.push_back(value);
}

RankedTensorType Constant::type() const {
  return RankedTensorType::get(shape, element);
}

DenseElementsAttr Constant::toAttr() const {
  auto t = type();
  int64_t n = numel();
  bool splat = n > 0;
  for (int64_t i = 1; i < n && splat; ++i)
    splat = isFloat() ? (floats[i] == floats[0] &&
                         std::signbit(floats[i]) == std::signbit(floats[0]))
                      : ints[i] == ints[0];
  if (auto f = dyn_cast<FloatType>(element)) {
    auto toAP = [&](double v) {
      APFloat ap(v);
      bool lost;
      ap.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      return ap;
    };
    if (splat)
      return DenseElementsAttr::get(t, toAP(floats[0]));
    SmallVector<APFloat> values;
    for (double v : floats)
      values.push_back(toAP(v));
    return DenseElementsAttr::get(t, values);
  }
  if (element.isInteger(1)) {
    if (splat)
      return DenseElementsAttr::get(t, ints[0] != 0);
    SmallVector<bool> values;
    for (int64_t v : ints)
      values.push_back(v != 0);
    return DenseElementsAttr::get(t, values);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  if (splat)
    return DenseElementsAttr::get(t, APInt(width, ints[0], /*isSigned=*/true));
  SmallVector<APInt> values;
  for (int64_t v : ints)
    values.push_back(APInt(width, v, /*isSigned=*/true));
  return DenseElementsAttr::get(t, values);
}

Constant Constant::empty(Type element, std::vector<int64_t> shape) {
  Constant c;
  c.element = element;
  c.shape = std::move(shape);
  return c;
}

} // namespace dlc::onnximport
