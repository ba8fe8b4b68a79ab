//===- HostCollectives.cpp - a partitioned graph's collectives on host tensors ===//

#include "driver/HostCollectives.h"

#include "ir/DlcDialect.h"
#include "oracle/Spmd.h"
#include "oracle/kernels/Tensor.h"
#include "runtime/comm/Communicator.h"

#include <algorithm>
#include <cstring>
#include <functional>

using namespace mlir;

namespace dlc {

HostTensor blockOf(const HostTensor &x, int64_t axis, int64_t index, int64_t count) {
  std::vector<int64_t> shape = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  size_t e = elementSize(x.dtype());
  int64_t size = shape[axis] / count;
  shape[axis] = size;
  HostTensor out(x.dtype(), shape);
  size_t row = static_cast<size_t>(size * inner) * e;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.mutableData() + o * row,
                x.data() + (o * x.shape()[axis] + index * size) * inner * e, row);
  return out;
}

HostTensor concatOf(const std::vector<HostTensor> &parts, int64_t axis) {
  std::vector<int64_t> shape = parts[0].shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  size_t e = elementSize(parts[0].dtype());
  int64_t each = shape[axis];
  shape[axis] = each * static_cast<int64_t>(parts.size());
  HostTensor out(parts[0].dtype(), shape);
  size_t row = static_cast<size_t>(each * inner) * e;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t p = 0; p < parts.size(); ++p)
      std::memcpy(out.mutableData() + (o * parts.size() + p) * row,
                  parts[p].data() + o * row, row);
  return out;
}

namespace {

/// `g` blocks of `shape`, one after another in `flat`.
std::vector<HostTensor> splitFlat(const HostTensor &flat, const std::vector<int64_t> &shape,
                                  int64_t g) {
  std::vector<HostTensor> blocks;
  size_t bytes = flat.byteSize() / static_cast<size_t>(g);
  for (int64_t i = 0; i < g; ++i) {
    HostTensor b(flat.dtype(), shape);
    std::memcpy(b.mutableData(), flat.data() + i * bytes, bytes);
    blocks.push_back(std::move(b));
  }
  return blocks;
}

/// The concatenation along `axis` of the `g` blocks of `shape` that lie one
/// after another in `flat` (an all-gather's receive buffer): `flat` itself
/// where the blocks are already in place (axis 0, or only size-1 dims
/// before it), else one copy of rows, never the blocks apart first (a
/// Megatron column split's new parameters are gathered on axis 1 every
/// step).
HostTensor concatOfFlat(HostTensor flat, std::vector<int64_t> shape, int64_t g, int64_t axis) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  size_t row = static_cast<size_t>(shape[axis] * inner) * elementSize(flat.dtype());
  shape[axis] *= g;
  DType dtype = flat.dtype();
  if (outer == 1)
    return HostTensor(dtype, std::move(shape), std::move(flat).takeBytes());
  HostTensor out(dtype, std::move(shape));
  size_t block = static_cast<size_t>(outer) * row;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p = 0; p < g; ++p)
      std::memcpy(out.mutableData() + (o * g + p) * row, flat.data() + p * block + o * row, row);
  return out;
}

rt::comm::ReduceOp reduceOpOf(CollectiveReduction kind) {
  switch (kind) {
  case CollectiveReduction::max: return rt::comm::ReduceOp::kMax;
  case CollectiveReduction::min: return rt::comm::ReduceOp::kMin;
  case CollectiveReduction::avg: return rt::comm::ReduceOp::kAvg;
  default: return rt::comm::ReduceOp::kSum;
  }
}


/// The collective `op` on this rank's tensor `x`, through `comm`: each
/// group is the whole world (checked before), in rank order.
FailureOr<HostTensor> communicateOne(Operation *op, const HostTensor &x,
                                  rt::comm::Communicator &comm, std::string &error) {
  int64_t g = comm.size(), r = comm.rank();
  int64_t rank = static_cast<int64_t>(x.shape().size());
  auto norm = [&](int64_t a) { return a < 0 ? a + rank : a; };

  auto check = [&](const rt::Status &s) {
    if (!s.ok())
      error = s.message();
    return s.ok();
  };
  size_t e = elementSize(x.dtype());
  uint64_t count = e ? x.byteSize() / e : 0;
  if (auto o = dyn_cast<ShardOp>(op))
    return blockOf(x, norm(o.getAxis()), r, g);
  if (auto o = dyn_cast<AllReduceOp>(op)) {
    HostTensor y(x.dtype(), x.shape());
    std::memcpy(y.mutableData(), x.data(), x.byteSize());
    if (!check(comm.allReduce(y.mutableData(), count, y.dtype(), reduceOpOf(o.getKind()))))
      return failure();
    return y;
  }
  if (auto o = dyn_cast<BroadcastOp>(op)) {
    HostTensor y(x.dtype(), x.shape());
    std::memcpy(y.mutableData(), x.data(), x.byteSize());
    if (!check(comm.broadcast(y.mutableData(), count, y.dtype(), static_cast<int>(o.getRoot()))))
      return failure();
    return y;
  }
  if (auto o = dyn_cast<AllGatherOp>(op)) {
    HostTensor recv(x.dtype(), {g * static_cast<int64_t>(count)});
    if (!check(comm.allGather(x.data(), recv.mutableData(), count, x.dtype())))
      return failure();
    return concatOfFlat(std::move(recv), x.shape(), g, norm(o.getAxis()));
  }
  // Block i of the split axis contiguous, in rank order.
  auto blocksInOrder = [&](int64_t axis) {
    std::vector<HostTensor> blocks;
    for (int64_t i = 0; i < g; ++i)
      blocks.push_back(blockOf(x, axis, i, g));
    HostTensor flat(x.dtype(), {static_cast<int64_t>(count)});
    size_t bytes = blocks[0].byteSize();
    for (int64_t i = 0; i < g; ++i)
      std::memcpy(flat.mutableData() + i * bytes, blocks[i].data(), bytes);
    return std::make_pair(flat, blocks[0].shape());
  };
  if (auto o = dyn_cast<ReduceScatterOp>(op)) {
    auto [send, shape] = blocksInOrder(norm(o.getAxis()));
    HostTensor recv(x.dtype(), shape);
    if (!check(comm.reduceScatter(send.data(), recv.mutableData(), count / g, x.dtype(),
                                  reduceOpOf(o.getKind()))))
      return failure();
    return recv;
  }
  if (auto o = dyn_cast<AllToAllOp>(op)) {
    auto [send, shape] = blocksInOrder(norm(o.getSplitAxis()));
    HostTensor recv(x.dtype(), {static_cast<int64_t>(count)});
    if (!check(comm.allToAll(send.data(), recv.mutableData(), count / g, x.dtype())))
      return failure();
    return concatOfFlat(std::move(recv), shape, g, norm(o.getConcatAxis()));
  }
  error = "no host form for '" + op->getName().getStringRef().str() + "'";
  return failure();
}


} // namespace

LogicalResult communicate(ArrayRef<Operation *> ops, const std::vector<HostTensor> &xs,
                          std::vector<HostTensor> &ys, rt::comm::Communicator &comm,
                          std::string &error) {
  ys.clear();
  if (ops.size() == 1) {
    auto y = communicateOne(ops[0], xs[0], comm, error);
    if (failed(y))
      return failure();
    ys.push_back(std::move(*y));
    return success();
  }
  // A bucket: the all-reduces' operands one after another in one buffer,
  // reduced by one call, then cut apart.
  size_t total = 0;
  for (const HostTensor &x : xs)
    total += x.byteSize();
  size_t e = elementSize(xs[0].dtype());
  HostTensor flat(xs[0].dtype(), {static_cast<int64_t>(total / e)});
  size_t at = 0;
  for (const HostTensor &x : xs) {
    std::memcpy(flat.mutableData() + at, x.data(), x.byteSize());
    at += x.byteSize();
  }
  rt::comm::ReduceOp kind = reduceOpOf(cast<AllReduceOp>(ops[0]).getKind());
  if (rt::Status s = comm.allReduce(flat.mutableData(), total / e, flat.dtype(), kind); !s.ok()) {
    error = s.message();
    return failure();
  }
  at = 0;
  for (const HostTensor &x : xs) {
    HostTensor y(x.dtype(), x.shape());
    std::memcpy(y.mutableData(), flat.data() + at, x.byteSize());
    at += x.byteSize();
    ys.push_back(std::move(y));
  }
  return success();
}

/// Every shard's tensor (this process's `local`, the others' from the
/// peers), in shard order.
LogicalResult gatherShards(const std::vector<HostTensor> &local, std::vector<HostTensor> &all,
                           rt::comm::Communicator &comm, std::string &error) {
  all.clear();
  if (comm.size() == 1) {
    all = local;
    return success();
  }
  size_t bytes = local[0].byteSize(), e = elementSize(local[0].dtype());
  HostTensor send(local[0].dtype(), {static_cast<int64_t>(bytes * local.size() / e)});
  for (size_t s = 0; s < local.size(); ++s)
    std::memcpy(send.mutableData() + s * bytes, local[s].data(), bytes);
  HostTensor recv(local[0].dtype(), {send.numel() * comm.size()});
  if (rt::Status s = comm.allGather(send.data(), recv.mutableData(),
                                    static_cast<uint64_t>(send.numel()), send.dtype());
      !s.ok()) {
    error = s.message();
    return failure();
  }
  all = splitFlat(recv, local[0].shape(),
                  static_cast<int64_t>(local.size()) * comm.size());
  return success();
}

LogicalResult communicateInShardOrder(Operation *op, const Mesh &mesh,
                                      const std::vector<HostTensor> &xs,
                                      std::vector<HostTensor> &ys,
                                      rt::comm::Communicator &comm, std::string &error) {
  int64_t local = static_cast<int64_t>(xs.size());
  int64_t first = comm.rank() * local;
  std::vector<std::string> axes;
  for (Attribute a : op->getAttrOfType<ArrayAttr>("mesh_axes"))
    axes.push_back(cast<StringAttr>(a).str());
  // Shard `s` of this process is rank first + s of the mesh; its group,
  // and its place in it.
  auto groupOf = [&](int64_t s, int64_t &position) {
    std::vector<int64_t> members = mesh.group(first + s, axes);
    position = std::find(members.begin(), members.end(), first + s) - members.begin();
    return members;
  };
  ys.clear();
  if (auto shard = dyn_cast<ShardOp>(op)) {
    int64_t axis = shard.getAxis() < 0 ? shard.getAxis() + xs[0].rank() : shard.getAxis();
    for (int64_t s = 0; s < local; ++s) {
      int64_t position;
      int64_t size = static_cast<int64_t>(groupOf(s, position).size());
      ys.push_back(blockOf(xs[s], axis, position, size));
    }
    return success();
  }
  std::vector<HostTensor> all;
  if (failed(gatherShards(xs, all, comm, error)))
    return failure();
  try {
    for (int64_t s = 0; s < local; ++s) {
      int64_t position;
      std::vector<oracle::Tensor> group;
      for (int64_t m : groupOf(s, position))
        group.push_back(oracle::Tensor::fromHost(all[m]));
      ys.push_back(oracle::collectiveOverGroup(op, group)[position].toHost());
    }
  } catch (const oracle::EvalError &e) {
    error = e.what();
    return failure();
  }
  return success();
}

HostTensor assembleBlocks(const std::vector<HostTensor> &blocks, const Mesh &mesh,
                          const std::vector<std::string> &dims) {
  // Ranks at coordinate 0 on every axis but those still to be assembled;
  // each split dimension in turn concatenates its axis' positions.
  std::function<HostTensor(std::vector<int64_t>, size_t)> build =
      [&](std::vector<int64_t> coords, size_t d) -> HostTensor {
    while (d < dims.size() && dims[d].empty())
      ++d;
    if (d == dims.size())
      return blocks[mesh.rankOf(coords)];
    int64_t axis = mesh.axisIndex(dims[d]);
    std::vector<HostTensor> parts;
    for (int64_t p = 0; p < mesh.axes()[axis].second; ++p) {
      coords[axis] = p;
      parts.push_back(build(coords, d + 1));
    }
    return concatOf(parts, static_cast<int64_t>(d));
  };
  return build(std::vector<int64_t>(mesh.axes().size(), 0), 0);
}

HostTensor blockOfRank(const HostTensor &whole, const Mesh &mesh,
                       const std::vector<std::string> &dims, int64_t rank) {
  std::vector<int64_t> coords = mesh.coordinates(rank);
  HostTensor block = whole;
  for (auto [d, name] : llvm::enumerate(dims)) {
    if (name.empty())
      continue;
    int64_t axis = mesh.axisIndex(name);
    block = blockOf(block, static_cast<int64_t>(d), coords[axis], mesh.axes()[axis].second);
  }
  return block;
}

} // namespace dlc
