//===- Tensor.cpp - the oracle's float64 working tensor ------------------===//

#include "oracle/kernels/Tensor.h"

#include <cassert>

namespace dlc::oracle {

int64_t shapeNumel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    assert(d >= 0 && "negative dimension");
    n *= d;
  }
  return n;
}

int64_t Tensor::numel() const { return shapeNumel(shape); }

Tensor Tensor::zeros(DType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dtype;
  t.data.assign(static_cast<size_t>(shapeNumel(shape)), 0.0);
  t.shape = std::move(shape);
  return t;
}

Tensor Tensor::fromValues(DType dtype, std::vector<int64_t> shape,
                          std::vector<double> values) {
  assert(static_cast<int64_t>(values.size()) == shapeNumel(shape) &&
         "value count does not match shape");
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = std::move(values);
  for (double &v : t.data)
    v = roundTo(dtype, v);
  return t;
}

Tensor Tensor::scalar(DType dtype, double value) {
  return fromValues(dtype, {}, {value});
}

Tensor Tensor::fromHost(const HostTensor &host) {
  return fromValues(host.dtype(), host.shape(), host.toDoubles());
}

HostTensor Tensor::toHost() const {
  return HostTensor::fromDoubles(dtype, shape, data);
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::vector<int64_t> broadcastIndexMap(const std::vector<int64_t> &outShape,
                                       const std::vector<int64_t> &inShape) {
  const size_t outRank = outShape.size();
  const size_t inRank = inShape.size();
  assert(inRank <= outRank && "input rank exceeds broadcast rank");
  // Input strides aligned to the output's dims; 0 where the input dim is 1
  // (broadcast) or missing.
  std::vector<int64_t> inStrides = contiguousStrides(inShape);
  std::vector<int64_t> aligned(outRank, 0);
  for (size_t i = 0; i < inRank; ++i) {
    size_t o = outRank - inRank + i;
    assert((inShape[i] == 1 || inShape[i] == outShape[o]) &&
           "shape does not broadcast");
    aligned[o] = inShape[i] == 1 ? 0 : inStrides[i];
  }
  int64_t n = shapeNumel(outShape);
  std::vector<int64_t> map(static_cast<size_t>(n));
  std::vector<int64_t> idx(outRank, 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t off = 0;
    for (size_t d = 0; d < outRank; ++d)
      off += idx[d] * aligned[d];
    map[static_cast<size_t>(flat)] = off;
    // Increment the multi-index (row-major).
    for (int64_t d = static_cast<int64_t>(outRank) - 1; d >= 0; --d) {
      if (++idx[d] < outShape[d])
        break;
      idx[d] = 0;
    }
  }
  return map;
}

} // namespace dlc::oracle
