//===- SpmdRunner.cpp - a partitioned graph on this process's rank --------===//
//
// Until the executor runs collectives inside a module, a partitioned graph
// runs on MPI ranks like this: the program is cut into segments of
// ordinary ops (SpmdProgram::Impl::schedule says where); each segment is
// compiled for the CPU as its own module (its inputs: the graph's inputs
// and earlier values it reads; its outputs: the values later parts read);
// the main thread runs the segments in order and hands each collective, as
// soon as its operand is computed, to a communication thread that carries
// it out on host tensors through runtime/comm (MPI under mpirun, a world
// of one otherwise; driver/HostCollectives.h) while the segments that do
// not need it go on.
//
//===----------------------------------------------------------------------===//

#include "driver/SpmdRunner.h"

#include "codegen/cpu/CpuBackend.h"
#include "driver/CompiledModel.h"
#include "driver/DriverSupport.h"
#include "driver/HostCollectives.h"
#include "driver/ModuleRunner.h"
#include "driver/PlanReport.h"
#include "ir/DlcDialect.h"
#include "passes/Outline.h"
#include "passes/analysis/CostModel.h"
#include "passes/partition/Partition.h"
#include "runtime/comm/CommQueue.h"
#include "runtime/comm/CommRegistry.h"
#include "runtime/comm/Launch.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>

using namespace mlir;

namespace dlc {

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

namespace {

/// A run of ordinary ops between collectives, as its own function.
struct Segment {
  SmallVector<Operation *> ops;
  SmallVector<Value> inputs, outputs; ///< values of the partitioned graph
  func::FuncOp func;
  LoadedModule module;
};

/// One call on the communication thread: a collective, or all-reduces
/// packed together.
struct Bucket {
  SmallVector<Operation *> ops;
  /// The compute position after which it is issued (-1: at the start).
  int64_t issueAfter = -1;
  /// Per run: operands and results, [member][local shard].
  std::vector<std::vector<HostTensor>> in, out;
  /// This run's ticket on the communication queue (0: not issued yet).
  uint64_t ticket = 0;
  /// Seconds the communication thread spent on it, over all runs.
  double seconds = 0;
};

/// What run() does, in order: a segment, or issuing a bucket.
struct Step {
  int64_t segment = -1, bucket = -1;
};

} // namespace

struct SpmdProgram::Impl {
  SpmdOptions options;
  rt::comm::Communicator *comm = nullptr;
  func::FuncOp func;
  OwningOpRef<ModuleOp> owner;
  std::vector<Segment> segments;
  std::vector<Bucket> buckets;
  std::vector<Step> steps;
  /// Each collective's result: its bucket and place in it.
  llvm::DenseMap<Value, std::pair<size_t, size_t>> fromBucket;
  std::unique_ptr<rt::comm::CommQueue> queue;
  double compute = 0, exposed = 0;
  size_t runs = 0;
  /// compute + exposed of the first run (warm-up: the libraries' first
  /// calls, the first touch of the arena and the state).
  double firstRun = 0;

  /// The program's mesh. A collective over part of it (one axis of a 2-D
  /// mesh) runs on this rank's group's own communicator (split from the
  /// world's at build, one per set of axes); where the backend cannot
  /// split, or a process runs several shards, it gathers every rank's
  /// operand and computes its group's result.
  Mesh mesh;
  static std::vector<std::string> axesOf(Operation *op) {
    std::vector<std::string> names;
    for (Attribute a : op->getAttrOfType<ArrayAttr>("mesh_axes"))
      names.push_back(cast<StringAttr>(a).str());
    return names;
  }
  bool spansMesh(Operation *op) const { return mesh.groupSize(axesOf(op)) == mesh.size(); }
  /// This rank's group communicator for each set of axes (by the op's
  /// mesh_axes attribute).
  llvm::DenseMap<Attribute, std::unique_ptr<rt::comm::Communicator>> groups;
  /// The communicator `op` runs on natively: the world's, its group's, or
  /// null (gathered in shard order).
  rt::comm::Communicator *nativeCommunicator(Operation *op) const {
    if (options.inShardOrder)
      return nullptr;
    if (spansMesh(op))
      return comm;
    auto it = groups.find(op->getAttr("mesh_axes"));
    return it == groups.end() ? nullptr : it->second.get();
  }
  /// Splits the groups' communicators (every rank, in program order).
  ExitCode splitGroups(MLIRContext &context, Block &body);
  /// Cuts the function into segments and buckets (see below).
  void schedule(Block &body);
  /// Runs `bucket` on the communication thread; a failure takes the job
  /// down (exit 3 on every rank) rather than leave the ranks out of step.
  void issue(Bucket &bucket);
};

// How the function is cut. Every value has a level: the arguments 0, an
// op's results the highest level of its operands, a collective's result
// one more than its operand. Ops run by level, then in program order, so
// that whatever does not wait for a collective runs before whatever does.
// A collective is issued right after the op computing its operand; the
// all-reduces of one level whose operands come one after another (a
// backward pass's gradients) share a bucket up to bucketBytes, issued
// after its last operand. Segments end at every level and after every
// bucket's issue point, and a segment first waits for the buckets whose
// results it reads (issued earlier by construction: its level is higher).
void SpmdProgram::Impl::schedule(Block &body) {
  llvm::DenseMap<Value, int64_t> level;
  llvm::DenseMap<Operation *, int64_t> opLevel;
  SmallVector<Operation *> compute, collectives;
  for (Operation &op : body.without_terminator()) {
    int64_t l = 0;
    for (Value v : op.getOperands())
      l = std::max(l, level.lookup(v));
    bool isCollective = kernelRoleOf(&op) == KernelRole::Collective;
    for (Value r : op.getResults())
      level[r] = l + (isCollective ? 1 : 0);
    opLevel[&op] = l;
    (isCollective ? collectives : compute).push_back(&op);
  }
  std::stable_sort(compute.begin(), compute.end(),
                   [&](Operation *a, Operation *b) { return opLevel[a] < opLevel[b]; });
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(compute))
    position[op] = static_cast<int64_t>(i);
  llvm::DenseMap<Operation *, int64_t> issueAfter;
  for (Operation *c : collectives) {
    Operation *def = c->getOperand(0).getDefiningOp();
    issueAfter[c] = !def ? -1 : position.count(def) ? position[def] : issueAfter[def];
  }
  std::stable_sort(collectives.begin(), collectives.end(),
                   [&](Operation *a, Operation *b) { return issueAfter[a] < issueAfter[b]; });

  // Buckets.
  auto bytesOf = [](Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    return type.getNumElements() * std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  };
  // An all-reduce of a computed value can share a call with the ones
  // before it of the same kind, dtype, axes and level.
  auto packable = [&](Operation *c) {
    Operation *def = c->getOperand(0).getDefiningOp();
    return !options.inShardOrder && isa<AllReduceOp>(c) &&
           (spansMesh(c) || options.localShards == 1) &&
           !(def && kernelRoleOf(def) == KernelRole::Collective);
  };
  auto packsWith = [&](Operation *a, Operation *b) {
    return packable(a) && packable(b) &&
           cast<AllReduceOp>(a).getKind() == cast<AllReduceOp>(b).getKind() &&
           getElementTypeOrSelf(a->getOperand(0).getType()) ==
               getElementTypeOrSelf(b->getOperand(0).getType()) &&
           a->getAttr("mesh_axes") == b->getAttr("mesh_axes") && opLevel[a] == opLevel[b];
  };
  int64_t bucketBytes = 0;
  for (Operation *c : collectives) {
    int64_t bytes = bytesOf(c->getOperand(0));
    if (!buckets.empty() && packsWith(buckets.back().ops.front(), c) &&
        bucketBytes + bytes <= options.bucketBytes) {
      buckets.back().ops.push_back(c);
      buckets.back().issueAfter = issueAfter[c];
      bucketBytes += bytes;
      continue;
    }
    buckets.emplace_back();
    buckets.back().ops.push_back(c);
    buckets.back().issueAfter = issueAfter[c];
    bucketBytes = bytes;
  }
  for (auto [b, bucket] : llvm::enumerate(buckets))
    for (auto [m, op] : llvm::enumerate(bucket.ops))
      fromBucket[op->getResult(0)] = {b, m};

  // Steps: segments cut at levels and issue points.
  size_t nextBucket = 0;
  auto issueUpTo = [&](int64_t pos) {
    while (nextBucket < buckets.size() && buckets[nextBucket].issueAfter <= pos)
      steps.push_back({-1, static_cast<int64_t>(nextBucket++)});
  };
  issueUpTo(-1);
  for (auto [i, op] : llvm::enumerate(compute)) {
    bool newLevel = i == 0 || opLevel[compute[i - 1]] != opLevel[op];
    bool afterIssue = !steps.empty() && steps.back().bucket >= 0;
    if (segments.empty() || newLevel || afterIssue) {
      segments.emplace_back();
      steps.push_back({static_cast<int64_t>(segments.size() - 1), -1});
    }
    segments.back().ops.push_back(op);
    issueUpTo(static_cast<int64_t>(i));
  }
  issueUpTo(std::numeric_limits<int64_t>::max());

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
}

ExitCode SpmdProgram::Impl::splitGroups(MLIRContext &context, Block &body) {
  if (options.inShardOrder || options.localShards != 1)
    return kExitSuccess;
  for (Operation &op : body.without_terminator()) {
    if (kernelRoleOf(&op) != KernelRole::Collective || isa<ShardOp>(op) || spansMesh(&op) ||
        groups.count(op.getAttr("mesh_axes")))
      continue;
    // Colour: the group's first rank; key: this rank's place in the group,
    // so that the group's ranks are numbered as the mesh orders them.
    std::vector<int64_t> members = mesh.group(comm->rank(), axesOf(&op));
    int key = static_cast<int>(std::find(members.begin(), members.end(), comm->rank()) -
                               members.begin());
    std::unique_ptr<rt::comm::Communicator> group;
    rt::Status s = comm->split(static_cast<int>(members.front()), key, &group);
    if (s.code() == rt::StatusCode::kUnimplemented)
      return kExitSuccess; // this backend gathers over the world instead
    if (!s.ok())
      return fail(context, kExitRuntimeFault, s.message());
    groups[op.getAttr("mesh_axes")] = std::move(group);
  }
  return kExitSuccess;
}

void SpmdProgram::Impl::issue(Bucket &bucket) {
  // TEST-ONLY: DLC_TEST_HANG_RANK=r makes rank r stall before its first
  // collective, so that the others' deadlines are tested.
  if (const char *hang = std::getenv("DLC_TEST_HANG_RANK");
      hang && &bucket == &buckets.front() && std::atoi(hang) == comm->rank())
    std::this_thread::sleep_for(std::chrono::hours(1));
  bucket.ticket = queue->submit([this, &bucket]() -> rt::Status {
    auto started = std::chrono::steady_clock::now();
    auto timed = llvm::make_scope_exit([&] {
      bucket.seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    });
    std::string error;
    bool ok = true;
    bucket.out.assign(bucket.ops.size(), {});
    rt::comm::Communicator *native = nativeCommunicator(bucket.ops.front());
    if (!native) {
      for (auto [m, op] : llvm::enumerate(bucket.ops))
        ok = ok && succeeded(
                       communicateInShardOrder(op, mesh, bucket.in[m], bucket.out[m], *comm, error));
    } else {
      std::vector<HostTensor> xs, ys;
      for (auto &in : bucket.in)
        xs.push_back(HostTensor::borrow(in[0].dtype(), in[0].shape(), in[0].data(), in[0].byteSize()));
      ok = succeeded(communicate(bucket.ops, xs, ys, *native, error));
      for (size_t m = 0; ok && m < ys.size(); ++m)
        bucket.out[m].push_back(std::move(ys[m]));
    }
    if (!ok) {
      // A collective that failed (a peer gone or stalled past the
      // deadline) leaves the ranks out of step: every rank goes down with
      // exit 3 rather than wait (MPI_Abort through the comm).
      llvm::errs() << "dlc: error: " << error << "\n";
      llvm::errs().flush();
      comm->abort(kExitRuntimeFault);
    }
    return rt::okStatus();
  });
}

SpmdProgram::SpmdProgram() : impl(std::make_unique<Impl>()) {}
SpmdProgram::~SpmdProgram() = default;

double SpmdProgram::computeSeconds() const { return impl->compute; }
double SpmdProgram::exposedSeconds() const { return impl->exposed; }
double SpmdProgram::collectiveSeconds() const {
  return impl->queue ? impl->queue->busySeconds() : 0;
}
size_t SpmdProgram::callsPerRun() const { return impl->buckets.size(); }
double SpmdProgram::secondsPerRunAfterFirst() const {
  const Impl &p = *impl;
  return p.runs > 1 ? (p.compute + p.exposed - p.firstRun) / double(p.runs - 1) : 0;
}

/// The device spec `deviceSpec` and its default link, for the timing
/// tables' predictions; false (said on `os`, the table then shows none)
/// when either cannot be loaded.
static bool loadPredictionSpecs(llvm::raw_ostream &os, llvm::StringRef table,
                                const std::string &deviceSpec, DeviceSpec &device,
                                LinkSpec &link) {
  std::string error;
  if (loadDeviceSpec(deviceSpec, device, error) &&
      loadLinkSpec(device.defaultLink.empty() ? "pcie4" : device.defaultLink, link, error))
    return true;
  os << "dlc: " << table << ": no predictions (" << error << ")\n";
  return false;
}

void SpmdProgram::printCollectiveTimes(llvm::raw_ostream &os,
                                       const std::string &deviceSpec) const {
  size_t runs = impl->runs;
  DeviceSpec device;
  LinkSpec link;
  bool predict = loadPredictionSpecs(os, "collective times", deviceSpec, device, link);
  device.shareAmong(impl->mesh.size());
  os << "call op members bytes_in measured_us predicted_us\n";
  double measuredTotal = 0, predictedTotal = 0;
  for (auto [i, bucket] : llvm::enumerate(impl->buckets)) {
    int64_t bytes = 0;
    double predicted = 0;
    for (auto [m, op] : llvm::enumerate(bucket.ops)) {
      bytes += tensorBytes(op->getOperandTypes());
      if (!predict)
        continue;
      // A bucket is one call: one hand-over however many members.
      KernelCost k = kernelCost(op, device, link);
      predicted += k.seconds - (m > 0 ? k.handOverSeconds : 0);
    }
    double measured = runs ? bucket.seconds / double(runs) : 0;
    measuredTotal += measured;
    predictedTotal += predicted;
    os << i << " " << bucket.ops.front()->getName().getStringRef() << " " << bucket.ops.size()
       << " " << bytes << " " << llvm::formatv("{0:F1}", measured * 1e6) << " "
       << (predict ? llvm::formatv("{0:F1}", predicted * 1e6).str() : std::string("-")) << "\n";
  }
  os << "total per run: measured " << llvm::formatv("{0:F3}", measuredTotal * 1e3)
     << " ms, predicted " << llvm::formatv("{0:F3}", predictedTotal * 1e3) << " ms\n";
}

void SpmdProgram::printKernelTimes(llvm::raw_ostream &os, const std::string &deviceSpec) const {
  DeviceSpec device;
  LinkSpec link;
  bool predict = loadPredictionSpecs(os, "kernel times", deviceSpec, device, link);
  double measuredTotal = 0, predictedTotal = 0;
  os << "segment kernel calls measured_us predicted_us flops gemm_flops gemm_flops_over_k "
        "slow_flops bytes rows ops\n";
  for (auto [i, segment] : llvm::enumerate(impl->segments)) {
    // The module's kernels are its function's kernel ops in order.
    SmallVector<Operation *> kernels;
    if (segment.func)
      kernels = kernelsOf(segment.func);
    for (const LoadedModule::KernelTime &t : segment.module.kernelTimes()) {
      if (!t.calls)
        continue;
      double measured = t.seconds / double(t.calls);
      std::string ops = "?";
      double predicted = -1;
      KernelWork work;
      if (Operation *op = kernelNamed(t.name, kernels)) {
        ops = fusedOpNames(op);
        work = kernelWork(op);
        if (predict)
          predicted = kernelCost(op, device, link).seconds;
      }
      measuredTotal += t.seconds;
      if (predicted >= 0)
        predictedTotal += predicted * double(t.calls);
      os << i << " " << t.name << " " << t.calls << " "
         << llvm::formatv("{0:F1}", measured * 1e6) << " "
         << (predicted >= 0 ? llvm::formatv("{0:F1}", predicted * 1e6).str() : std::string("-"))
         << " " << work.flops << " " << work.gemmFlops << " " << work.gemmFlopsOverK << " "
         << work.slowFlops << " " << work.bytes << " " << (work.reducesRows ? 1 : 0) << " " << ops
         << "\n";
    }
  }
  os << "total measured " << llvm::formatv("{0:F3}", measuredTotal * 1e3) << " ms, predicted "
     << llvm::formatv("{0:F3}", predictedTotal * 1e3) << " ms\n";
}

ExitCode SpmdProgram::build(MLIRContext &context, func::FuncOp func, const Mesh &mesh,
                            rt::comm::Communicator &comm, const SpmdOptions &options) {
  impl->comm = &comm;
  impl->func = func;
  impl->options = options;
  if (options.localShards < 1 || comm.size() * options.localShards != mesh.size())
    return fail(context, kExitInternalError, "an SPMD program of " + std::to_string(mesh.size()) +
                                                 " ranks on " + std::to_string(comm.size()) +
                                                 " processes of " +
                                                 std::to_string(options.localShards) + " shards");
  // Every rank must issue the same collectives (a different --mesh, model
  // or dlc on one rank fails here, naming the hashes).
  if (rt::Status s = comm.checkSchedule(collectiveScheduleHash(func),
                                        func.getSymName().str());
      !s.ok())
    return fail(context, kExitBadInput, s.message());

  // A collective over a group of one rank is its operand (the ops' folds):
  // a mesh axis of size 1 costs neither a call nor a segment cut.
  Block &body = func.getBody().front();
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    SmallVector<OpFoldResult, 1> folded;
    if (kernelRoleOf(&op) != KernelRole::Collective || failed(op.fold(folded)) ||
        folded.size() != 1 || !isa<Value>(folded[0]))
      continue;
    op.getResult(0).replaceAllUsesWith(cast<Value>(folded[0]));
    op.erase();
  }
  for (Operation &op : body.without_terminator()) {
    if (kernelRoleOf(&op) != KernelRole::Collective)
      continue;
    if (isa<SendOp, RecvOp>(op))
      return fail(context, kExitBadInput,
                  "'" + op.getName().getStringRef().str() +
                      "' on MPI ranks: point-to-point between pipeline stages is not run "
                      "by dlc yet");
  }
  impl->mesh = mesh;
  if (ExitCode c = impl->splitGroups(context, body))
    return c;
  impl->schedule(body);

  // Each segment compiled for the CPU.
  impl->owner = ModuleOp::create(func.getLoc());
  OpBuilder b(&context);
  b.setInsertionPointToEnd(impl->owner->getBody());
  for (auto [i, s] : llvm::enumerate(impl->segments)) {
    s.func = outlineOps(b, func.getLoc(),
                        func.getSymName().str() + "_segment" + std::to_string(i), s.inputs,
                        s.ops, s.outputs);
  }
  if (failed(runCompilePipeline(*impl->owner)))
    return kExitInternalError;
  for (auto [i, s] : llvm::enumerate(impl->segments)) {
    codegen::CpuFailure why;
    std::string message;
    auto built = codegen::buildCpuModule(s.func, why, message);
    if (options.timeKernels)
      s.module.enableKernelTiming();
    if (failed(built))
      return fail(context, kExitInternalError, "segment " + std::to_string(i) + ": " + message);
    std::string error;
    if (ExitCode c = LoadedModule::fromMemory(built->bytes, s.module, error))
      return fail(context, c, error);
  }
  impl->queue = std::make_unique<rt::comm::CommQueue>();
  return kExitSuccess;
}

ExitCode SpmdProgram::run(const std::vector<std::vector<HostTensor>> &inputs,
                          std::vector<std::vector<HostTensor>> &outputs, std::string &error) {
  Impl &p = *impl;
  if (++p.runs == 2)
    p.firstRun = p.compute + p.exposed;
  Block &body = p.func.getBody().front();
  size_t shards = static_cast<size_t>(p.options.localShards);
  std::vector<llvm::DenseMap<Value, HostTensor>> values(shards);
  for (size_t s = 0; s < shards; ++s)
    for (auto [arg, t] : llvm::zip(body.getArguments(), inputs[s]))
      values[s][arg] = HostTensor::borrow(t.dtype(), t.shape(), t.data(), t.byteSize());
  for (Bucket &bucket : p.buckets)
    bucket.ticket = 0;
  // Waits for the bucket holding `v` (if it is a collective's result) and
  // takes its results.
  auto await = [&](Value v) -> bool {
    auto found = p.fromBucket.find(v);
    if (found == p.fromBucket.end() || values[0].count(v))
      return true;
    Bucket &bucket = p.buckets[found->second.first];
    if (!bucket.ticket) {
      error = "internal error: a segment reads a collective issued after it";
      return false;
    }
    auto started = std::chrono::steady_clock::now();
    (void)p.queue->wait(bucket.ticket);
    p.exposed += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    for (auto [m, op] : llvm::enumerate(bucket.ops))
      for (size_t s = 0; s < shards; ++s)
        values[s][op->getResult(0)] = std::move(bucket.out[m][s]);
    return true;
  };
  for (const Step &step : p.steps) {
    if (step.bucket >= 0) {
      Bucket &bucket = p.buckets[step.bucket];
      bucket.in.assign(bucket.ops.size(), {});
      for (auto [m, op] : llvm::enumerate(bucket.ops)) {
        if (!await(op->getOperand(0)))
          return kExitInternalError;
        for (size_t s = 0; s < shards; ++s) {
          const HostTensor &t = values[s].find(op->getOperand(0))->second;
          bucket.in[m].push_back(HostTensor::borrow(t.dtype(), t.shape(), t.data(), t.byteSize()));
        }
      }
      p.issue(bucket);
      continue;
    }
    Segment &segment = p.segments[step.segment];
    for (Value v : segment.inputs)
      if (!await(v))
        return kExitInternalError;
    auto started = std::chrono::steady_clock::now();
    for (size_t s = 0; s < shards; ++s) {
      std::vector<HostTensor> in, out;
      for (Value v : segment.inputs) {
        const HostTensor &t = values[s].find(v)->second;
        in.push_back(HostTensor::borrow(t.dtype(), t.shape(), t.data(), t.byteSize()));
      }
      if (ExitCode c = segment.module.run("cpu", in, out, error)) {
        error = "rank " + std::to_string(p.comm->rank()) + ", segment " +
                std::to_string(step.segment) + ": " + error;
        return c;
      }
      for (auto [v, t] : llvm::zip(segment.outputs, out))
        values[s][v] = std::move(t);
    }
    p.compute += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  outputs.assign(shards, {});
  for (Value v : body.getTerminator()->getOperands())
    if (!await(v))
      return kExitInternalError;
  // Every bucket ends before the run does (its operands are this run's).
  (void)p.queue->drain();
  // An owned value is moved out where the terminator returns it for the
  // last time (the new parameters and moments: copying them was a tenth of
  // a small model's step).
  auto results = body.getTerminator()->getOperands();
  for (size_t s = 0; s < shards; ++s) {
    outputs[s].reserve(results.size());
    for (auto [i, v] : llvm::enumerate(results)) {
      HostTensor &t = values[s].find(v)->second;
      if (t.isBorrowed()) {
        HostTensor copy(t.dtype(), t.shape());
        std::memcpy(copy.mutableData(), t.data(), t.byteSize());
        outputs[s].push_back(std::move(copy));
      } else if (llvm::is_contained(results.drop_front(i + 1), v)) {
        outputs[s].push_back(t);
      } else {
        outputs[s].push_back(std::move(t));
      }
    }
  }
  return kExitSuccess;
}

ExitCode SpmdProgram::gatherShards(const std::vector<HostTensor> &blocks,
                                   std::vector<HostTensor> &all, std::string &error) {
  bool ok = true;
  uint64_t ticket = impl->queue->submit([&] {
    ok = succeeded(dlc::gatherShards(blocks, all, *impl->comm, error));
    return rt::okStatus();
  });
  (void)impl->queue->wait(ticket);
  return ok ? kExitSuccess : kExitRuntimeFault;
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
  std::vector<std::vector<HostTensor>> in(1), out;
  for (const oracle::Tensor &t : inputs)
    in[0].push_back(t.toHost());
  std::string error;
  if (ExitCode c = program.run(in, out, error))
    return fail(context, c, error);
  outputs.clear();
  for (const HostTensor &t : out[0])
    outputs.push_back(oracle::Tensor::fromHost(t));
  return kExitSuccess;
}

} // namespace dlc
