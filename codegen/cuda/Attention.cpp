//===- Attention.cpp - flash-style attention regions -----------------------===//
//
// An attention region (AttentionRegion.h) with f32 products, or 16-bit
// ones the tensor-core kernel does not take (AttentionMma.cpp), as one
// flash-style kernel of SIMT FMAs: a block of 256 threads takes a
// tile of BQ = 64 queries of one (batch, head), stages them in shared
// memory, and loops over tiles of BK keys whose K and V rows it stages in
// shared memory too. Per K/V tile each thread computes a 4×(BK/16) tile of
// scores in registers, the region's own element-wise ops between the scores
// and the softmax (scale, causal/select mask, whatever dlc-fuse admitted)
// go through the elemental emitter at the score's index (the score is a
// one-element buffer based at its own flat index, as the GEMM epilogue
// does), and an online softmax keeps a running max and sum per query,
// rescaling the output accumulator (4×ceil(Dv/16) per thread) when the max
// grows. The output is acc / sum, stored through the region's layout tail.
//
// Precision: scores, the softmax and the accumulator are float, where the
// per-row kernel and the oracle use double for the softmax's max/sum. With
// --precision bf16/f16, Q, K, V are read as stored, the scores and the
// output rounded to the products' dtype as the graph says, and the
// probabilities kept in float. The difference is a few float ulps per element
// (relative error ~1e-6 on the test graphs, within cuda-emu's 2e-5).
//
// Key tiles a constant mask leaves out are skipped (AttentionRegion.cpp).
//
// Anything else falls back to the per-row kernel (emitFlashAttention
// returns false before emitting anything): non-float dtypes, head dims over
// 128, an element-wise chain that reads the scores at another index, V or
// Q/K computed from a stage.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/AttentionRegion.h"

#include "ir/DlcDialect.h"

#include "llvm/Support/FormatVariadic.h"

#include <functional>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;
using namespace dlc::codegen::cuda;

namespace {
constexpr int64_t kThreads = 256, kRowsPerThread = kFlashQueryTile / 16;
} // namespace

bool cuda::emitFlashAttention(KernelContext &ctx) {
  std::optional<AttentionRegion> matched = matchAttentionRegion(ctx);
  if (!matched)
    return false;
  const AttentionRegion &region = *matched;
  if (emitMmaFlashAttention(ctx, region))
    return true;
  MatmulOp qk = region.qk, pv = region.pv;
  Value Q = region.Q, K = region.K, V = region.V, S = region.S, X = region.X;
  const std::vector<int64_t> &sShape = region.sShape, &batchShape = region.batchShape;
  int64_t Tq = region.Tq, Tk = region.Tk, D = region.D, Dv = region.Dv;
  const int64_t BK = D <= 64 ? 64 : 32;
  const int64_t KPT = BK / 16, CPT = (Dv + 15) / 16, RPT = kRowsPerThread;
  const int64_t qStride = D + 1, kStride = D + 1, pStride = BK + 4;
  const int64_t smemFloats = kFlashQueryTile * qStride + BK * kStride + BK * Dv + kFlashQueryTile * pStride;
  int64_t heads = product(batchShape), qTiles = (Tq + kFlashQueryTile - 1) / kFlashQueryTile;
  int64_t tiles = heads * qTiles;

  CodeWriter &out = ctx.out;
  ElementalEmitter elemental(ctx.target, out, ctx.buffers, ctx.statics, *ctx.checks);
  setFlashLaunch(ctx, kThreads, tiles, smemFloats * 4);

  auto line = [&](const std::string &s) { out.line(s); };
  auto fmt = [](const char *f, auto &&...args) {
    return llvm::formatv(f, std::forward<decltype(args)>(args)...).str();
  };
  line(fmt("// flash attention: {0} tile(s) of {1} queries ({2} (batch, head) x "
           "{3}), K/V tiles of {4} keys in shared memory, online softmax in "
           "float; Tq={5} Tk={6} D={7} Dv={8}",
           tiles, kFlashQueryTile, heads, qTiles, BK, Tq, Tk, D, Dv));
  line("DLC_DYNAMIC_SHARED(dlc_smem);");
  line(fmt("float *sQ = (float *)dlc_smem;  // [{0}][{1}]", kFlashQueryTile, qStride));
  line(fmt("float *sK = sQ + {0};  // [{1}][{2}]", kFlashQueryTile * qStride, BK, kStride));
  line(fmt("float *sV = sK + {0};  // [{1}][{2}]", BK * kStride, BK, Dv));
  line(fmt("float *sP = sV + {0};  // [{1}][{2}]", BK * Dv, kFlashQueryTile, pStride));
  line("const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;");
  out.open(fmt("for (int64_t tile = blockIdx.x; tile < {0}; tile += gridDim.x)", tiles));
  elemental.pushScope();
  line(fmt("const int64_t bh = tile / {0}, q0 = tile % {0} * {1};", qTiles, kFlashQueryTile));
  Index batch = decompose(out, "bh", batchShape);

  auto strided = [&](const std::string &var, int64_t n) {
    out.open(fmt("for (int {0} = threadIdx.x; {0} < {1}; {0} += {2})", var, n, kThreads));
    elemental.pushScope();
  };
  auto close = [&]() {
    elemental.popScope();
    out.close();
  };
  auto guarded = [&](const std::string &cond, const std::string &target,
                     const std::function<std::string()> &value) {
    out.open("if (" + cond + ")");
    elemental.pushScope();
    line(target + " = (float)" + value() + ";");
    close();
  };

  line("// this tile's queries");
  strided("e", kFlashQueryTile * D);
  line(fmt("const int r = e / {0}, d = e % {0};", D));
  line("const int64_t qi = q0 + r;");
  line("float x = 0.0f;");
  guarded(fmt("qi < {0}", Tq), "x", [&] {
    return elemental.emit(Q, matmulOperandIndex(Q, batch, false, "qi", "d"));
  });
  line(fmt("sQ[r * {0} + d] = x;", qStride));
  close();

  line(fmt("float m[{0}], l[{0}], acc[{0}][{1}];", RPT, CPT));
  line("#pragma unroll");
  out.open(fmt("for (int i = 0; i < {0}; ++i)", RPT));
  line("m[i] = -INFINITY, l[i] = 0.0f;");
  line("#pragma unroll");
  line(fmt("for (int c = 0; c < {0}; ++c) acc[i][c] = 0.0f;", CPT));
  out.close();

  emitKeyRange(out, region);
  out.open(fmt("for (int64_t k0 = key_begin; k0 < key_end; k0 += {0})", BK));
  elemental.pushScope();
  line("__syncthreads();");
  line("// K and V rows of this key tile");
  strided("e", BK * D);
  line(fmt("const int j = e / {0}, d = e % {0};", D));
  line("const int64_t key = k0 + j;");
  line("float x = 0.0f;");
  guarded(fmt("key < {0}", Tk), "x", [&] {
    return elemental.emit(K, matmulOperandIndex(K, batch, qk.getTransposeB(), "d", "key"));
  });
  line(fmt("sK[j * {0} + d] = x;", kStride));
  close();
  strided("e", BK * Dv);
  line(fmt("const int j = e / {0}, c = e % {0};", Dv));
  line("const int64_t key = k0 + j;");
  line("float x = 0.0f;");
  guarded(fmt("key < {0}", Tk), "x", [&] {
    return elemental.emit(V, matmulOperandIndex(V, batch, pv.getTransposeB(), "key", "c"));
  });
  line(fmt("sV[j * {0} + c] = x;", Dv));
  close();
  line("__syncthreads();");

  line(fmt("// scores: rows ty*{0}+i, keys tx+16*j", RPT));
  line(fmt("float s[{0}][{1}];", RPT, KPT));
  line("#pragma unroll");
  out.open(fmt("for (int i = 0; i < {0}; ++i)", RPT));
  line("#pragma unroll");
  line(fmt("for (int j = 0; j < {0}; ++j) s[i][j] = 0.0f;", KPT));
  out.close();
  out.open(fmt("for (int d = 0; d < {0}; ++d)", D));
  line(fmt("float a[{0}], b[{1}];", RPT, KPT));
  line("#pragma unroll");
  line(fmt("for (int i = 0; i < {0}; ++i) a[i] = sQ[(ty * {0} + i) * {1} + d];", RPT, qStride));
  line("#pragma unroll");
  line(fmt("for (int j = 0; j < {0}; ++j) b[j] = sK[(tx + 16 * j) * {1} + d];", KPT, kStride));
  line("#pragma unroll");
  out.open(fmt("for (int i = 0; i < {0}; ++i)", RPT));
  line("#pragma unroll");
  line(fmt("for (int j = 0; j < {0}; ++j) s[i][j] += a[i] * b[j];", KPT));
  out.close();
  out.close();

  line("// the region's element-wise ops on each score (scale, mask, ...)");
  line("#pragma unroll");
  out.open(fmt("for (int i = 0; i < {0}; ++i)", RPT));
  line("#pragma unroll");
  out.open(fmt("for (int j = 0; j < {0}; ++j)", KPT));
  line(fmt("const int64_t qi = q0 + ty * {0} + i, key = k0 + tx + 16 * j;", RPT));
  line("float x = -INFINITY;");
  Index sIndex = batch;
  sIndex.push_back("qi");
  sIndex.push_back("key");
  out.open(fmt("if (qi < {0} && key < {1})", Tq, Tk));
  elemental.pushScope();
  line("const int64_t flat_s = " + flatIndex(sShape, sIndex) + ";");
  DType sType = elementDType(S);
  line("const " + ctx.target.storageType(sType) + " s_v = " +
       ctx.target.store(sType, "s[i][j]") + ";");
  ctx.buffers[S] = Buffer{"(&s_v)", sType, sShape, "flat_s"};
  line("x = (float)" + elemental.emit(X, sIndex) + ";");
  close();
  line("s[i][j] = x;");
  out.close();
  out.close();

  line("// online softmax: running max and sum per query; the 16 threads of a");
  line("// query row are lanes of one warp");
  line("#pragma unroll");
  out.open(fmt("for (int i = 0; i < {0}; ++i)", RPT));
  line("float mx = s[i][0];");
  line("#pragma unroll");
  line(fmt("for (int j = 1; j < {0}; ++j) mx = fmaxf(mx, s[i][j]);", KPT));
  line("#pragma unroll");
  line("for (int o = 8; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));");
  line("const float mnew = fmaxf(m[i], mx);");
  line("const float base = mnew == -INFINITY ? 0.0f : mnew;");
  line("const float alpha = expf(m[i] - base);");
  line("float sum = 0.0f;");
  line("#pragma unroll");
  out.open(fmt("for (int j = 0; j < {0}; ++j)", KPT));
  line("const float p = expf(s[i][j] - base);");
  line(fmt("sP[(ty * {0} + i) * {1} + tx + 16 * j] = p;", RPT, pStride));
  line("sum += p;");
  out.close();
  line("#pragma unroll");
  line("for (int o = 8; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);");
  line("l[i] = l[i] * alpha + sum;");
  line("m[i] = mnew;");
  line("#pragma unroll");
  line(fmt("for (int c = 0; c < {0}; ++c) acc[i][c] *= alpha;", CPT));
  out.close();
  line("__syncwarp();");
  line("// acc += p·v over the key tile");
  out.open(fmt("for (int j = 0; j < {0}; ++j)", BK));
  line(fmt("float p[{0}], v[{1}];", RPT, CPT));
  line("#pragma unroll");
  line(fmt("for (int i = 0; i < {0}; ++i) p[i] = sP[(ty * {0} + i) * {1} + j];", RPT, pStride));
  line("#pragma unroll");
  if (Dv % 16 == 0)
    line(fmt("for (int c = 0; c < {0}; ++c) v[c] = sV[j * {1} + tx + 16 * c];", CPT, Dv));
  else
    line(fmt("for (int c = 0; c < {0}; ++c) v[c] = tx + 16 * c < {1} ? sV[j * {1} + tx + 16 * c] : 0.0f;",
             CPT, Dv));
  line("#pragma unroll");
  out.open(fmt("for (int i = 0; i < {0}; ++i)", RPT));
  line("#pragma unroll");
  line(fmt("for (int c = 0; c < {0}; ++c) acc[i][c] += p[i] * v[c];", CPT));
  out.close();
  out.close();
  close(); // key tiles

  line("// the output, acc / sum, through the layout tail");
  line("#pragma unroll");
  out.open(fmt("for (int i = 0; i < {0}; ++i)", RPT));
  line("#pragma unroll");
  out.open(fmt("for (int c = 0; c < {0}; ++c)", CPT));
  line(fmt("const int64_t qi = q0 + ty * {0} + i, col = tx + 16 * c;", RPT));
  line(fmt("if (qi >= {0} || col >= {1}) continue;", Tq, Dv));
  emitAttentionOutput(ctx, region, batch, "acc[i][c] / l[i]");
  out.close();
  out.close();
  line("__syncthreads();");
  close(); // tiles
  return true;
}
