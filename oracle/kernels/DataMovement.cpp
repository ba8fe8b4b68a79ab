//===- DataMovement.cpp - reshape, transpose, slice, gather, ... ----------===//

#include "oracle/kernels/Kernels.h"

#include <cassert>
#include <string>

namespace dlc::oracle {

namespace {

/// Calls fn(multiIndex, flatIndex) for every element of `shape`, row-major.
template <typename Fn>
void forEachIndex(const std::vector<int64_t> &shape, Fn fn) {
  const int64_t n = shapeNumel(shape);
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    fn(idx, flat);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

int64_t product(const std::vector<int64_t> &shape, size_t begin,
                size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i)
    p *= shape[i];
  return p;
}

} // namespace

Tensor reshape(const Tensor &x, std::vector<int64_t> newShape) {
  assert(shapeNumel(newShape) == x.numel() && "reshape changes numel");
  Tensor out = x;
  out.shape = std::move(newShape);
  return out;
}

Tensor transpose(const Tensor &x, const std::vector<int64_t> &perm) {
  const size_t rank = x.shape.size();
  assert(perm.size() == rank && "transpose perm has wrong length");
  std::vector<int64_t> outShape(rank);
  for (size_t i = 0; i < rank; ++i) {
    assert(perm[i] >= 0 && perm[i] < static_cast<int64_t>(rank));
    outShape[i] = x.shape[perm[i]];
  }
  const std::vector<int64_t> inStrides = contiguousStrides(x.shape);
  Tensor out = Tensor::zeros(x.dtype, outShape);
  forEachIndex(outShape, [&](const std::vector<int64_t> &idx, int64_t flat) {
    int64_t off = 0;
    for (size_t i = 0; i < rank; ++i)
      off += idx[i] * inStrides[perm[i]];
    out.data[flat] = x.data[off];
  });
  return out;
}

Tensor broadcastTo(const Tensor &x, std::vector<int64_t> shape) {
  assert(broadcastShapes(x.shape, shape) == shape &&
         "broadcast_to: shape is not a broadcast of the input");
  std::vector<int64_t> map = broadcastIndexMap(shape, x.shape);
  Tensor out = Tensor::zeros(x.dtype, std::move(shape));
  for (size_t i = 0; i < out.data.size(); ++i)
    out.data[i] = x.data[map[i]];
  return out;
}

Tensor concat(const std::vector<const Tensor *> &inputs, int64_t axis) {
  assert(!inputs.empty() && "concat needs at least one input");
  const Tensor &first = *inputs.front();
  assert(axis >= 0 && axis < first.rank() && "concat axis out of range");
  std::vector<int64_t> outShape = first.shape;
  outShape[axis] = 0;
  for (const Tensor *t : inputs) {
    assert(t->dtype == first.dtype && t->rank() == first.rank());
    for (int64_t d = 0; d < first.rank(); ++d)
      assert((d == axis || t->shape[d] == first.shape[d]) &&
             "concat: non-axis dims differ");
    outShape[axis] += t->shape[axis];
  }
  // View every tensor as [outer, axisSize * inner]; copy row chunks.
  const int64_t outer = product(outShape, 0, static_cast<size_t>(axis));
  const int64_t inner =
      product(outShape, static_cast<size_t>(axis) + 1, outShape.size());
  Tensor out = Tensor::zeros(first.dtype, outShape);
  const int64_t outRow = outShape[axis] * inner;
  int64_t colOffset = 0;
  for (const Tensor *t : inputs) {
    const int64_t chunk = t->shape[axis] * inner;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < chunk; ++j)
        out.data[o * outRow + colOffset + j] = t->data[o * chunk + j];
    colOffset += chunk;
  }
  return out;
}

Tensor concat(const std::vector<Tensor> &inputs, int64_t axis) {
  std::vector<const Tensor *> ptrs;
  for (const Tensor &t : inputs)
    ptrs.push_back(&t);
  return concat(ptrs, axis);
}

Tensor slice(const Tensor &x, const std::vector<int64_t> &starts,
             const std::vector<int64_t> &limits,
             const std::vector<int64_t> &strides) {
  const size_t rank = x.shape.size();
  assert(starts.size() == rank && limits.size() == rank &&
         strides.size() == rank && "slice attribute length mismatch");
  std::vector<int64_t> outShape(rank);
  for (size_t d = 0; d < rank; ++d) {
    assert(starts[d] >= 0 && limits[d] >= 0 && strides[d] >= 1);
    assert(limits[d] <= x.shape[d] && "slice limit beyond dimension");
    outShape[d] = limits[d] > starts[d]
                      ? (limits[d] - starts[d] + strides[d] - 1) / strides[d]
                      : 0;
  }
  const std::vector<int64_t> inStrides = contiguousStrides(x.shape);
  Tensor out = Tensor::zeros(x.dtype, outShape);
  forEachIndex(outShape, [&](const std::vector<int64_t> &idx, int64_t flat) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d)
      off += (starts[d] + idx[d] * strides[d]) * inStrides[d];
    out.data[flat] = x.data[off];
  });
  return out;
}

Tensor gather(const Tensor &x, const Tensor &indices, int64_t axis) {
  assert(axis >= 0 && axis < x.rank() && "gather axis out of range");
  const int64_t axisSize = x.shape[axis];
  // Resolve (and validate) every index first.
  std::vector<int64_t> resolved(indices.data.size());
  for (size_t i = 0; i < resolved.size(); ++i) {
    const int64_t raw = toInt64(indices.data[i]);
    const int64_t idx = raw < 0 ? raw + axisSize : raw;
    if (idx < 0 || idx >= axisSize)
      throw EvalError("gather: index " + std::to_string(raw) +
                      " out of range for axis " + std::to_string(axis) +
                      " of size " + std::to_string(axisSize));
    resolved[i] = idx;
  }
  std::vector<int64_t> outShape(x.shape.begin(), x.shape.begin() + axis);
  outShape.insert(outShape.end(), indices.shape.begin(), indices.shape.end());
  outShape.insert(outShape.end(), x.shape.begin() + axis + 1, x.shape.end());
  const int64_t outer = product(x.shape, 0, static_cast<size_t>(axis));
  const int64_t inner =
      product(x.shape, static_cast<size_t>(axis) + 1, x.shape.size());
  const int64_t numIdx = static_cast<int64_t>(resolved.size());
  Tensor out = Tensor::zeros(x.dtype, outShape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < numIdx; ++j)
      for (int64_t in = 0; in < inner; ++in)
        out.data[(o * numIdx + j) * inner + in] =
            x.data[(o * axisSize + resolved[j]) * inner + in];
  return out;
}

Tensor embedding(const Tensor &table, const Tensor &ids) {
  assert(table.rank() == 2 && "embedding table must be [V, D]");
  const int64_t V = table.shape[0], D = table.shape[1];
  std::vector<int64_t> outShape = ids.shape;
  outShape.push_back(D);
  Tensor out = Tensor::zeros(table.dtype, outShape);
  for (size_t i = 0; i < ids.data.size(); ++i) {
    const int64_t id = toInt64(ids.data[i]);
    if (id < 0 || id >= V)
      throw EvalError("embedding: id " + std::to_string(id) + " at position " +
                      std::to_string(i) + " out of range [0, " +
                      std::to_string(V) + ")");
    for (int64_t d = 0; d < D; ++d)
      out.data[i * D + d] = table.data[id * D + d];
  }
  return out;
}

Tensor pad(const Tensor &x, const std::vector<int64_t> &low,
           const std::vector<int64_t> &high, double value) {
  const size_t rank = x.shape.size();
  assert(low.size() == rank && high.size() == rank);
  std::vector<int64_t> outShape(rank);
  for (size_t d = 0; d < rank; ++d) {
    assert(low[d] >= 0 && high[d] >= 0 && "pad amounts must be >= 0");
    outShape[d] = low[d] + x.shape[d] + high[d];
  }
  Tensor out = Tensor::zeros(x.dtype, outShape);
  const double fill = roundTo(x.dtype, value);
  for (double &v : out.data)
    v = fill;
  const std::vector<int64_t> outStrides = contiguousStrides(outShape);
  forEachIndex(x.shape, [&](const std::vector<int64_t> &idx, int64_t flat) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d)
      off += (idx[d] + low[d]) * outStrides[d];
    out.data[off] = x.data[flat];
  });
  return out;
}

Tensor iota(std::vector<int64_t> shape, int64_t axis, DType dtype) {
  assert(axis >= 0 && axis < static_cast<int64_t>(shape.size()));
  Tensor out = Tensor::zeros(dtype, shape);
  forEachIndex(shape, [&](const std::vector<int64_t> &idx, int64_t flat) {
    out.data[flat] = roundTo(dtype, static_cast<double>(idx[axis]));
  });
  return out;
}

} // namespace dlc::oracle
