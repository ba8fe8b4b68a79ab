//===- SplitReduction.cpp - a lone reduction spread over the GPU -----------===//
//
// A rows kernel gives a block each row of the results' leading dimensions.
// A reduction whose results are a vector — a bias gradient (the sum over
// batch and positions), often with the optimizer's update of that bias
// fused after it — has one row: one block on one SM, whose threads sum
// thousands of elements each (a GPT-2 layer's [4096, 3072] bias gradient:
// 50 MB through one SM). When such a kernel has few rows, its only stage is
// a reduction and everything after it is element-wise at its shape, this
// kernel runs it instead:
//
//  - outputs in chunks, a block per chunk and slice of the reduced
//    elements: where the input's innermost dimension is an output dimension
//    (a column sum), the 32 lanes take 32 consecutive outputs (coalesced)
//    and the block's 8 warps stripes of the reduced elements; where it is
//    reduced (a row sum), each warp takes an output and its lanes stride
//    the elements;
//  - with more than one slice, each block stores its partials in global
//    scratch and counts itself in (atomicAdd after __threadfence); the last
//    block of a chunk combines the slices' partials in slice order — the
//    sum's order fixed by the geometry, not by timing — runs the epilogue
//    and resets the count for the next launch.
//
// The epilogue computes each result element from the reduction's element,
// held in a register (a one-element buffer based at its own index), as the
// GEMM templates' does.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/RowEmitter.h"

#include "ir/DlcDialect.h"
#include "passes/TileRules.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;
using namespace dlc::codegen::cuda;

namespace {
constexpr int64_t kWarps = 8;
/// Reduced elements a slice takes at least: each of a block's 256 threads
/// sums a few before the block combines them.
constexpr int64_t kMinSlice = 1024;
} // namespace

bool cuda::emitSplitReduction(KernelContext &ctx) {
  const KernelAnalysis &analysis = ctx.analysis;
  if (analysis.rows >= kFewRows || analysis.stages.size() != 1)
    return false;
  Operation *stage = analysis.stages.front();
  if (!isa<ReduceOpInterface>(stage) ||
      !elementwiseEpilogue(ctx.view.op, stage, /*layoutTail=*/false))
    return false;
  Value x = stage->getOperand(0), result = stage->getResult(0);
  std::vector<int64_t> outShape = shapeOf(result);
  for (Value r : ctx.view.results)
    if (shapeOf(r) != outShape)
      return false;
  ReductionCode code = reductionCode(stage);
  int64_t O = product(outShape), R = code.R;
  if (O == 0 || R == 0)
    return false;

  // Lanes across outputs where the input's innermost dimension is one
  // (consecutive outputs, consecutive addresses); across the reduced
  // elements where it is reduced.
  bool columns = !code.reduced.back();
  int64_t perBlock = columns ? 32 : kWarps;
  int64_t chunks = (O + perBlock - 1) / perBlock;
  // About one wave of these blocks: dlc-tile's grid cap is 8 waves of the
  // schedule's blocks, whose threads these take 256 at a time.
  int64_t wave = std::max<int64_t>(
      1, ctx.schedule.getGrid()[0] / 8 * ctx.schedule.getBlock()[0] / (32 * kWarps));
  int64_t slices = std::clamp<int64_t>(wave / chunks, 1, (R + kMinSlice - 1) / kMinSlice);
  int64_t perSlice = (R + slices - 1) / slices;
  ctx.info.block[0] = 32 * kWarps;
  ctx.info.grid[0] = (unsigned)(chunks * slices);

  CodeWriter &out = ctx.out;
  ElementalEmitter elemental(ctx.target, out, ctx.buffers, ctx.statics, *ctx.checks);
  const std::string &acc = code.acc;
  out.line(llvm::formatv("// {0}: {1} output(s), each over {2} element(s), split over {3} "
                         "block(s): {4} chunk(s) of {5} output(s) ({6}) x {7} slice(s) of {8}",
                         describeOp(stage), O, R, chunks * slices, chunks, perBlock,
                         columns ? "a lane each, the warps striding the elements"
                                 : "a warp each, its lanes striding the elements",
                         slices, perSlice)
               .str());
  out.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
  out.line(llvm::formatv("const int64_t chunk = blockIdx.x % {0}, slice = blockIdx.x / {0};",
                         chunks)
               .str());
  out.line(llvm::formatv("const int64_t o = chunk * {0} + {1};", perBlock,
                         columns ? "lane" : "warp")
               .str());
  out.line(llvm::formatv("const int64_t first = slice * {0}, last = first + {0} < {1} ? "
                         "first + {0} : {1};",
                         perSlice, R)
               .str());
  out.line(acc + " a = " + code.init + ";");
  out.open(llvm::formatv("if (o < {0})", O).str());
  elemental.pushScope();
  Index outIndex = decompose(out, "o", outShape);
  out.open(llvm::formatv("for (int64_t r = first + {0}; r < last; r += {1})",
                         columns ? "warp" : "lane", columns ? kWarps : 32)
               .str());
  elemental.pushScope();
  out.line("const " + acc + " v = (" + acc + ")" +
           elemental.emit(x, code.inputIndex(out, outIndex, "r")) + ";");
  out.line(code.combine);
  elemental.popScope();
  out.close();
  elemental.popScope();
  out.close();

  // The block's partial of its outputs, in the owner threads' `a`.
  if (columns) {
    out.line(llvm::formatv("__shared__ {0} stripes[{1}][32];", acc, kWarps).str());
    out.line("stripes[warp][lane] = a;");
    out.line("__syncthreads();");
    out.open("if (warp == 0)");
    out.open(llvm::formatv("for (int s = 1; s < {0}; ++s)", kWarps).str());
    out.line("const " + acc + " v = stripes[s][lane];");
    out.line(code.combine);
    out.close();
    out.close();
    out.line(llvm::formatv("const bool owns = warp == 0 && o < {0};", O).str());
  } else {
    out.line("a = dlc_warp_" + code.collective + "(a);");
    out.line(llvm::formatv("const bool owns = lane == 0 && o < {0};", O).str());
  }

  if (slices > 1) {
    auto [partials, arrivals] = declareSplitScratch(ctx, acc, slices * O, chunks);
    out.line("// Every slice's partial to scratch; the chunk's last block combines them.");
    out.line(llvm::formatv("if (owns) {0}[slice * {1} + o] = a;", partials, O).str());
    emitLastArrival(out, arrivals + "[chunk]", slices);
    out.open("if (owns)");
    out.line(llvm::formatv("const volatile {0} *p = {1};", acc, partials).str());
    out.line("a = p[o];");
    out.open(llvm::formatv("for (int64_t s = 1; s < {0}; ++s)", slices).str());
    out.line(llvm::formatv("const {0} v = p[s * {1} + o];", acc, O).str());
    out.line(code.combine);
    out.close();
    out.close();
    out.line(llvm::formatv("if (threadIdx.x == 0) {0}[chunk] = 0;", arrivals).str());
  }

  // The epilogue: each result element from the reduction's.
  out.open("if (owns)");
  elemental.pushScope();
  outIndex = decompose(out, "o", outShape);
  DType dtype = elementDType(result);
  out.line("const " + ctx.target.storageType(dtype) + " red_v = " +
           ctx.target.store(dtype, "(" + ctx.target.computeType(dtype) + ")(" + code.finish +
                                       ")") +
           ";");
  ctx.buffers[result] = Buffer{"(&red_v)", dtype, outShape, "o"};
  for (auto [r, value] : llvm::enumerate(ctx.view.results)) {
    const Buffer &buffer = ctx.results[r];
    std::string v = elemental.emit(value, outIndex);
    out.line(buffer.ptr + "[o] = " + ctx.target.store(buffer.dtype, v) + ";");
  }
  elemental.popScope();
  out.close();
  return true;
}
