//===- SpmdRunner.cpp - a partitioned graph on this process's rank --------===//
//
// Until the executor runs collectives inside a module, a partitioned graph
// runs on MPI ranks like this: the program is cut at its collectives into
// segments of ordinary ops; each segment is compiled for the CPU as its own
// module (its inputs: the graph's inputs and earlier values it reads; its
// outputs: the values later parts read); the driver runs the segments in
// order and carries out each collective between them on host tensors
// through runtime/comm (MPI under mpirun, a world of one otherwise).
//
//===----------------------------------------------------------------------===//

#include "driver/SpmdRunner.h"

#include "codegen/cpu/CpuBackend.h"
#include "driver/DriverSupport.h"
#include "driver/ModuleRunner.h"
#include "driver/PlanReport.h"
#include "ir/DlcDialect.h"
#include "passes/partition/Partition.h"
#include "runtime/comm/CommRegistry.h"
#include "runtime/comm/Launch.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

using namespace mlir;

namespace dlc {

namespace {

} // namespace

/// A run of ordinary ops between collectives, as its own function.
struct Segment {
  SmallVector<Operation *> ops;
  SmallVector<Value> inputs, outputs; ///< values of the partitioned graph
  LoadedModule module;
};

namespace {

/// Bytes of one element of `t`.
size_t elementBytes(const HostTensor &t) {
  int64_t n = 1;
  for (int64_t d : t.shape())
    n *= d;
  return n ? t.byteSize() / static_cast<size_t>(n) : 0;
}

/// Block `index` of `count` along `axis` (count divides it), as a copy.
HostTensor blockOf(const HostTensor &x, int64_t axis, int64_t index, int64_t count) {
  std::vector<int64_t> shape = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  size_t e = elementBytes(x);
  int64_t size = shape[axis] / count;
  shape[axis] = size;
  HostTensor out(x.dtype(), shape);
  size_t row = static_cast<size_t>(size * inner) * e;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.mutableData() + o * row,
                x.data() + (o * x.shape()[axis] + index * size) * inner * e, row);
  return out;
}

/// `parts` (one shape but along `axis`) concatenated along `axis`.
HostTensor concatOf(const std::vector<HostTensor> &parts, int64_t axis) {
  std::vector<int64_t> shape = parts[0].shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  size_t e = elementBytes(parts[0]);
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

/// The collective `op` on this rank's tensor `x`, through `comm`: each
/// group is the whole world (checked before), in rank order.
FailureOr<HostTensor> communicate(Operation *op, const HostTensor &x,
                                  rt::comm::Communicator &comm, std::string &error) {
  int64_t g = comm.size(), r = comm.rank();
  int64_t rank = static_cast<int64_t>(x.shape().size());
  auto norm = [&](int64_t a) { return a < 0 ? a + rank : a; };
  auto opOf = [](CollectiveReduction kind) {
    switch (kind) {
    case CollectiveReduction::max: return rt::comm::ReduceOp::kMax;
    case CollectiveReduction::min: return rt::comm::ReduceOp::kMin;
    case CollectiveReduction::avg: return rt::comm::ReduceOp::kAvg;
    default: return rt::comm::ReduceOp::kSum;
    }
  };
  auto check = [&](const rt::Status &s) {
    if (!s.ok())
      error = s.message();
    return s.ok();
  };
  size_t e = elementBytes(x);
  uint64_t count = e ? x.byteSize() / e : 0;
  if (auto o = dyn_cast<ShardOp>(op))
    return blockOf(x, norm(o.getAxis()), r, g);
  if (auto o = dyn_cast<AllReduceOp>(op)) {
    HostTensor y(x.dtype(), x.shape());
    std::memcpy(y.mutableData(), x.data(), x.byteSize());
    if (!check(comm.allReduce(y.mutableData(), count, y.dtype(), opOf(o.getKind()))))
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
    return concatOf(splitFlat(recv, x.shape(), g), norm(o.getAxis()));
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
                                  opOf(o.getKind()))))
      return failure();
    return recv;
  }
  if (auto o = dyn_cast<AllToAllOp>(op)) {
    auto [send, shape] = blocksInOrder(norm(o.getSplitAxis()));
    HostTensor recv(x.dtype(), {static_cast<int64_t>(count)});
    if (!check(comm.allToAll(send.data(), recv.mutableData(), count / g, x.dtype())))
      return failure();
    return concatOf(splitFlat(recv, shape, g), norm(o.getConcatAxis()));
  }
  error = "no host form for '" + op->getName().getStringRef().str() + "'";
  return failure();
}

} // namespace

ExitCode openMeshCommunicator(MLIRContext &context, const Mesh &mesh,
                              std::unique_ptr<rt::comm::Communicator> &comm,
                              double timeoutSeconds) {
  if (timeoutSeconds < 0)
    return fail(context, kExitBadInput, "--collective-timeout must be positive");
  rt::comm::LaunchInfo launch;
  if (rt::Status s = rt::comm::readLaunchInfo({}, &launch); !s.ok())
    return fail(context, kExitBadInput, s.message());
  if (launch.worldSize != mesh.size())
    return fail(context, kExitBadInput,
                "--mesh " + mesh.str() + " has " + std::to_string(mesh.size()) +
                    " ranks, but this run has " + std::to_string(launch.worldSize) +
                    " (" + launch.source + "): start it with mpirun -np " +
                    std::to_string(mesh.size()));
  if (rt::Status s = rt::comm::createCommunicator("auto", launch, &comm); !s.ok())
    return fail(context, kExitRuntimeFault, s.message());
  if (timeoutSeconds > 0)
    comm->setTimeout(std::chrono::milliseconds(static_cast<int64_t>(timeoutSeconds * 1000)));
  return kExitSuccess;
}

struct SpmdProgram::Impl {
  std::vector<Segment> segments;
  SmallVector<Operation *> collectives; ///< after segment i
  SmallVector<func::FuncOp> funcs;
  OwningOpRef<ModuleOp> owner;
  func::FuncOp func;
};

SpmdProgram::SpmdProgram() : impl(std::make_unique<Impl>()) {}
SpmdProgram::~SpmdProgram() = default;

ExitCode SpmdProgram::build(MLIRContext &context, func::FuncOp func, const Mesh &mesh,
                            rt::comm::Communicator &comm) {
  this->comm = &comm;
  impl->func = func;
  // Every rank must issue the same collectives (a different --mesh, model
  // or dlc on one rank fails here, naming the hashes).
  if (rt::Status s = comm.checkSchedule(collectiveScheduleHash(func),
                                        func.getSymName().str());
      !s.ok())
    return fail(context, kExitBadInput, s.message());

  // 1. Segments between the collectives.
  Block &body = func.getBody().front();
  std::vector<Segment> &segments = impl->segments;
  segments.resize(1);
  for (Operation &op : body) {
    if (op.hasTrait<mlir::OpTrait::IsTerminator>())
      break;
    if (kernelRoleOf(&op) == KernelRole::Collective) {
      auto axes = op.getAttrOfType<ArrayAttr>("mesh_axes");
      std::vector<std::string> names;
      for (Attribute a : axes)
        names.push_back(cast<StringAttr>(a).str());
      if (mesh.groupSize(names) != mesh.size())
        return fail(context, kExitBadInput,
                    "on MPI ranks, a collective runs over the whole mesh for now; '" +
                        op.getName().getStringRef().str() + "' over " +
                        std::to_string(mesh.groupSize(names)) + " of " +
                        std::to_string(mesh.size()) + " ranks needs split communicators");
      impl->collectives.push_back(&op);
      segments.emplace_back();
      continue;
    }
    segments.back().ops.push_back(&op);
  }
  llvm::DenseMap<Operation *, size_t> segmentOf;
  for (auto [i, s] : llvm::enumerate(segments))
    for (Operation *op : s.ops)
      segmentOf[op] = i;
  for (auto [i, s] : llvm::enumerate(segments)) {
    llvm::SetVector<Value> in, out;
    for (Operation *op : s.ops) {
      for (Value v : op->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (!def || !segmentOf.count(def) || segmentOf[def] != i)
          in.insert(v);
      }
      for (Value v : op->getResults())
        for (Operation *user : v.getUsers())
          if (!segmentOf.count(user) || segmentOf[user] != i)
            out.insert(v);
    }
    s.inputs.assign(in.begin(), in.end());
    s.outputs.assign(out.begin(), out.end());
  }

  // 2. Each segment compiled for the CPU.
  impl->owner = ModuleOp::create(func.getLoc());
  OpBuilder b(&context);
  b.setInsertionPointToEnd(impl->owner->getBody());
  for (auto [i, s] : llvm::enumerate(segments)) {
    if (s.ops.empty()) {
      impl->funcs.push_back(nullptr);
      continue;
    }
    SmallVector<Type> argTypes, resultTypes;
    for (Value v : s.inputs)
      argTypes.push_back(v.getType());
    for (Value v : s.outputs)
      resultTypes.push_back(v.getType());
    auto f = b.create<func::FuncOp>(func.getLoc(),
                                    func.getSymName().str() + "_segment" + std::to_string(i),
                                    b.getFunctionType(argTypes, resultTypes));
    Block *entry = f.addEntryBlock();
    IRMapping map;
    for (auto [arg, v] : llvm::zip(entry->getArguments(), s.inputs))
      map.map(v, arg);
    OpBuilder inner = OpBuilder::atBlockEnd(entry);
    for (Operation *op : s.ops)
      inner.clone(*op, map);
    SmallVector<Value> results;
    for (Value v : s.outputs)
      results.push_back(map.lookup(v));
    inner.create<func::ReturnOp>(func.getLoc(), results);
    for (unsigned a = 0; a < f.getNumArguments(); ++a)
      f.setArgAttr(a, "dlc.name", b.getStringAttr("in" + std::to_string(a)));
    for (unsigned r = 0; r < f.getNumResults(); ++r)
      f.setResultAttr(r, "dlc.name", b.getStringAttr("out" + std::to_string(r)));
    impl->funcs.push_back(f);
  }
  if (failed(runCompilePipeline(*impl->owner)))
    return kExitInternalError;
  for (auto [i, s] : llvm::enumerate(segments)) {
    if (!impl->funcs[i])
      continue;
    codegen::CpuFailure why;
    std::string message;
    auto built = codegen::buildCpuModule(impl->funcs[i], why, message);
    if (failed(built))
      return fail(context, kExitInternalError, "segment " + std::to_string(i) + ": " + message);
    std::string error;
    if (ExitCode c = LoadedModule::fromMemory(built->bytes, s.module, error))
      return fail(context, c, error);
  }
  return kExitSuccess;
}

ExitCode SpmdProgram::run(const std::vector<HostTensor> &inputs,
                          std::vector<HostTensor> &outputs, std::string &error) {
  Block &body = impl->func.getBody().front();
  llvm::DenseMap<Value, HostTensor> values;
  for (auto [arg, t] : llvm::zip(body.getArguments(), inputs))
    values[arg] = t;
  int rank = comm->rank();
  for (auto [i, s] : llvm::enumerate(impl->segments)) {
    auto started = std::chrono::steady_clock::now();
    auto seconds = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    };
    if (impl->funcs[i]) {
      std::vector<HostTensor> in, out;
      for (Value v : s.inputs)
        in.push_back(values.lookup(v));
      if (ExitCode c = s.module.run("cpu", in, out, error)) {
        error = "rank " + std::to_string(rank) + ", segment " + std::to_string(i) + ": " + error;
        return c;
      }
      for (auto [v, t] : llvm::zip(s.outputs, out))
        values[v] = std::move(t);
    }
    compute += seconds();
    started = std::chrono::steady_clock::now();
    if (i < impl->collectives.size()) {
      Operation *op = impl->collectives[i];
      // TEST-ONLY: DLC_TEST_HANG_RANK=r makes rank r stall before its first
      // collective, so that the others' deadlines are tested.
      if (const char *hang = std::getenv("DLC_TEST_HANG_RANK");
          hang && i == 0 && std::atoi(hang) == rank)
        std::this_thread::sleep_for(std::chrono::hours(1));
      auto result = communicate(op, values.lookup(op->getOperand(0)), *comm, error);
      if (failed(result)) {
        // A collective that failed (a peer gone or stalled past the
        // deadline) leaves the ranks out of step: every rank goes down
        // with exit 3 rather than wait (MPI_Abort through the comm).
        llvm::errs() << "dlc: error: " << error << "\n";
        llvm::errs().flush();
        comm->abort(kExitRuntimeFault);
      }
      values[op->getResult(0)] = std::move(*result);
      collective += seconds();
    }
  }
  outputs.clear();
  for (Value v : body.getTerminator()->getOperands())
    outputs.push_back(values.lookup(v));
  return kExitSuccess;
}

ExitCode runPartitionedOnRanks(MLIRContext &context, func::FuncOp func,
                               const Mesh &mesh, const std::vector<oracle::Tensor> &inputs,
                               std::vector<oracle::Tensor> &outputs, int &rank,
                               double timeoutSeconds) {
  std::unique_ptr<rt::comm::Communicator> comm;
  if (ExitCode c = openMeshCommunicator(context, mesh, comm, timeoutSeconds))
    return c;
  rank = comm->rank();
  SpmdProgram program;
  if (ExitCode c = program.build(context, func, mesh, *comm))
    return c;
  std::vector<HostTensor> in, out;
  for (const oracle::Tensor &t : inputs)
    in.push_back(t.toHost());
  std::string error;
  if (ExitCode c = program.run(in, out, error))
    return fail(context, c, error);
  outputs.clear();
  for (const HostTensor &t : out)
    outputs.push_back(oracle::Tensor::fromHost(t));
  return kExitSuccess;
}

} // namespace dlc
