//===- Collectives.cpp - the collectives' semantics over a group ----------===//

#include "oracle/kernels/Collectives.h"

#include "oracle/kernels/Kernels.h"

#include <algorithm>

namespace dlc::oracle {

namespace {
void requireSameShape(const std::vector<Tensor> &group) {
  if (group.empty())
    throw EvalError("a collective over an empty group");
  for (const Tensor &t : group)
    if (t.shape != group[0].shape || t.dtype != group[0].dtype)
      throw EvalError("the ranks of a group hold tensors of different shapes");
}
} // namespace

Tensor block(const Tensor &x, int64_t axis, int64_t index, int64_t count) {
  std::vector<int64_t> starts(x.rank(), 0), limits = x.shape, strides(x.rank(), 1);
  int64_t size = x.shape[axis] / count;
  starts[axis] = index * size;
  limits[axis] = (index + 1) * size;
  return slice(x, starts, limits, strides);
}

std::vector<Tensor> allReduce(const std::vector<Tensor> &group, CollectiveKind kind) {
  requireSameShape(group);
  const Tensor &first = group[0];
  std::vector<double> acc = first.data;
  for (size_t m = 1; m < group.size(); ++m)
    for (size_t i = 0; i < acc.size(); ++i) {
      double v = group[m].data[i];
      switch (kind) {
      case CollectiveKind::Sum:
      case CollectiveKind::Avg: acc[i] += v; break;
      case CollectiveKind::Max: acc[i] = std::max(acc[i], v); break;
      case CollectiveKind::Min: acc[i] = std::min(acc[i], v); break;
      }
    }
  if (kind == CollectiveKind::Avg)
    for (double &v : acc)
      v /= static_cast<double>(group.size());
  Tensor result = Tensor::fromValues(first.dtype, first.shape, std::move(acc));
  return std::vector<Tensor>(group.size(), result);
}

std::vector<Tensor> allGather(const std::vector<Tensor> &group, int64_t axis) {
  requireSameShape(group);
  Tensor whole = concat(group, axis);
  return std::vector<Tensor>(group.size(), whole);
}

std::vector<Tensor> reduceScatter(const std::vector<Tensor> &group,
                                  CollectiveKind kind, int64_t axis) {
  Tensor reduced = allReduce(group, kind)[0];
  std::vector<Tensor> out;
  int64_t n = static_cast<int64_t>(group.size());
  for (int64_t i = 0; i < n; ++i)
    out.push_back(block(reduced, axis, i, n));
  return out;
}

std::vector<Tensor> allToAll(const std::vector<Tensor> &group, int64_t splitAxis,
                             int64_t concatAxis) {
  requireSameShape(group);
  int64_t n = static_cast<int64_t>(group.size());
  std::vector<Tensor> out;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<Tensor> received;
    for (int64_t j = 0; j < n; ++j)
      received.push_back(block(group[j], splitAxis, i, n));
    out.push_back(concat(received, concatAxis));
  }
  return out;
}

std::vector<Tensor> broadcast(const std::vector<Tensor> &group, int64_t root) {
  requireSameShape(group);
  return std::vector<Tensor>(group.size(), group.at(root));
}

} // namespace dlc::oracle
