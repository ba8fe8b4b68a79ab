//===- Tile.cpp - per-kernel CUDA schedules from a small cost model -------===//
//
// Gives every kernel of a planned graph (a dlc.fusion region or a lone op)
// a `#dlc.schedule` attribute for one CUDA architecture: the strategy the
// CUDA code generator uses, its tile shapes, threads per block, elements
// per thread, shared-memory staging and grid. Expects fused kernels with
// static shapes; runs on any graph (kernels are the top-level ops but
// parameters, constants and the return). The code generator reads the
// schedule and decides nothing itself.
//
//===----------------------------------------------------------------------===//

#include "passes/LibraryGemm.h"
#include "passes/Passes.h"
#include "passes/TileRules.h"
#include "passes/analysis/Liveness.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

namespace dlc {
#define GEN_PASS_DEF_DLCTILE
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
static int64_t elementsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

/// The ops a kernel computes: the body of a fusion, or the op itself.
static SmallVector<Operation *> bodyOf(Operation *kernel) {
  SmallVector<Operation *> ops;
  if (auto fusion = dyn_cast<FusionOp>(kernel)) {
    for (Operation &op : fusion.getBody().front().without_terminator())
      ops.push_back(&op);
  } else {
    ops.push_back(kernel);
  }
  return ops;
}

/// The values a kernel yields (inside the region).
static SmallVector<Value> yieldedOf(Operation *kernel) {
  if (auto fusion = dyn_cast<FusionOp>(kernel)) {
    Operation *yield = fusion.getBody().front().getTerminator();
    return {yield->getOperands().begin(), yield->getOperands().end()};
  }
  return {kernel->getResults().begin(), kernel->getResults().end()};
}

/// Ops that are not elemental (computed whole, not per element).
static bool isStageOp(Operation *op) {
  return isStageRole(kernelRoleOf(op));
}

/// A contraction the GEMM templates compute: a matmul, or a convolution
/// over NCHW (channels-last ones are the CPU's).
static bool isGemmContraction(Operation *op) {
  if (auto conv = dyn_cast<Conv2dOp>(op))
    return !conv.getChannelsLast();
  return isa<MatmulOp>(op);
}

bool dlc::elementwiseEpilogue(Operation *kernel, Operation *stage, bool layoutTail) {
  SmallVector<Operation *> body = bodyOf(kernel);
  ArrayRef<int64_t> stageShape = shapeOf(stage->getResult(0));
  // Values computed from the stage's result, and which of them come out of
  // a reshape or transpose (the tail).
  llvm::DenseSet<Value> fromStage{stage->getResult(0)};
  llvm::DenseSet<Value> tail;
  for (Operation *op : body) {
    if (op == stage)
      continue;
    bool reads = llvm::any_of(op->getOperands(),
                              [&](Value v) { return fromStage.contains(v); });
    if (!reads)
      continue;
    Value result = op->getResult(0);
    if (layoutTail && isa<ReshapeOp, TransposeOp>(op)) {
      fromStage.insert(result);
      tail.insert(result);
      continue;
    }
    if (kernelRoleOf(op) != KernelRole::Elementwise || shapeOf(result) != stageShape)
      return false;
    for (Value v : op->getOperands())
      if (fromStage.contains(v) && (tail.contains(v) || shapeOf(v) != stageShape))
        return false;
    fromStage.insert(result);
  }
  // Layout ops may only feed layout ops or the yield.
  for (Value v : tail)
    for (Operation *user : v.getUsers())
      if (!isa<ReshapeOp, TransposeOp>(user) && !isa<YieldOp>(user) && user != kernel)
        return false;
  for (Value v : yieldedOf(kernel))
    if (!fromStage.contains(v))
      return false;
  return true;
}

Operation *dlc::fusableContraction(Operation *kernel) {
  Operation *contraction = nullptr;
  for (Operation *op : bodyOf(kernel)) {
    if (!isStageOp(op))
      continue;
    if (contraction || !isGemmContraction(op))
      return nullptr;
    contraction = op;
  }
  if (!contraction || !elementwiseEpilogue(kernel, contraction, /*layoutTail=*/true))
    return nullptr;
  return contraction;
}

GemmDims dlc::gemmDims(Operation *contraction) {
  GemmDims g;
  if (auto conv = dyn_cast<Conv2dOp>(contraction)) {
    ArrayRef<int64_t> out = shapeOf(conv.getResult()), w = shapeOf(conv.getW());
    int64_t groups = conv.getGroups();
    g.m = w[0] / groups;
    g.n = out[0] * out[2] * out[3];
    g.k = w[1] * w[2] * w[3];
    g.batch = groups;
    return g;
  }
  auto mm = cast<MatmulOp>(contraction);
  ArrayRef<int64_t> out = shapeOf(mm.getResult()), lhs = shapeOf(mm.getLhs());
  g.m = out[out.size() - 2];
  g.n = out.back();
  g.k = mm.getTransposeA() ? lhs[lhs.size() - 2] : lhs.back();
  for (size_t i = 0; i + 2 < out.size(); ++i)
    g.batch *= out[i];
  return g;
}

const CudaArch *dlc::cudaArch(llvm::StringRef arch) {
  // A100 SXM and H100 SXM figures (public data sheets).
  // Tensor-core rates are the dense figures; mma.sync reaches about two
  // thirds of sm_90's (wgmma reaches the rest), which the estimate ignores.
  static const CudaArch sm80{"sm_80", 108, 2048, 65536, 164 * 1024, 48 * 1024,
                             19.5e12, 1.555e12, 156e12, 312e12};
  static const CudaArch sm90{"sm_90", 132, 2048, 65536, 228 * 1024, 48 * 1024,
                             67e12, 3.35e12, 495e12, 989e12};
  if (arch == "sm_80")
    return &sm80;
  if (arch == "sm_90")
    return &sm90;
  return nullptr;
}

std::string dlc::mmaInstruction(Operation *op) {
  auto element = [](Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); };
  if (!op || !isGemmContraction(op) || element(op->getOperand(0)) != element(op->getOperand(1)))
    return "";
  StringRef precision = productPrecision(op);
  if (precision == "tf32")
    return "m16n8k8.tf32";
  if (precision == "bf16" || precision == "f16")
    return ("m16n8k16." + precision).str();
  return "";
}

namespace {

/// One candidate block tile of the SIMT GEMM.
struct GemmTile {
  int64_t bm, bn, bk, tm, tn;
  int64_t threads() const { return (bm / tm) * (bn / tn); }
};

struct Schedule {
  KernelStrategy strategy = KernelStrategy::elementwise;
  KernelImpl impl = KernelImpl::generated;
  std::string reason;
  int64_t block = 256, grid[3] = {1, 1, 1};
  GemmTile tile{0, 0, 0, 0, 0};
  /// Tensor cores: the mma.sync instruction and each warp's tile (WM, WN).
  std::string mma;
  int64_t warpTile[2] = {0, 0};
  int64_t vector = 1, smem = 0, registers = 32, blocksPerSm = 0;
  /// Slices of K, each a block per tile (split-K).
  int64_t splitK = 1;
  double seconds = 0;
};

struct TilePass : public dlc::impl::DlcTileBase<TilePass> {
  using DlcTileBase::DlcTileBase;
  void runOnOperation() override;
};

} // namespace

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Resident blocks per SM, from threads, estimated registers and shared
/// memory per block.
static int64_t occupancy(const CudaArch &arch, int64_t threads,
                         int64_t registers, int64_t smem) {
  int64_t byThreads = arch.maxThreadsPerSm / threads;
  int64_t byRegisters = arch.registersPerSm / (registers * threads);
  int64_t bySmem = smem ? arch.sharedPerSm / smem : 32;
  return std::max<int64_t>(0, std::min({byThreads, byRegisters, bySmem,
                                        (int64_t)32}));
}

/// The time and grid of GEMM schedule `s` (its block tile set): waves of
/// tiles over the SMs, each SM's rate `smFlops` shared by its resident
/// blocks over `depth` (K, rounded up to whole slices where the kernel
/// computes them), plus the operands' traffic, streamed from L2 at about
/// three times DRAM bandwidth.
static void estimateGemm(const CudaArch &arch, Schedule &s, GemmDims g, int64_t depth,
                         double smFlops, int64_t elementBytes) {
  const GemmTile &t = s.tile;
  int64_t tiles = ceilDiv(g.m, t.bm) * ceilDiv(g.n, t.bn) * g.batch;
  int64_t waves = ceilDiv(tiles, arch.sms * s.blocksPerSm);
  int64_t perSm = std::min(s.blocksPerSm, ceilDiv(tiles, arch.sms));
  double compute = waves * perSm * 2.0 * t.bm * t.bn * depth / smFlops;
  double traffic = double(tiles) * (t.bm + t.bn) * g.k * elementBytes /
                   (3.0 * arch.dramBytesPerSecond);
  s.seconds = compute + traffic;
  s.grid[0] = ceilDiv(g.n, t.bn);
  s.grid[1] = ceilDiv(g.m, t.bm);
  s.grid[2] = g.batch;
}

/// The GEMM schedule: the candidate tile with the smallest estimated time.
/// A tile's blocks share their SM's FP32 rate; a thread tile of TM x TN
/// reads TM + TN shared-memory words per TM·TN FMAs, so small thread tiles
/// are bound by shared memory (efficiency TM·TN / (TM + TN) / 4, at most 1).
static Schedule scheduleMatmul(const CudaArch &arch, Operation *contraction) {
  auto [m, n, k, batch] = gemmDims(contraction);
  auto type = cast<RankedTensorType>(contraction->getResult(0).getType());
  int64_t wordBytes = type.getElementType().isF64() ? 8 : 4;
  static const GemmTile candidates[] = {
      {128, 128, 8, 8, 8}, {128, 64, 8, 8, 4}, {64, 64, 8, 4, 4},
      {32, 64, 8, 4, 4},   {32, 32, 8, 4, 4},   {32, 32, 8, 2, 2},
  };
  Schedule best;
  best.seconds = INFINITY;
  for (const GemmTile &t : candidates) {
    Schedule s;
    s.strategy = KernelStrategy::matmul;
    s.tile = t;
    s.block = t.threads();
    s.smem = (t.bm + t.bn) * t.bk * wordBytes;
    s.registers = (t.tm * t.tn + t.tm + t.tn) * (wordBytes / 4) + 30;
    s.blocksPerSm = occupancy(arch, s.block, s.registers, s.smem);
    if (s.blocksPerSm == 0)
      continue;
    double efficiency = std::min(
        1.0, double(t.tm * t.tn) / double(t.tm + t.tn) / 4.0);
    double smFlops = arch.fp32Flops / arch.sms * efficiency *
                     (wordBytes == 8 ? 0.5 : 1.0);
    estimateGemm(arch, s, {m, n, k, batch}, k, smFlops, wordBytes);
    if (s.seconds < best.seconds)
      best = s;
  }
  best.reason = "tiled GEMM, tile by estimated time";
  // Split-K: a GEMM whose tiles leave most SMs idle and whose K is long (a
  // weight gradient: K = the batch's positions) gives each tile several
  // blocks, each a slice of K of 1024 or more, up to about one block per SM.
  int64_t tiles = ceilDiv(m, best.tile.bm) * ceilDiv(n, best.tile.bn) * batch;
  if (2 * tiles <= arch.sms && k >= 2048) {
    best.splitK = std::min(arch.sms / tiles, k / 1024);
    best.grid[2] = batch * best.splitK;
    best.seconds /= best.splitK;
    best.reason += llvm::formatv(", split-K over {0} slices", best.splitK).str();
  }
  return best;
}

/// One candidate block tile of the tensor-core GEMM: BM x BN x BK, each
/// warp a WM x WN tile of m16n8 instructions.
struct MmaTile {
  int64_t bm, bn, bk, wm, wn;
  int64_t warps() const { return (bm / wm) * (bn / wn); }
};

/// The tensor-core GEMM schedule for `instruction` (mmaInstruction): the
/// candidate with the smallest estimated time, as scheduleMatmul's. Operand
/// slices sit in a ring of shared-memory stages (codegen/cuda/MmaPipelined.cpp).
/// A warp tile of MT x NT instructions loads MT + NT fragments for MT·NT
/// instructions: below two instructions per fragment, shared memory bounds
/// it.
static Schedule scheduleMmaMatmul(const CudaArch &arch, Operation *contraction,
                                  const std::string &instruction) {
  auto [m, n, k, batch] = gemmDims(contraction);
  bool tf32 = StringRef(instruction).ends_with(".tf32");
  int64_t elementBytes = tf32 ? 4 : 2;
  double tensorFlops = tf32 ? arch.tf32Flops : arch.halfFlops;
  static const MmaTile candidates[] = {
      {128, 128, 32, 64, 32}, {128, 64, 32, 64, 32}, {64, 64, 32, 32, 32},
      {64, 32, 32, 32, 16},   {32, 32, 32, 16, 16},
  };
  Schedule best;
  best.seconds = INFINITY;
  for (const MmaTile &t : candidates) {
    Schedule s;
    s.strategy = KernelStrategy::matmul;
    s.mma = instruction;
    s.tile = GemmTile{t.bm, t.bn, t.bk, 0, 0};
    s.warpTile[0] = t.wm;
    s.warpTile[1] = t.wn;
    s.block = t.warps() * 32;
    // The pipelined template's ring of stages (MmaPipelined.cpp: 4 for
    // 16-bit operands, 3 for TF32), the common case; operands it cannot
    // copy directly use one padded slice instead.
    s.smem = (tf32 ? 3 : 4) * (t.bm + t.bn) * t.bk * elementBytes;
    int64_t mt = t.wm / 16, nt = t.wn / 8;
    s.registers = mt * nt * 4 + mt * 4 + nt * 2 + 40;
    s.blocksPerSm = occupancy(arch, s.block, s.registers, s.smem);
    if (s.blocksPerSm == 0)
      continue;
    double efficiency = std::min(1.0, double(mt * nt) / double(mt + nt) / 2.0);
    estimateGemm(arch, s, {m, n, k, batch}, ceilDiv(k, t.bk) * t.bk,
                 tensorFlops / arch.sms * efficiency, elementBytes);
    if (s.seconds < best.seconds)
      best = s;
  }
  best.reason = "tensor-core GEMM (mma.sync " + instruction + "), tile by estimated time";
  return best;
}

/// Whether a convolution runs as an implicit GEMM (the matmul templates
/// reading the window of each output pixel as the GEMM's k; Gemm.cpp) rather
/// than the rows kernel's direct loops (Windows.cpp): when a block tile of
/// output channels is at least half full (16 or more channels a group, so
/// not a depthwise convolution) and the smallest tiles (32 x 32) occupy a
/// quarter of the SMs or more. A convolution with few outputs and a long
/// window (a CNN's weight gradient: the batch times the image as its
/// window) would leave most SMs idle on one long tile; the rows kernel gives
/// it a warp each output instead. (The quarter is a judgement, not yet
/// measured: split-K would serve those convolutions better than either.)
static bool implicitGemmPays(const CudaArch &arch, Operation *conv) {
  GemmDims g = gemmDims(conv);
  return g.m >= 16 && 4 * ceilDiv(g.m, 32) * ceilDiv(g.n, 32) * g.batch >= arch.sms;
}

/// The widest extent one row's reductions run over: it sets the threads of
/// a `rows` kernel.
static int64_t reductionExtent(Operation *op) {
  if (auto row = dyn_cast<RowOpInterface>(op)) {
    ArrayRef<int64_t> s = shapeOf(row.getRowInput());
    int64_t n = 1;
    for (int64_t axis : row.getRowAxes())
      n *= s[axis];
    return n;
  }
  if (kernelRoleOf(op) == KernelRole::Contraction) // matmul's result rows
    return shapeOf(op->getResult(0)).back();
  return elementsOf(op->getOperand(0)) /
         std::max<int64_t>(1, elementsOf(op->getResult(0)));
}

/// Warps a `warp_rows` block holds, each on its own row.
static constexpr int64_t kWarpsPerRowBlock = 4;

/// Whether a rows kernel gives each warp its own row: when every stage
/// reads in rows (softmax, norms, reductions: RowOpInterface), no row is
/// longer than 1024 elements (32 a lane), and there are rows for every warp
/// of a block on each SM 4 times over. A block per row would spend more on
/// its barriers and shared-memory partials than on rows this short (the
/// softmax of 49152 rows of 512 ran at 2.2x PyTorch's time on an H100 with a
/// block of 128 threads per row); PyTorch's softmax and layer_norm give a
/// warp each row up to 1024 as well.
static bool warpPerRow(const CudaArch &arch, ArrayRef<Operation *> body) {
  int64_t rows = INT64_MAX;
  bool any = false;
  for (Operation *op : body) {
    if (!isStageOp(op))
      continue;
    auto row = dyn_cast<RowOpInterface>(op);
    if (!row)
      return false;
    int64_t extent = reductionExtent(op);
    if (extent > 1024)
      return false;
    rows = std::min(rows, elementsOf(row.getRowInput()) / std::max<int64_t>(1, extent));
    any = true;
  }
  return any && rows >= 4 * kWarpsPerRowBlock * arch.sms;
}

static int64_t powerOfTwoAtLeast(int64_t n) {
  int64_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}

void TilePass::runOnOperation() {
  // 1. Only CUDA targets get schedules (`cpu` splits work at run time).
  StringRef spec = target;
  if (!spec.consume_front("cuda:"))
    return;
  const CudaArch *arch = cudaArch(spec);
  if (!arch) {
    getOperation().emitError("dlc-tile: unknown CUDA architecture '")
        << spec << "' (known: sm_80, sm_90)";
    return signalPassFailure();
  }
  Builder b(&getContext());
  for (Operation &op : getOperation().getBody().front()) {
    if (!isKernel(&op))
      continue;
    // 2. Bytes moved and FLOPs, for the bound and the estimate.
    auto cost = cast<CostOpInterface>(op);
    int64_t bytes = cost.getBytesRead() + cost.getBytesWritten();
    int64_t flops = cost.getFlops();
    SmallVector<Operation *> body = bodyOf(&op);
    bool hasStage = false;
    int64_t extent = 1;
    for (Operation *inner : body) {
      if (isStageOp(inner)) {
        hasStage = true;
        extent = std::max(extent, reductionExtent(inner));
      }
    }
    // 3. The strategy and its parameters.
    Schedule s;
    Operation *contraction = fusableContraction(&op);
    if (contraction && isa<Conv2dOp>(contraction) && !implicitGemmPays(*arch, contraction))
      contraction = nullptr;
    if (contraction) {
      std::string mma = mmaInstruction(contraction);
      s = mma.empty() ? scheduleMatmul(*arch, contraction)
                      : scheduleMmaMatmul(*arch, contraction, mma);
      if (isa<Conv2dOp>(contraction))
        s.reason = "convolution as an implicit GEMM (" + s.reason + ")";
      // cuBLASLt wherever it can compute the kernel whole: on an H200 it ran
      // the 4096^3 GEMM 2.5x (bf16) to 4.6x (tf32) faster than the generated
      // mma.sync kernel (bench/results/gpu.md), whose code stays the
      // fallback (no library at run time, DLC_GEMM_LIBRARY=off).
      if (allowLibrary)
        if (std::optional<LibraryGemm> library = matchLibraryGemm(&op)) {
          s.impl = KernelImpl::library;
          s.reason = "cuBLASLt GEMM (" + library->epilogue() + "); fallback: " + s.reason;
        }
    } else if (!hasStage) {
      // Grid-stride over the largest result; 4 independent elements per
      // thread and iteration once there are enough to fill every SM 4 times.
      int64_t n = 1;
      for (Value v : op.getResults())
        n = std::max(n, elementsOf(v));
      s.strategy = KernelStrategy::elementwise;
      s.block = 256;
      s.vector = n >= 4 * 256 * arch->sms * 4 ? 4 : 1;
      s.blocksPerSm = occupancy(*arch, 256, 32, 0);
      s.grid[0] = std::max<int64_t>(
          1, std::min(ceilDiv(n, 256 * s.vector), arch->sms * s.blocksPerSm * 4));
      s.reason = "no reductions: one element per thread, grid-stride";
    } else if (warpPerRow(*arch, body)) {
      // Short rows, many of them: each warp of the block takes its own row.
      s.strategy = KernelStrategy::warp_rows;
      s.block = 32 * kWarpsPerRowBlock;
      s.registers = 48;
      s.blocksPerSm = occupancy(*arch, s.block, s.registers, 0);
      s.grid[0] = arch->sms * s.blocksPerSm * 8; // a cap: grid-stride over rows
      s.reason = "a warp per row (short rows): warp-shuffle reductions, no block barriers";
    } else {
      // One block per row; threads so that each reduces at least 4
      // elements, a warp at least, 512 at most.
      s.strategy = KernelStrategy::rows;
      s.block = std::clamp<int64_t>(powerOfTwoAtLeast(ceilDiv(extent, 4)), 32, 512);
      s.registers = 48;
      s.blocksPerSm = occupancy(*arch, s.block, s.registers, 0);
      s.grid[0] = arch->sms * s.blocksPerSm * 8; // a cap: grid-stride over rows
      s.reason = cast<StringAttr>(op.getAttr("kind") ? op.getAttr("kind")
                                                     : b.getStringAttr(""))
                             .getValue() == "attention"
                     ? "attention: one block per query row, scores in shared memory"
                     : "one block per row, warp-shuffle and shared-memory reductions";
    }
    // The roofline: tensor-core kernels against their instruction's peak.
    double peak = s.mma.empty()                        ? arch->fp32Flops
                  : StringRef(s.mma).ends_with(".tf32") ? arch->tf32Flops
                                                        : arch->halfFlops;
    double seconds = std::max(double(flops) / peak, double(bytes) / arch->dramBytesPerSecond);
    bool computeBound = double(flops) / peak > double(bytes) / arch->dramBytesPerSecond;

    bool matmulTiles = s.strategy == KernelStrategy::matmul;
    DenseI64ArrayAttr tile, threadTile, warpTile;
    if (matmulTiles) {
      tile = b.getDenseI64ArrayAttr({s.tile.bm, s.tile.bn, s.tile.bk});
      if (s.mma.empty())
        threadTile = b.getDenseI64ArrayAttr({s.tile.tm, s.tile.tn});
      else
        warpTile = b.getDenseI64ArrayAttr({s.warpTile[0], s.warpTile[1]});
    }
    bool staged = s.strategy != KernelStrategy::elementwise;
    auto schedule = ScheduleAttr::get(
        &getContext(), arch->name, s.strategy, s.impl,
        b.getDenseI64ArrayAttr({s.block, 1, 1}),
        b.getDenseI64ArrayAttr({s.grid[0], s.grid[1], s.grid[2]}), s.vector,
        s.smem, s.registers, s.blocksPerSm, flops, bytes,
        computeBound ? "compute" : "memory",
        (int64_t)std::ceil(seconds * 1e9), s.reason, tile, threadTile,
        staged ? "shared" : "", s.mma, warpTile, s.splitK);
    op.setAttr("dlc.schedule", schedule);
  }
}
