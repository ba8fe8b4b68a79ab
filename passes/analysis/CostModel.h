//===- CostModel.h - Predicted time of a planned program on a device -*- C++ -*-===//
//
// What `dlc plan --device-spec` predicts before anything runs (issue 13):
//
//  - a kernel by roofline: max(FLOPs / peak FLOP/s, bytes / memory
//    bandwidth) plus the launch overhead, with FLOPs and bytes from the ops'
//    CostOpInterface (a fusion: its ops' FLOPs, its operands' and results'
//    bytes);
//  - a collective by α-β with NCCL's ring algorithms over its group of n:
//    all-reduce 2(n-1) steps moving 2(n-1)/n of the tensor, all-gather and
//    reduce-scatter (n-1) steps moving (n-1)/n of the whole tensor,
//    all-to-all (n-1)/n, broadcast the tensor;
//  - the program as the executor runs it: kernels one after another on the
//    compute stream, collectives in order on the communication stream from
//    when their operand is computed, a kernel waiting for the collectives
//    whose results it reads (on CPU ranks, whose communication thread
//    shares the cores with the kernels, no less than both one after
//    another). The difference between the step time and the compute time
//    is the exposed communication.
//
// Device and link specs are data files (devices/*.json in the source tree,
// or a file a user gives).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_ANALYSIS_COSTMODEL_H
#define DLC_PASSES_ANALYSIS_COSTMODEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <string>

namespace dlc {

struct DeviceSpec {
  std::string name;
  /// Peak FLOP/s by precision ("f32", "tf32", "bf16", "f16").
  std::map<std::string, double> peakFlops;
  double memoryBandwidth = 0; ///< bytes/s
  double memoryBytes = 0;
  /// A second roofline level (CPUs): a kernel whose operands and results
  /// fit in `cacheBytes` moves them at `cacheBandwidth` (0: no such level).
  double cacheBytes = 0, cacheBandwidth = 0;
  /// A third level (a CPU's last-level cache, which the host's cores
  /// share): a kernel beyond `cacheBytes` whose bytes, times the ranks of
  /// the host, fit in `sharedCacheBytes` moves them at
  /// `sharedCacheBandwidth`, each rank at its own, not at the memory's
  /// shared rate (0: no such level).
  double sharedCacheBytes = 0, sharedCacheBandwidth = 0;
  /// FLOP/s of the transcendental ops (exp, tanh, GELU, softmax, log, ...:
  /// many cycles an element on a CPU, far from the FMA peak); 0: the
  /// precision's peak, as for the rest.
  double transcendentalFlops = 0;
  /// Bytes/s of a kernel that reduces rows or columns (reductions, norms,
  /// softmax, losses: loops a CPU does not stream); 0: the memory's.
  double rowBandwidth = 0;
  double kernelLaunchSeconds = 0;
  /// K at which a GEMM reaches half its peak (KernelWork; 0: every GEMM at
  /// the peak).
  double gemmKHalf = 0;
  /// The same on M, the rows of one product (a small batch, a pipeline's
  /// micro-batch): packing B is paid once per call however few rows use it.
  double gemmMHalf = 0;
  std::string defaultLink;
  /// CPU ranks share a host: its cores (0: a device per rank, as GPUs).
  int64_t cores = 0;
  /// What one rank's kernels gain from running on every core's thread
  /// instead of one, in single-thread rates (cores when 0; measured on a
  /// lone GEMM by measure_cpu.py, on a train step's kernels by
  /// calibrate.py, host_path.parallel_capacity). Between one thread and
  /// all, the gain is interpolated linearly.
  double parallelCapacity = 0;
  /// The host path's kernels' single-thread time against their roofline
  /// (calibrate.py: every kernel of one rank's steps timed on one thread,
  /// host_path.kernel_efficiency; 1 when not measured). Kept apart from
  /// parallelCapacity, the gain of a rank's threads over its one, so that
  /// ranks of one thread are corrected as much as ranks of two.
  double kernelEfficiency = 1;
  /// The factor a kernel's single-thread time is multiplied by, for the
  /// ranks set by shareAmong: below 1 where a rank's threads run faster
  /// than one, above where ranks outnumber what the host sustains.
  double timeShare = 1;
  /// The same for the host code around the kernels (module runs, MPI's
  /// copies, the hand-overs): ranks beyond the cores wait for a time slice.
  double hostShare = 1;
  /// The factor of a kernel's time in memory (beyond the cache): ranks
  /// of one host share its memory bandwidth, `hostMemoryBandwidth` (0:
  /// memoryBandwidth, what one thread reaches; measure_cpu.py: a copy on
  /// every core, here no faster than on one).
  double memoryShare = 1;
  double hostMemoryBandwidth = 0;
  /// CPU ranks run a partitioned step on dlc's host path (driver/
  /// SpmdRunner.h): the kernels between two collectives as one compiled
  /// segment, each collective handed to a communication thread. What a
  /// segment costs beyond its kernels, and a collective beyond its ring
  /// alpha-beta (hand-over, wake-up, host copies): fitted to measurements by
  /// bench/costmodel/calibrate.py (0 for GPUs). A collective over part of
  /// a mesh runs on its group's own communicator (MPI_Comm_split).
  bool hostPath = false;
  double segmentSeconds = 0, collectiveOverheadSeconds = 0;
  /// What a call between ranks costs, for each peer in its group, where
  /// the host's ranks outnumber its cores (scaled by the excess: share -
  /// 1): a peer that is descheduled arrives a time slice late, where on a
  /// host with a core for each rank the waiting rank's polls meet it at
  /// once; the more peers, the likelier one is out (fitted).
  double descheduledPeerSeconds = 0;
  /// A collective call's hand-over on the host path at the host share
  /// `share` over a group of `group` ranks (0 off the host path): what a
  /// call costs beyond its ring, and what the members of a bucket after
  /// the first do not pay.
  double handOverSecondsAt(double share, int64_t group) const {
    return hostPath ? collectiveOverheadSeconds * share + descheduledSecondsAt(share, group) : 0;
  }
  /// What a call or message between ranks waits for descheduled peers at
  /// the host share `share` in a group of `group` ranks.
  double descheduledSecondsAt(double share, int64_t group) const {
    return hostPath ? descheduledPeerSeconds * std::max(0.0, share - 1.0) *
                          double(std::max<int64_t>(0, group - 1))
                    : 0;
  }
  /// What a segment costs a byte of its outputs (host tensors allocated,
  /// filled and handed over every run).
  double segmentByteSeconds = 0;
  /// What a pipeline stage's part (a micro-batch's forward or backward, the
  /// update: a module run of its own, driver/PipelineProgram.h) costs
  /// beyond its kernels and its outputs' bytes (fitted).
  double partSeconds = 0;
  /// What a pipeline's stage-to-stage message costs beyond the link's
  /// alpha-beta (fitted; on CPU ranks the round trip of 1F1B is tens of
  /// microseconds where MPI's microbenchmark measures one).
  double transferOverheadSeconds = 0;
  /// The mesh's ranks.
  int64_t meshRanks = 1;
  /// The kernel time factor when `busy` ranks of one host compute at once,
  /// each on the runtime's default threads t (runtime/base/HostCores.h: the
  /// cores over the host's ranks, `hostRanks`, at least one; all of them
  /// busy when 0): a rank runs at its threads' gain, at most the cores it
  /// has, cores / busy, in single-thread rates (at kernelEfficiency). A
  /// pipeline's stage that computes alone in a bubble still has only its
  /// t threads.
  double shareFor(int64_t busy, int64_t hostRanks = 0) const {
    if (cores <= 0 || busy < 1)
      return 1.0;
    double threads = double(std::max<int64_t>(1, cores / std::max(busy, hostRanks)));
    double capacity = parallelCapacity > 0 ? parallelCapacity : double(cores);
    double gain = cores > 1 ? 1.0 + (capacity - 1.0) * (threads - 1.0) / double(cores - 1) : 1.0;
    return kernelEfficiency / std::min(gain, double(cores) / double(busy));
  }
  /// The host code's factor when `busy` ranks of one host run at once:
  /// beyond its cores they wait for time slices.
  double hostShareFor(int64_t busy) const {
    return cores > 0 && busy > cores ? double(busy) / double(cores) : 1.0;
  }
  /// Sets timeShare, memoryShare and hostShare for `ranks` ranks of a mesh
  /// that compute at once on one host (a device per rank: no change).
  void shareAmong(int64_t ranks) {
    meshRanks = ranks;
    timeShare = shareFor(ranks);
    memoryShare = memoryShareFor(ranks);
    hostShare = hostShareFor(ranks);
  }
  /// The factor of a kernel's time in memory when `busy` ranks of one host
  /// stream at once.
  double memoryShareFor(int64_t busy) const {
    double host = hostMemoryBandwidth > 0 ? hostMemoryBandwidth : memoryBandwidth;
    return cores > 0 && host > 0 ? std::max(1.0, double(busy) * memoryBandwidth / host) : 1.0;
  }
  /// This device as `busy` ranks of one host see it while `hostRanks`
  /// (at least busy) share it: each rank's threads are cores / hostRanks
  /// however many compute, and the busy ones share the memory's bandwidth.
  DeviceSpec sharedBy(int64_t busy, int64_t hostRanks) const {
    DeviceSpec shared = *this;
    shared.timeShare = shareFor(busy, hostRanks);
    shared.memoryShare = memoryShareFor(busy);
    return shared;
  }
};

struct LinkSpec {
  std::string name;
  double bandwidth = 0; ///< bytes/s per direction
  double latency = 0;   ///< seconds per ring step
  /// Host links (CPU ranks' shared memory): a call that sends more than
  /// `cacheBytes` streams through memory at `beyondCacheBandwidth`
  /// (0: one bandwidth for every size).
  double cacheBytes = 0, beyondCacheBandwidth = 0;
  /// Seconds to send `bytes` in one call, latency aside.
  double transferSeconds(double bytes) const {
    bool beyond = cacheBytes > 0 && beyondCacheBandwidth > 0 && bytes > cacheBytes;
    return bytes / (beyond ? beyondCacheBandwidth : bandwidth);
  }
};

/// One rank's part of `collective` on a ring of its group (NCCL's and
/// MPI's large-message algorithms): the steps, each one link latency, and
/// the bytes it sends. An all-reduce takes 2(g-1) steps moving 2(g-1)/g
/// of the tensor; an all-gather and a reduce-scatter g-1 moving (g-1)/g of
/// the whole; an all-to-all (g-1)/g of it; a broadcast, send or recv the
/// tensor in one; a shard nothing.
struct RingCost {
  int64_t steps = 0, bytes = 0;
  int64_t group = 1; ///< the ranks of the call's group
};
RingCost ringCost(mlir::Operation *collective);

/// Whether `func` runs a collective between ranks (a group of more than one).
bool communicates(mlir::func::FuncOp func);

/// `nameOrPath`: a file (it contains '/' or ends in .json), else
/// `devices/<name>.json` of the source tree. Sets `error` on failure.
bool loadDeviceSpec(const std::string &nameOrPath, DeviceSpec &out, std::string &error);
/// A link by name from devices/links.json.
bool loadLinkSpec(const std::string &name, LinkSpec &out, std::string &error);

struct ProgramCost {
  double computeSeconds = 0;       ///< the kernels, one after another
  double communicationSeconds = 0; ///< the collectives, one after another
  double stepSeconds = 0;          ///< both streams as the executor runs them
  double exposedSeconds() const { return stepSeconds - computeSeconds; }
  int64_t kernels = 0, collectives = 0;
  /// Runs of kernels between collectives (DeviceSpec::segmentSeconds), and
  /// the calls between ranks (groups of more than one; on the host path
  /// all-reduces packed into buckets count once).
  int64_t segments = 0, rankCollectives = 0;
  /// Bytes the segments give out (values read outside the segment that
  /// computes them; DeviceSpec::segmentByteSeconds).
  double segmentBytes = 0;
  double flops = 0;
  /// Kernels whose roofline time is their FLOPs (the rest: their bytes).
  int64_t computeBoundKernels = 0;
};

/// What a kernel does, as the roofline weighs it: its FLOPs (of them, the
/// GEMMs' and the transcendental ops'), the bytes of its operands and
/// results, whether it reduces rows or columns.
struct KernelWork {
  double flops = 0;
  /// Matrix products' FLOPs, and the sum of each one's FLOPs over its
  /// contraction length K: a GEMM of short K runs below the peak
  /// (packing and C's loads and stores are paid once per K), which a
  /// device's gemm_k_half models as time = (flops + k_half * flops / K) /
  /// peak (Hockney's n-half, on K); likewise on the rows M of each product
  /// (gemm_m_half).
  double gemmFlops = 0, gemmFlopsOverK = 0, gemmFlopsOverM = 0;
  double slowFlops = 0; ///< transcendental
  double bytes = 0;
  bool reducesRows = false;
};
KernelWork kernelWork(mlir::Operation *kernel);

struct KernelCost {
  double seconds = 0, flops = 0;
  /// The share of `seconds` its GEMMs take at the peak (their products
  /// alone, as if nothing else the kernel does overlapped them).
  double gemmSeconds = 0;
  bool collective = false, computeBound = false;
  /// A collective's share of `seconds` that is per call, not per byte
  /// (DeviceSpec::handOverSecondsAt): what the members of a bucket after
  /// the first, or a call from a pipeline stage's own thread, do not pay.
  double handOverSeconds = 0;
};
/// One top-level op of a planned function alone: a collective's time on the
/// link (ring alpha-beta), a compute kernel's roofline time plus the launch
/// overhead; zero seconds for anything else (parameters, the return).
/// The peak is that of the kernel's product precision (bf16/f16 operands,
/// or TF32 rounding allowed by --precision), else `precision`'s.
KernelCost kernelCost(mlir::Operation *op, const DeviceSpec &device, const LinkSpec &link,
                      const std::string &precision = "f32");

/// The predicted cost of a planned (fused) function at `precision`.
ProgramCost estimateCost(mlir::func::FuncOp func, const DeviceSpec &device,
                         const LinkSpec &link, const std::string &precision = "f32");

} // namespace dlc

#endif // DLC_PASSES_ANALYSIS_COSTMODEL_H
