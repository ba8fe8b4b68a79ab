//===- ShapeHelpers.cpp - helpers the data-movement ops share -------------===//
//
// Folding on the host (element counts, strides, remapping a known value's
// elements) and `dlc.slice` building; see ShapeHelpers.h.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ShapeHelpers.h"

using namespace mlir;

namespace dlc::onnximport {

int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Constant remap(const Constant &in, ArrayRef<int64_t> shape,
               const std::function<int64_t(ArrayRef<int64_t>)> &source) {
  Constant out = Constant::empty(in.element, {shape.begin(), shape.end()});
  SmallVector<int64_t> index(shape.size(), 0);
  int64_t n = product(shape);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t from = source(index);
    if (in.isFloat())
      out.floats.push_back(in.floats[from]);
    else
      out.ints.push_back(in.ints[from]);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

Value slice(NodeImporter &n, Value x, ArrayRef<int64_t> starts,
            ArrayRef<int64_t> limits, ArrayRef<int64_t> strides) {
  return n.create<SliceOp>({x}, {n.i64s("starts", starts),
                                 n.i64s("limits", limits),
                                 n.i64s("strides", strides)});
}

} // namespace dlc::onnximport
