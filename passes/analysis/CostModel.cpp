//===- CostModel.cpp - Predicted time of a planned program on a device ----===//

#include "passes/analysis/CostModel.h"

#include "ir/DlcDialect.h"
#include "passes/analysis/Liveness.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <vector>

using namespace mlir;

namespace dlc {

namespace {

/// The folder of device descriptions: share/dlc/devices beside an installed
/// dlc (bin/../share/dlc/devices, cmake/DlcInstall.cmake), else the source
/// tree's devices/ that the build was configured from.
const std::string &specDir() {
  static const std::string dir = [] {
    std::string exe = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
    llvm::SmallString<256> installed(llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
    llvm::sys::path::append(installed, "share", "dlc", "devices");
    if (!exe.empty() && llvm::sys::fs::is_directory(installed))
      return std::string(installed);
    return std::string(DLC_DEVICE_SPEC_DIR);
  }();
  return dir;
}

std::string specPath(const std::string &name) { return specDir() + "/" + name + ".json"; }

bool readJson(const std::string &path, llvm::json::Value &out, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = "cannot read '" + path + "': " + buffer.getError().message();
    return false;
  }
  auto parsed = llvm::json::parse((*buffer)->getBuffer());
  if (!parsed) {
    error = path + ": " + llvm::toString(parsed.takeError());
    return false;
  }
  out = std::move(*parsed);
  return true;
}

/// Ops whose elements take a transcendental function (DeviceSpec::
/// transcendentalFlops), their gradients' included.
bool isTranscendental(Operation *op) {
  return isa<ExpOp, LogOp, TanhOp, GeluOp, SigmoidOp, SiluOp, SoftplusOp, SoftmaxOp,
             LogSoftmaxOp, CrossEntropyOp, ErfOp, PowOp, SinOp, CosOp, AtanOp>(op);
}

double collectiveSeconds(Operation *c, const LinkSpec &link) {
  RingCost ring = ringCost(c);
  return static_cast<double>(ring.steps) * link.latency +
         link.transferSeconds(static_cast<double>(ring.bytes));
}

} // namespace

RingCost ringCost(Operation *c) {
  auto groupAttr = c->getAttrOfType<IntegerAttr>("group_size");
  int64_t g = groupAttr ? groupAttr.getInt() : 1;
  if (g <= 1)
    return {};
  int64_t in = tensorBytes(c->getOperandTypes()), out = tensorBytes(c->getResultTypes());
  if (isa<AllReduceOp>(c))
    return {2 * (g - 1), 2 * (g - 1) * in / g, g};
  if (isa<AllGatherOp>(c))
    return {g - 1, (g - 1) * out / g, g};
  if (isa<ReduceScatterOp, AllToAllOp>(c))
    return {g - 1, (g - 1) * in / g, g};
  if (isa<BroadcastOp, SendOp, RecvOp>(c))
    return {1, std::max(in, out), g};
  return {}; // shard: a local copy
}

bool communicates(func::FuncOp func) {
  for (Operation &op : func.getBody().front())
    if (Operation *c = collectiveInKernel(&op); c && ringCost(c).steps > 0)
      return true;
  return false;
}

bool loadDeviceSpec(const std::string &nameOrPath, DeviceSpec &out, std::string &error) {
  bool isFile = nameOrPath.find('/') != std::string::npos ||
                llvm::StringRef(nameOrPath).ends_with(".json");
  std::string path = isFile ? nameOrPath : specPath(nameOrPath);
  llvm::json::Value value(nullptr);
  if (!readJson(path, value, error)) {
    if (!isFile)
      error = "no device spec '" + nameOrPath + "' (" + error +
              "): give h100, h200, a100, v100, cpu or a .json file";
    return false;
  }
  const llvm::json::Object *o = value.getAsObject();
  const llvm::json::Object *peaks = o ? o->getObject("peak_flops") : nullptr;
  auto number = [&](llvm::StringRef key) { return o->getNumber(key).value_or(0); };
  if (!o || !peaks || number("memory_bandwidth") <= 0) {
    error = path + ": a device spec needs peak_flops {precision: FLOP/s} and memory_bandwidth";
    return false;
  }
  out.name = o->getString("name").value_or(nameOrPath).str();
  for (const auto &[key, v] : *peaks)
    if (auto n = v.getAsNumber())
      out.peakFlops[key.str()] = *n;
  out.memoryBandwidth = number("memory_bandwidth");
  out.memoryBytes = number("memory_bytes");
  out.kernelLaunchSeconds = number("kernel_launch_seconds");
  out.gemmKHalf = number("gemm_k_half");
  out.gemmMHalf = number("gemm_m_half");
  out.defaultLink = o->getString("default_link").value_or("").str();
  out.cores = static_cast<int64_t>(number("cores"));
  out.parallelCapacity = number("parallel_capacity");
  out.hostMemoryBandwidth = number("host_memory_bandwidth");
  if (const llvm::json::Object *host = o->getObject("host_path")) {
    out.hostPath = true;
    out.segmentSeconds = host->getNumber("segment_seconds").value_or(0);
    out.collectiveOverheadSeconds = host->getNumber("collective_seconds").value_or(0);
    out.descheduledPeerSeconds =
        host->getNumber("oversubscribed_collective_seconds").value_or(0);
    out.segmentByteSeconds = host->getNumber("segment_byte_seconds").value_or(0);
    out.transferOverheadSeconds = host->getNumber("transfer_seconds").value_or(0);
    out.partSeconds = host->getNumber("part_seconds").value_or(0);
    // What the host path's kernels gain from a rank's threads, as fitted
    // (calibrate.py), over the lone GEMM's measurement.
    if (auto capacity = host->getNumber("parallel_capacity"))
      out.parallelCapacity = *capacity;
    out.kernelEfficiency = host->getNumber("kernel_efficiency").value_or(1.0);
  }
  out.cacheBytes = number("cache_bytes");
  out.transcendentalFlops = number("transcendental_flops");
  out.rowBandwidth = number("row_bandwidth");
  out.cacheBandwidth = number("cache_bandwidth");
  out.sharedCacheBytes = number("shared_cache_bytes");
  out.sharedCacheBandwidth = number("shared_cache_bandwidth");
  return true;
}

bool loadLinkSpec(const std::string &name, LinkSpec &out, std::string &error) {
  llvm::json::Value value(nullptr);
  if (!readJson(specPath("links"), value, error))
    return false;
  const llvm::json::Object *o = value.getAsObject();
  const llvm::json::Object *link = o ? o->getObject(name) : nullptr;
  if (!link) {
    std::vector<std::string> names;
    for (const auto &[key, v] : *o)
      if (v.getAsObject())
        names.push_back(key.str());
    std::sort(names.begin(), names.end());
    error = "no link '" + name + "' (devices/links.json has";
    for (const std::string &n : names)
      error += " " + n;
    error += ")";
    return false;
  }
  out.name = name;
  out.bandwidth = link->getNumber("bandwidth").value_or(0);
  out.latency = link->getNumber("latency").value_or(0);
  out.cacheBytes = link->getNumber("cache_bytes").value_or(0);
  out.beyondCacheBandwidth = link->getNumber("beyond_cache_bandwidth").value_or(0);
  return true;
}

/// The precision a kernel's products run at: its contraction's when that
/// is bf16, f16 or TF32 (--precision, dlc-precision), else `fallback`. The
/// device's peak for it applies.
static std::string kernelPrecision(Operation *op, const std::string &fallback) {
  std::string found = fallback;
  op->walk([&](Operation *inner) {
    StringRef precision = productPrecision(inner);
    if (!precision.empty() && precision != "f32")
      found = precision.str();
  });
  return found;
}

KernelCost kernelCost(Operation *op, const DeviceSpec &device, const LinkSpec &link,
                      const std::string &fallbackPrecision) {
  std::string precision = kernelPrecision(op, fallbackPrecision);
  KernelCost cost;
  if (Operation *c = collectiveInKernel(op)) {
    cost.collective = true;
    RingCost ring = ringCost(c);
    if (ring.steps == 0)
      return cost; // a shard: a slice on this rank
    cost.seconds = double(ring.steps) * link.latency + link.transferSeconds(double(ring.bytes));
    // MPI's shared-memory copies and sums are the ranks' own work (the
    // link measured between two ranks of the host): ranks beyond its
    // cores wait for their time slices. So does the call's hand-over to
    // the communication thread and back (wake-ups, the peers' arrival): a
    // peer that is descheduled arrives a time slice late.
    if (device.hostPath) {
      cost.handOverSeconds = device.handOverSecondsAt(device.hostShare, ring.group);
      cost.seconds = cost.seconds * device.hostShare + cost.handOverSeconds;
    }
    return cost;
  }
  if (!isKernel(op))
    return cost;
  double peak = device.peakFlops.count(precision) ? device.peakFlops.at(precision)
                                                  : device.peakFlops.at("f32");
  KernelWork work = kernelWork(op);
  cost.flops = work.flops;
  bool cached = device.cacheBandwidth > 0 && work.bytes <= device.cacheBytes;
  double bandwidth = cached ? device.cacheBandwidth : device.memoryBandwidth;
  if (!cached && device.sharedCacheBandwidth > 0 &&
      work.bytes * double(device.meshRanks) <= device.sharedCacheBytes) {
    cached = true;
    bandwidth = device.sharedCacheBandwidth;
  }
  if (work.reducesRows && device.rowBandwidth > 0)
    bandwidth = std::min(bandwidth, device.rowBandwidth);
  // Transcendental ops at their own rate, GEMMs at the peak less their
  // short-K and few-rows losses, the rest at the peak.
  double slowPeak = device.transcendentalFlops > 0 ? device.transcendentalFlops : peak;
  double gemmLoss = device.gemmKHalf * work.gemmFlopsOverK + device.gemmMHalf * work.gemmFlopsOverM;
  double computeTime = (work.flops - work.slowFlops + gemmLoss) / peak + work.slowFlops / slowPeak,
         memoryTime = work.bytes / bandwidth;
  cost.seconds = std::max(computeTime * device.timeShare,
                          memoryTime * (cached ? device.timeShare : device.memoryShare)) +
                 device.kernelLaunchSeconds * device.timeShare;
  cost.computeBound = computeTime >= memoryTime;
  cost.gemmSeconds =
      std::min(cost.seconds, (work.gemmFlops + gemmLoss) / peak * device.timeShare);
  return cost;
}

KernelWork kernelWork(Operation *op) {
  KernelWork work;
  op->walk([&](CostOpInterface inner) {
    if (inner.getOperation() == op && isa<FusionOp>(op))
      return;
    double flops = static_cast<double>(inner.getFlops());
    work.flops += flops;
    if (isTranscendental(inner.getOperation()))
      work.slowFlops += flops;
    if (auto mm = dyn_cast<MatmulOp>(inner.getOperation())) {
      auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
      int64_t k = lhs.getDimSize(lhs.getRank() - (mm.getTransposeA() ? 2 : 1));
      work.gemmFlops += flops;
      if (k > 0)
        work.gemmFlopsOverK += flops / double(k);
      auto result = cast<RankedTensorType>(mm->getResult(0).getType());
      int64_t m = result.getRank() >= 2 ? result.getDimSize(result.getRank() - 2) : 1;
      if (m > 0)
        work.gemmFlopsOverM += flops / double(m);
    }
    KernelRole role = kernelRoleOf(inner.getOperation());
    work.reducesRows |= role == KernelRole::Row || role == KernelRole::Loss;
  });
  work.bytes = static_cast<double>(tensorBytes(op->getOperandTypes()) +
                                   tensorBytes(op->getResultTypes()));
  return work;
}

ProgramCost estimateCost(func::FuncOp func, const DeviceSpec &device, const LinkSpec &link,
                         const std::string &precision) {
  ProgramCost cost;
  // When each value is ready (seconds from the start of the step).
  llvm::DenseMap<Value, double> ready;
  double computeClock = 0, commClock = 0;
  auto readyAt = [&](Operation *op) {
    double t = 0;
    for (Value v : op->getOperands())
      t = std::max(t, ready.lookup(v));
    return t;
  };
  // A segment starts with the first kernel and after each collective; the
  // values read outside it are its bytes (host tensors allocated and filled
  // every run; its inputs are borrowed).
  Block &body = func.getBody().front();
  llvm::DenseMap<Operation *, int64_t> segmentOf;
  SmallVector<Operation *> kernels; // in program order
  std::vector<double> bytesOf;      // per segment
  bool open = false;
  for (Operation &op : body.without_terminator()) {
    if (collectiveInKernel(&op)) {
      open = false;
    } else if (isKernel(&op)) {
      if (!open)
        bytesOf.push_back(0);
      open = true;
      segmentOf[&op] = static_cast<int64_t>(bytesOf.size()) - 1;
      kernels.push_back(&op);
    }
  }
  for (Operation *op : kernels) {
    int64_t s = segmentOf[op];
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *user) {
            Operation *top = body.findAncestorOpInBlock(*user);
            auto it = top ? segmentOf.find(top) : segmentOf.end();
            return it == segmentOf.end() || it->second != s;
          }))
        bytesOf[s] += double(tensorBytes(r.getType()));
  }
  int64_t lastSegment = -1;
  // The host path packs all-reduces over the same axes into buckets of up
  // to 25 MiB (driver/SpmdRunner.h, DDP's buckets): one call, one
  // hand-over each.
  constexpr double kBucketBytes = 25 << 20;
  // Levels as the host path cuts them: a collective's result one above its
  // operand's; only all-reduces of one level pack together.
  llvm::DenseMap<std::pair<Attribute, int64_t>, double> openBucket;
  llvm::DenseMap<Value, int64_t> level;
  for (Operation &op : body.without_terminator()) {
    int64_t opLevel = 0;
    for (Value v : op.getOperands())
      opLevel = std::max(opLevel, level.lookup(v));
    for (Value r : op.getResults())
      level[r] = opLevel + (collectiveInKernel(&op) ? 1 : 0);
    KernelCost k = kernelCost(&op, device, link, precision);
    if (k.collective) {
      Operation *c = collectiveInKernel(&op);
      bool betweenRanks = ringCost(c).steps > 0;
      if (betweenRanks && device.hostPath && isa<AllReduceOp>(c)) {
        Operation *def = c->getOperand(0).getDefiningOp();
        double bytes = double(tensorBytes(c->getOperand(0).getType()));
        auto key = std::make_pair(c->getAttr("mesh_axes"), opLevel);
        auto it = openBucket.find(key);
        bool packed = it != openBucket.end() && it->second + bytes <= kBucketBytes &&
                      !(def && collectiveInKernel(def));
        if (packed) {
          it->second += bytes;
          k.seconds -= k.handOverSeconds;
          betweenRanks = false; // no call of its own
        } else {
          openBucket[key] = bytes;
        }
      }
      double start = std::max(commClock, readyAt(&op));
      commClock = start + k.seconds;
      cost.communicationSeconds += k.seconds;
      ++cost.collectives;
      if (betweenRanks)
        ++cost.rankCollectives;
      for (Value r : op.getResults())
        ready[r] = commClock;
      continue;
    }
    if (!isKernel(&op))
      continue;
    if (int64_t segment = segmentOf.lookup(&op); segment != lastSegment) {
      lastSegment = segment;
      ++cost.segments;
      double bytes = bytesOf[segment];
      cost.segmentBytes += bytes;
      double overhead = device.segmentSeconds * device.hostShare +
                        device.segmentByteSeconds * bytes * device.memoryShare;
      k.seconds += overhead;
    }
    cost.computeBoundKernels += k.computeBound ? 1 : 0;
    cost.flops += k.flops;
    cost.computeSeconds += k.seconds;
    ++cost.kernels;
    double start = std::max(computeClock, readyAt(&op));
    computeClock = start + k.seconds;
    for (Value r : op.getResults())
      ready[r] = computeClock;
  }
  cost.stepSeconds = std::max(computeClock, commClock);
  // On the host path the communication thread's work (MPI's shared-memory
  // copies and sums, the results' host copies) is CPU work on the cores
  // the rank's kernels already fill (runtime/base/HostCores.h gives them
  // every core the rank has): what it overlaps, the kernels lose, so the
  // step is at least both one after another.
  if (device.hostPath)
    cost.stepSeconds =
        std::max(cost.stepSeconds, cost.computeSeconds + cost.communicationSeconds);
  return cost;
}

} // namespace dlc
