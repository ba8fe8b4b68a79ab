//===- MmaMatmul.cpp - the GEMM on tensor cores (mma.sync) ----------------===//
//
// The `matmul` strategy with an `mma` instruction in its schedule: bf16 and
// f16 operands (m16n8k16), or f32 operands the matmul lets round to TF32
// (m16n8k8, `precision = tf32`), accumulated in f32. A block computes a
// BM x BN tile of one batch; BK-deep slices of both operands are staged in
// shared memory k-contiguous (A as [BM][BK], B as [BN][BK]: the row.col
// layouts of mma.sync), rows padded by 16 bytes so that the warp's fragment
// loads fall in 32 distinct banks; TF32 operands are rounded once, when
// staged (cvt.rna). Each warp computes a WM x WN tile as (WM/16) x (WN/8)
// instructions per k-step, its fragments loaded from shared memory by the
// PTX ISA's layouts; the accumulators are float registers, and the same
// epilogue as the SIMT template (Gemm.h) finishes each element.
//
// The next slice is read into registers while the current one is computed
// (software pipelining with one shared buffer). Not yet: cp.async
// multi-stage pipelines, ldmatrix, wgmma and TMA on sm_90, split-K. cuda-emu runs the instructions' emulation
// (dlc_cuda_emu.h), so the fragment layouts are checked without a GPU.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/Gemm.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;
using namespace dlc::codegen::cuda;

MmaGeometry cuda::mmaGeometry(const KernelContext &ctx) {
  MmaGeometry g;
  g.mma = ctx.schedule.getMma().str();
  g.tf32 = StringRef(g.mma).ends_with(".tf32");
  g.type = g.mma.substr(g.mma.find('.') + 1);
  ArrayRef<int64_t> tile = ctx.schedule.getTile().asArrayRef();
  ArrayRef<int64_t> warpTile = ctx.schedule.getWarpTile().asArrayRef();
  g.BM = tile[0], g.BN = tile[1], g.BK = tile[2], g.WM = warpTile[0], g.WN = warpTile[1];
  g.MT = g.WM / 16, g.NT = g.WN / 8, g.KI = g.tf32 ? 8 : 16;
  g.warpsN = g.BN / g.WN;
  g.threads = (g.BM / g.WM) * g.warpsN * 32;
  return g;
}

Index cuda::emitMmaPrologue(KernelContext &ctx, const GemmProblem &problem,
                            const MmaGeometry &g) {
  CodeWriter &out = ctx.out;
  out.line("const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;");
  out.line("const int gid = lane / 4, tig = lane % 4;  // the fragments' group and thread");
  out.line(llvm::formatv("const int wm0 = (warp / {0}) * {1}, wn0 = (warp % {0}) * {2};",
                         g.warpsN, g.WM, g.WN)
               .str());
  out.line(llvm::formatv("const int64_t m0 = (int64_t)blockIdx.y * {0}, n0 = "
                         "(int64_t)blockIdx.x * {1};",
                         g.BM, g.BN)
               .str());
  Index batch = decompose(out, "(int64_t)blockIdx.z", problem.batchShape);
  out.line(llvm::formatv("float acc[{0}][{1}][4];", g.MT, g.NT).str());
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int i = 0; i < {0}; ++i)", g.MT).str());
  out.line("#pragma unroll");
  out.line(llvm::formatv("for (int j = 0; j < {0}; ++j)", g.NT).str());
  out.line("  acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;");
  out.close();
  return batch;
}

void cuda::emitMmaProducts(CodeWriter &out, const MmaGeometry &g) {
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int i = 0; i < {0}; ++i)", g.MT).str());
  out.line("#pragma unroll");
  out.line(llvm::formatv("for (int j = 0; j < {0}; ++j) dlc_mma_{1}(acc[i][j], a[i], b[j]);",
                         g.NT, g.type)
               .str());
  out.close();
}

void cuda::emitMmaEpilogue(KernelContext &ctx, ElementalEmitter &elemental,
                           const GemmProblem &problem, const Index &batch,
                           const MmaGeometry &g) {
  CodeWriter &out = ctx.out;
  // The accumulators' layout: d0 (g, 2t), d1 (g, 2t+1), d2 (g+8, 2t), d3 (g+8, 2t+1).
  out.line("// epilogue: the kernel's results from each accumulator");
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int i = 0; i < {0}; ++i)", g.MT).str());
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int j = 0; j < {0}; ++j)", g.NT).str());
  out.line("#pragma unroll");
  out.open("for (int h = 0; h < 4; ++h)");
  out.line("const int64_t m = m0 + wm0 + i * 16 + gid + (h >= 2 ? 8 : 0), "
           "n = n0 + wn0 + j * 8 + 2 * tig + (h & 1);");
  out.line(llvm::formatv("if (m >= {0} || n >= {1}) continue;", problem.M, problem.N).str());
  emitGemmEpilogue(ctx, elemental, problem, batch, "acc[i][j][h]");
  out.close();
  out.close();
  out.close();
}

void cuda::emitMmaMatmulKernel(KernelContext &ctx) {
  if (emitPipelinedMmaMatmul(ctx))
    return;
  GemmProblem problem = gemmProblem(ctx);
  CodeWriter &out = ctx.out;
  const CudaTarget &target = ctx.target;
  ElementalEmitter elemental(target, out, ctx.buffers, ctx.statics, *ctx.checks);
  MmaGeometry g = mmaGeometry(ctx);
  bool tf32 = g.tf32;
  int64_t BM = g.BM, BN = g.BN, BK = g.BK, WM = g.WM, WN = g.WN, MT = g.MT, NT = g.NT,
          KI = g.KI, threads = g.threads;
  DType operandType = elementDType(problem.lhs());
  std::string element = tf32 ? "unsigned" : target.storageType(operandType);
  int64_t stride = BK + (tf32 ? 4 : 8); // + 16 bytes

  out.line(llvm::formatv("// {0}: [{1} x {2}] x [{2} x {3}] over {4} batch(es) on tensor "
                         "cores (mma.sync.{5}); block tile {6}x{7}x{8}, warp tile {9}x{10}",
                         describeOp(problem.op), problem.M, problem.K, problem.N,
                         product(problem.batchShape), g.mma, BM, BN, BK, WM, WN)
               .str());
  out.line(llvm::formatv("__shared__ __align__(16) {0} As[{1}][{2}];", element, BM, stride).str());
  out.line(llvm::formatv("__shared__ __align__(16) {0} Bs[{1}][{2}];", element, BN, stride).str());
  Index batch = emitMmaPrologue(ctx, problem, g);

  // Software pipelining: the next slice's elements are read from global
  // memory into registers (ra, rb) before this slice's instructions, so the
  // loads are in flight while the tensor cores work; at the top of the next
  // iteration they are converted into the instruction's operand type and
  // stored to shared memory.
  int64_t perA = (BM * BK + threads - 1) / threads, perB = (BN * BK + threads - 1) / threads;
  out.line(llvm::formatv("float ra[{0}], rb[{1}];", perA, perB).str());
  auto intoRegister = [](const char *array) {
    return [array](const std::string &v) {
      return std::string(array) + "[l] = (float)(" + v + ");";
    };
  };
  auto prefetch = [&](const std::string &kOrigin) {
    emitOperandSlice(ctx, elemental, problem, batch, /*isLhs=*/true, BM, BK, threads,
                     intoRegister("ra"), kOrigin);
    emitOperandSlice(ctx, elemental, problem, batch, /*isLhs=*/false, BN, BK, threads,
                     intoRegister("rb"), kOrigin);
  };
  auto convert = [&](const std::string &v) {
    return tf32 ? "dlc_tf32(" + v + ")" : target.store(operandType, v);
  };
  out.open("");
  out.line("const int64_t k0 = 0;");
  prefetch("k0");
  out.close();
  out.open(llvm::formatv("for (int64_t k0 = 0; k0 < {0}; k0 += {1})", problem.K, BK).str());
  emitSliceLoop(ctx, problem, /*isLhs=*/true, BM, BK, threads, "As[rr][kk] = " + convert("ra[l]") + ";");
  emitSliceLoop(ctx, problem, /*isLhs=*/false, BN, BK, threads, "Bs[rr][kk] = " + convert("rb[l]") + ";");
  out.line("__syncthreads();");
  out.open(llvm::formatv("if (k0 + {0} < {1})", BK, problem.K).str());
  out.line(llvm::formatv("const int64_t k_next = k0 + {0};", BK).str());
  prefetch("k_next");
  out.close();
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int ks = 0; ks < {0}; ks += {1})", BK, KI).str());
  out.line(llvm::formatv("unsigned a[{0}][4], b[{1}][2];", MT, NT).str());
  // Fragment loads (PTX ISA): A's registers hold (g, t), (g+8, t), (g, t+4),
  // (g+8, t+4) for TF32, and pairs along k at 2t and 2t+8 for 16-bit types;
  // B's hold (t, g), (t+4, g), or pairs at 2t and 2t+8.
  std::string k0 = tf32 ? "ks + tig" : "ks + 2 * tig", k1 = tf32 ? "ks + tig + 4" : "ks + 2 * tig + 8";
  auto load = [&](const std::string &array, const std::string &row, const std::string &k) {
    std::string at = array + "[" + row + "][" + k + "]";
    return tf32 ? at : "dlc_load_u32(&" + at + ")";
  };
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int i = 0; i < {0}; ++i)", MT).str());
  out.line("const int r = wm0 + i * 16 + gid;");
  out.line("a[i][0] = " + load("As", "r", k0) + ";");
  out.line("a[i][1] = " + load("As", "r + 8", k0) + ";");
  out.line("a[i][2] = " + load("As", "r", k1) + ";");
  out.line("a[i][3] = " + load("As", "r + 8", k1) + ";");
  out.close();
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int j = 0; j < {0}; ++j)", NT).str());
  out.line("const int c = wn0 + j * 8 + gid;");
  out.line("b[j][0] = " + load("Bs", "c", k0) + ";");
  out.line("b[j][1] = " + load("Bs", "c", k1) + ";");
  out.close();
  emitMmaProducts(out, g);
  out.close();
  out.line("__syncthreads();");
  out.close();

  emitMmaEpilogue(ctx, elemental, problem, batch, g);
}
