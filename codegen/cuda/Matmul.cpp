//===- Matmul.cpp - tiled shared-memory GEMM with its epilogue fused ------===//
//
// The `matmul` strategy of dlc-tile: a block computes a BM x BN tile of one
// batch of the matmul, staging BK-deep slices of both operands in shared
// memory; each thread accumulates a TM x TN register tile (SIMT FMAs, the
// accumulator in float for f32/f16/bf16, double for f64, int64 for
// integers). The operands are read through the elemental emitter, so a
// transposed or broadcast operand, or an element-wise producer fused into
// the kernel, is read in place. The epilogue (bias, activation, residual,
// casts; then reshapes and transposes) is computed per output element from
// the accumulator register and stored where the layout tail sends it.
// Tensor-core schedules (`mma`) go to MmaMatmul.cpp instead.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/Gemm.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;
using namespace dlc::codegen::cuda;

/// Split-K: each slice's block stores its partial tile (each thread its
/// `perThread` accumulators) to global scratch and counts itself in; the
/// tile's last block sums every slice's partials in slice order — an order
/// the geometry fixes, not timing — into its accumulators, resets the count
/// for the next launch, and goes on to the epilogue; the others return.
static void emitSplitKCombine(KernelContext &ctx, const std::string &acc, int64_t slices,
                              int64_t threads, int64_t perThread) {
  CodeWriter &out = ctx.out;
  ArrayRef<int64_t> grid = ctx.schedule.getGrid().asArrayRef();
  int64_t tiles = grid[0] * grid[1] * (grid[2] / slices);
  auto [partials, arrivals] =
      declareSplitScratch(ctx, acc, slices * tiles * threads * perThread, tiles);
  out.line("// split-K: this slice's partial tile to scratch; the tile's last block sums them");
  out.line(llvm::formatv("const int64_t tile = ((int64_t)blockIdx.z / {0} * gridDim.y + "
                         "blockIdx.y) * gridDim.x + blockIdx.x;",
                         slices)
               .str());
  auto at = [&](const std::string &slice) {
    return llvm::formatv("(({0} * {1} + tile) * {2} + threadIdx.x) * {3}", slice, tiles, threads,
                         perThread)
        .str();
  };
  out.line(acc + " *const mine = " + partials + " + " + at("slice") + ";");
  out.line(llvm::formatv("for (int e = 0; e < {0}; ++e) mine[e] = (&acc[0][0])[e];", perThread)
               .str());
  emitLastArrival(out, arrivals + "[tile]", slices);
  out.open(llvm::formatv("for (int e = 0; e < {0}; ++e)", perThread).str());
  out.line(acc + " sum = 0;");
  out.line(llvm::formatv("for (int64_t s = 0; s < {0}; ++s) sum += ((const volatile {1} *){2})[{3} "
                         "+ e];",
                         slices, acc, partials, at("s"))
               .str());
  out.line("(&acc[0][0])[e] = sum;");
  out.close();
  out.line(llvm::formatv("if (threadIdx.x == 0) {0}[tile] = 0;", arrivals).str());
}

void cuda::emitMatmulKernel(KernelContext &ctx) {
  GemmProblem problem = gemmProblem(ctx);
  CodeWriter &out = ctx.out;
  ElementalEmitter elemental(ctx.target, out, ctx.buffers, ctx.statics, *ctx.checks);

  int64_t M = problem.M, N = problem.N, K = problem.K;
  ArrayRef<int64_t> tile = ctx.schedule.getTile().asArrayRef();
  ArrayRef<int64_t> threadTile = ctx.schedule.getThreadTile().asArrayRef();
  int64_t BM = tile[0], BN = tile[1], BK = tile[2], TM = threadTile[0],
          TN = threadTile[1];
  int64_t threads = (BM / TM) * (BN / TN);
  DType dtype = problem.dtype;
  std::string acc = dtype == DType::F64 ? "double"
                    : isFloat(dtype)      ? "float"
                                          : "long long";

  out.line(llvm::formatv("// {0}: [{1} x {2}] x [{2} x {3}] over {4} batch(es); "
                         "block tile {5}x{6}x{7}, thread tile {8}x{9}",
                         describeOp(problem.op), M, K, N, product(problem.batchShape), BM, BN,
                         BK, TM, TN)
               .str());
  out.line(llvm::formatv("__shared__ {0} As[{1}][{2}];", acc, BK, BM).str());
  out.line(llvm::formatv("__shared__ {0} Bs[{1}][{2}];", acc, BK, BN).str());
  out.line(llvm::formatv("const int tx = threadIdx.x % {0}, ty = threadIdx.x / {0};",
                         BN / TN)
               .str());
  out.line(llvm::formatv("const int64_t m0 = (int64_t)blockIdx.y * {0}, n0 = "
                         "(int64_t)blockIdx.x * {1};",
                         BM, BN)
               .str());
  // Split-K: blockIdx.z is (batch, slice of K), each slice a whole number
  // of BK-deep steps.
  int64_t slices = std::max<int64_t>(1, ctx.schedule.getSplitK());
  int64_t perSlice = ((K + slices - 1) / slices + BK - 1) / BK * BK;
  Index batch = decompose(out,
                          slices > 1 ? llvm::formatv("((int64_t)blockIdx.z / {0})", slices).str()
                                     : "(int64_t)blockIdx.z",
                          problem.batchShape);
  std::string kBegin = "0", kEnd = std::to_string(K);
  if (slices > 1) {
    out.line(llvm::formatv("const int64_t slice = blockIdx.z % {0}, k_begin = slice * {1}, "
                           "k_end = k_begin + {1} < {2} ? k_begin + {1} : {2};",
                           slices, perSlice, K)
                 .str());
    kBegin = "k_begin", kEnd = "k_end";
  }
  out.line(llvm::formatv("{0} acc[{1}][{2}];", acc, TM, TN).str());
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int i = 0; i < {0}; ++i)", TM).str());
  out.line("#pragma unroll");
  out.line(llvm::formatv("for (int j = 0; j < {0}; ++j) acc[i][j] = 0;", TN).str());
  out.close();

  out.open(llvm::formatv("for (int64_t k0 = {0}; k0 < {1}; k0 += {2})", kBegin, kEnd, BK).str());
  emitOperandSlice(ctx, elemental, problem, batch, /*isLhs=*/true, BM, BK, threads,
                   [&](const std::string &v) { return "As[kk][rr] = (" + acc + ")" + v + ";"; });
  emitOperandSlice(ctx, elemental, problem, batch, /*isLhs=*/false, BN, BK, threads,
                   [&](const std::string &v) { return "Bs[kk][rr] = (" + acc + ")" + v + ";"; });
  out.line("__syncthreads();");
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int kk = 0; kk < {0}; ++kk)", BK).str());
  out.line(llvm::formatv("{0} a[{1}], b[{2}];", acc, TM, TN).str());
  out.line("#pragma unroll");
  out.line(llvm::formatv("for (int i = 0; i < {0}; ++i) a[i] = As[kk][ty + i * {1}];",
                         TM, BM / TM)
               .str());
  out.line("#pragma unroll");
  out.line(llvm::formatv("for (int j = 0; j < {0}; ++j) b[j] = Bs[kk][tx + j * {1}];",
                         TN, BN / TN)
               .str());
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int i = 0; i < {0}; ++i)", TM).str());
  out.line("#pragma unroll");
  out.line(llvm::formatv("for (int j = 0; j < {0}; ++j) acc[i][j] += a[i] * b[j];",
                         TN)
               .str());
  out.close();
  out.close();
  out.line("__syncthreads();");
  out.close();

  if (slices > 1)
    emitSplitKCombine(ctx, acc, slices, threads, TM * TN);
  out.line("// epilogue: the kernel's results from each accumulator");
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int i = 0; i < {0}; ++i)", TM).str());
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int j = 0; j < {0}; ++j)", TN).str());
  out.line(llvm::formatv("const int64_t m = m0 + ty + i * {0}, n = n0 + tx + j * {1};",
                         BM / TM, BN / TN)
               .str());
  out.line(llvm::formatv("if (m >= {0} || n >= {1}) continue;", M, N).str());
  emitGemmEpilogue(ctx, elemental, problem, batch, "acc[i][j]");
  out.close();
  out.close();
}
