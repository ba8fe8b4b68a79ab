//===- MmaPipelined.cpp - the tensor-core GEMM fed by cp.async ------------===//
//
// The tensor-core GEMM when both operands are kernel arguments already in
// the instruction's type (bf16 or f16 for m16n8k16, f32 for TF32's m16n8k8)
// and their contiguous dimension holds whole 16-byte chunks: the common
// case, since dlc-precision casts a product's operands in kernels of their
// own. Instead of reading each element through the elemental emitter into
// registers and storing it to shared memory (MmaMatmul.cpp, for fused and
// odd-shaped operands), each thread issues 16-byte asynchronous copies
// (cp.async) of the next stages' slices straight into a ring of STAGES
// shared-memory buffers, so several slices are in flight while the tensor
// cores work on the current one (the multistage form of CUTLASS's sm80
// GEMMs). 16-bit fragments are loaded by ldmatrix (its .trans form for an
// operand whose rows, not k, are contiguous); TF32 fragments by 32-bit
// loads, rounded to TF32 there.
//
// Shared-memory layout: a slice is stored as in global memory, rows of
// 16-byte chunks (a [rows][BK] tile when k is contiguous, else [BK][rows]),
// with the chunk index XORed by the row's position in its 128-byte line
// group, so that the eight rows an ldmatrix (or a warp's fragment loads)
// reads fall in distinct banks without padding.
//
// An operand whose base address is not 16-byte aligned (a caller's view
// into a larger buffer) is copied by ordinary loads instead, chunk by
// chunk: the same kernel, a uniform branch.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/Gemm.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;
using namespace dlc::codegen::cuda;

namespace {

/// One operand's slice in shared memory.
struct SliceTile {
  bool isLhs;
  Value operand;
  const Buffer *buffer;
  bool transposed;
  /// The operand's rows (m of the lhs, n of the rhs) per block, and whether
  /// k is its contiguous dimension ([rows][k] in memory).
  int64_t rows;
  bool kContiguous;
  int64_t depth;          ///< BK
  int64_t chunkElements;  ///< elements per 16 bytes
  int64_t rowElements;    ///< a stored row: depth when kContiguous, else rows
  int64_t chunksPerRow;
  int64_t elements() const { return rows * depth; }
  int64_t chunks() const { return elements() / chunkElements; }

  /// The element offset within the tile of chunk `chunk` of stored row
  /// `row` (C expressions), swizzled: XOR by the row's index among the rows
  /// that share a 128-byte line group, so eight consecutive rows at one
  /// chunk column hit eight distinct 16-byte bank groups.
  std::string chunkOffset(const std::string &row, const std::string &chunk) const {
    int64_t rowBytes = rowElements * (16 / chunkElements);
    int64_t rowsPerLine = std::max<int64_t>(1, 128 / rowBytes);
    int64_t mask = std::min<int64_t>(8, chunksPerRow) - 1;
    std::string swizzle = rowsPerLine == 1
                              ? llvm::formatv("(({0}) & {1})", row, mask).str()
                              : llvm::formatv("((({0}) >> {1}) & {2})", row,
                                              llvm::Log2_64(rowsPerLine), mask)
                                    .str();
    return llvm::formatv("(({0}) * {1} + ((({2}) ^ {3}) * {4}))", row, rowElements, chunk,
                         swizzle, chunkElements)
        .str();
  }
  /// The element offset of operand element (r, k) of the tile.
  std::string elementOffset(const std::string &r, const std::string &k) const {
    const std::string &row = kContiguous ? r : k, &col = kContiguous ? k : r;
    return "(" +
           chunkOffset(row, llvm::formatv("({0}) / {1}", col, chunkElements).str()) +
           llvm::formatv(" + ({0}) % {1})", col, chunkElements).str();
  }
};

/// The tile of operand `isLhs` when the pipelined template can copy it:
/// a kernel argument of the instruction's operand type whose contiguous
/// dimension is whole 16-byte chunks.
std::optional<SliceTile> sliceTile(const KernelContext &ctx, const GemmProblem &problem,
                                   const MmaGeometry &g, bool isLhs) {
  MatmulOp mm = problem.matmul;
  if (!mm) // a convolution's image is read through its windows, not as stored
    return std::nullopt;
  Value operand = isLhs ? mm.getLhs() : mm.getRhs();
  DType type = g.tf32 ? DType::F32 : g.type == "bf16" ? DType::BF16 : DType::F16;
  const Buffer *buffer = argumentBuffer(ctx, operand, type);
  if (!buffer)
    return std::nullopt;
  SliceTile t;
  t.isLhs = isLhs;
  t.operand = operand;
  t.buffer = buffer;
  t.transposed = isLhs ? mm.getTransposeA() : mm.getTransposeB();
  // The lhs is [m, k] unless transposed, the rhs [k, n] unless transposed.
  t.kContiguous = t.transposed != isLhs;
  t.rows = isLhs ? g.BM : g.BN;
  t.depth = g.BK;
  t.chunkElements = 16 / (g.tf32 ? 4 : 2);
  t.rowElements = t.kContiguous ? t.depth : t.rows;
  t.chunksPerRow = t.rowElements / t.chunkElements;
  int64_t contiguousExtent = shapeOf(operand).back();
  if (contiguousExtent % t.chunkElements || !llvm::isPowerOf2_64(t.rowElements) ||
      !llvm::isPowerOf2_64(t.chunksPerRow))
    return std::nullopt;
  return t;
}

/// Emits the asynchronous copies of `tile`'s slice at k = `kOrigin` into
/// the shared-memory tile at `base` (a pointer expression).
void emitSliceCopy(KernelContext &ctx, const GemmProblem &problem, const MmaGeometry &g,
                   const Index &batch, const SliceTile &t, const std::string &base,
                   const std::string &kOrigin, const std::string &aligned) {
  CodeWriter &out = ctx.out;
  int64_t perThread = (t.chunks() + g.threads - 1) / g.threads;
  std::string origin = t.isLhs ? "m0" : "n0";
  int64_t extent = t.isLhs ? problem.M : problem.N;
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int l = 0; l < {0}; ++l)", perThread).str());
  out.line(llvm::formatv("const int c = threadIdx.x + l * {0};", g.threads).str());
  if (t.chunks() % g.threads)
    out.line(llvm::formatv("if (c >= {0}) break;", t.chunks()).str());
  out.line(llvm::formatv("const int row = c / {0}, chunk = c % {0};", t.chunksPerRow).str());
  if (t.kContiguous)
    out.line(llvm::formatv("const int64_t gk = {0} + chunk * {1}, gr = {2} + row;", kOrigin,
                           t.chunkElements, origin)
                 .str());
  else
    out.line(llvm::formatv("const int64_t gk = {0} + row, gr = {1} + chunk * {2};", kOrigin,
                           origin, t.chunkElements)
                 .str());
  out.line(llvm::formatv("const bool full = gk < {0} && gr < {1};", problem.K, extent).str());
  Index index = t.isLhs ? matmulOperandIndex(t.operand, batch, t.transposed, "gr", "gk")
                        : matmulOperandIndex(t.operand, batch, t.transposed, "gk", "gr");
  const Buffer &b = *t.buffer;
  out.line("const auto *src = full ? " + b.ptr + " + " + flatIndex(b.shape, index) + " : " +
           b.ptr + ";");
  out.line("auto *dst = " + base + " + " + t.chunkOffset("row", "chunk") + ";");
  emitChunkCopy(out, aligned);
  out.close();
}

/// Emits the fragment loads of one k-step `ks` from the stage at `As`, `Bs`.
void emitFragmentLoads(CodeWriter &out, const MmaGeometry &g, const SliceTile &a,
                       const SliceTile &b) {
  out.line(llvm::formatv("unsigned a[{0}][4], b[{1}][2];", g.MT, g.NT).str());
  if (g.tf32) {
    // a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); b0 (t, g), b1 (t+4, g).
    auto at = [&](const SliceTile &t, const char *tile, const std::string &r,
                  const std::string &k) {
      return llvm::formatv("dlc_tf32({0}[{1}])", tile, t.elementOffset(r, k)).str();
    };
    out.line("#pragma unroll");
    out.open(llvm::formatv("for (int i = 0; i < {0}; ++i)", g.MT).str());
    out.line("const int r = wm0 + i * 16 + gid;");
    out.line("a[i][0] = " + at(a, "As", "r", "ks + tig") + ";");
    out.line("a[i][1] = " + at(a, "As", "r + 8", "ks + tig") + ";");
    out.line("a[i][2] = " + at(a, "As", "r", "ks + tig + 4") + ";");
    out.line("a[i][3] = " + at(a, "As", "r + 8", "ks + tig + 4") + ";");
    out.close();
    out.line("#pragma unroll");
    out.open(llvm::formatv("for (int j = 0; j < {0}; ++j)", g.NT).str());
    out.line("const int c = wn0 + j * 8 + gid;");
    out.line("b[j][0] = " + at(b, "Bs", "c", "ks + tig") + ";");
    out.line("b[j][1] = " + at(b, "Bs", "c", "ks + tig + 4") + ";");
    out.close();
    return;
  }
  // ldmatrix.x4: lane l gives row l % 8 of matrix l / 8. The lhs's four
  // matrices are a0..a3: rows +0/+8 at k +0, then at k +8; the rhs's are
  // b[j][0], b[j][1], b[j+1][0], b[j+1][1]: k +0/+8 at rows +0, then +8.
  auto load = [&](const SliceTile &t, const char *tile, const std::string &r0,
                  const char *rowOffset, const char *kOffset, const std::string &dst) {
    std::string row, chunk;
    if (t.kContiguous) {
      row = r0 + " + " + rowOffset + " + lrow";
      chunk = llvm::formatv("(ks + {0}) / {1}", kOffset, t.chunkElements).str();
    } else {
      row = std::string("ks + ") + kOffset + " + lrow";
      chunk = llvm::formatv("({0} + {1}) / {2}", r0, rowOffset, t.chunkElements).str();
    }
    out.line(llvm::formatv("dlc_ldmatrix_x4{0}({1}, {2} + {3});",
                           t.kContiguous ? "" : "_trans", dst, tile,
                           t.chunkOffset(row, chunk))
                 .str());
  };
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int i = 0; i < {0}; ++i)", g.MT).str());
  load(a, "As", "wm0 + i * 16", "q_lo * 8", "q_hi * 8", "a[i]");
  out.close();
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int j = 0; j < {0}; j += 2)", g.NT).str());
  load(b, "Bs", "wn0 + j * 8", "q_hi * 8", "q_lo * 8", "&b[j][0]");
  out.close();
}

} // namespace

bool cuda::emitPipelinedMmaMatmul(KernelContext &ctx) {
  GemmProblem problem = gemmProblem(ctx);
  MmaGeometry g = mmaGeometry(ctx);
  std::optional<SliceTile> a = sliceTile(ctx, problem, g, /*isLhs=*/true);
  std::optional<SliceTile> b = sliceTile(ctx, problem, g, /*isLhs=*/false);
  if (!a || !b || g.NT % 2 || g.BK % g.KI)
    return false;
  CodeWriter &out = ctx.out;
  const CudaTarget &target = ctx.target;
  ElementalEmitter elemental(target, out, ctx.buffers, ctx.statics, *ctx.checks);
  int64_t stages = g.tf32 ? 3 : 4;
  int64_t elementBytes = g.tf32 ? 4 : 2;
  int64_t stageElements = a->elements() + b->elements();
  ctx.info.dynamicSharedBytes = uint32_t(stages * stageElements * elementBytes);
  std::string element = target.storageType(elementDType(a->operand));

  out.line(llvm::formatv("// {0}: [{1} x {2}] x [{2} x {3}] over {4} batch(es) on tensor "
                         "cores (mma.sync.{5}); block tile {6}x{7}x{8}, warp tile {9}x{10}; "
                         "{11} cp.async stages (lhs {12}, rhs {13})",
                         describeOp(problem.op), problem.M, problem.K, problem.N,
                         product(problem.batchShape), g.mma, g.BM, g.BN, g.BK, g.WM, g.WN,
                         stages, a->kContiguous ? "k-contiguous" : "rows contiguous",
                         b->kContiguous ? "k-contiguous" : "rows contiguous")
               .str());
  out.line("DLC_DYNAMIC_SHARED(dlc_smem);");
  out.line(llvm::formatv("{0} *const ring = ({0} *)dlc_smem;", element).str());
  Index batch = emitMmaPrologue(ctx, problem, g);
  out.line("const bool aligned = " + aligned16({a->buffer, b->buffer}) + ";");
  if (!g.tf32)
    emitLdmatrixLanes(out);

  int64_t slices = (problem.K + g.BK - 1) / g.BK;
  auto copyStage = [&](const std::string &slice) {
    out.open(llvm::formatv("if ({0} < {1})", slice, slices).str());
    std::string stageBase =
        llvm::formatv("ring + ({0}) % {1} * {2}", slice, stages, stageElements).str();
    std::string k = llvm::formatv("(int64_t)({0}) * {1}", slice, g.BK).str();
    emitSliceCopy(ctx, problem, g, batch, *a, stageBase, k, "aligned");
    emitSliceCopy(ctx, problem, g, batch, *b, stageBase + " + " + std::to_string(a->elements()),
                  k, "aligned");
    out.close();
    // One group per stage, empty ones included, so that waiting for all but
    // the newest STAGES - 2 groups always means this slice's has landed.
    out.line("dlc_cp_async_commit();");
  };
  out.line("// prologue: the first STAGES - 1 slices in flight");
  out.open(llvm::formatv("for (int s = 0; s < {0}; ++s)", stages - 1).str());
  copyStage("s");
  out.close();
  out.open(llvm::formatv("for (int kt = 0; kt < {0}; ++kt)", slices).str());
  out.line(llvm::formatv("dlc_cp_async_wait<{0}>();", stages - 2).str());
  // After this barrier every warp has finished slice kt - 1, whose buffer
  // the next copy overwrites.
  out.line("__syncthreads();");
  copyStage(llvm::formatv("kt + {0}", stages - 1).str());
  out.line(llvm::formatv("const {0} *const As = ring + kt % {1} * {2};", element, stages,
                         stageElements)
               .str());
  out.line(llvm::formatv("const {0} *const Bs = As + {1};", element, a->elements()).str());
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int ks = 0; ks < {0}; ks += {1})", g.BK, g.KI).str());
  emitFragmentLoads(out, g, *a, *b);
  emitMmaProducts(out, g);
  out.close();
  out.close();
  emitMmaEpilogue(ctx, elemental, problem, batch, g);
  return true;
}
