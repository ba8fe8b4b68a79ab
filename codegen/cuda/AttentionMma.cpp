//===- AttentionMma.cpp - flash attention on tensor cores -----------------===//
//
// An attention region whose products are bf16 or f16 (--precision bf16|f16:
// Q, K, V and the scores in that type), with head dims that are whole
// instructions (D a multiple of 16, Dv of 8, both at most 128), as one
// flash kernel in the form of FlashAttention-2 on mma.sync m16n8k16:
//
//  * a block of 4 warps takes 64 queries of one (batch, head), each warp 16
//    of them; Q is staged once in shared memory, then each tile of 64 keys
//    stages K (key-major) and V. When K and V are kernel arguments in the
//    product's type, key rows contiguous (the usual [.., T, D] layout), the
//    next key tile is copied by cp.async into the other of two stages while
//    this one is computed, and the fragments are loaded by ldmatrix (.trans
//    for V's); otherwise each element is read through the elemental emitter
//    and V is stored transposed (dv-major), k-contiguous as the B operand
//    wants. Rows are padded by 16 bytes;
//  * S = Q·Kᵀ for the warp's 16 x 64 scores: D/16 steps of 8 instructions,
//    accumulators in float; each score is rounded to S's type and goes
//    through the region's element-wise ops (scale, mask) via the elemental
//    emitter at its own index, as in the SIMT kernel;
//  * the online softmax keeps each row's max and (per thread, partial) sum;
//    the row max is reduced over the 4 threads of a quad that hold the row;
//  * P·V reuses the score accumulators as the A operand: the C fragments of
//    two adjacent n8 tiles are exactly the A fragment of one k16 step, each
//    pair rounded to the 16-bit type; O accumulates in float registers and
//    is rescaled when a row's max grows.
//
// Key tiles a constant mask leaves out are skipped (AttentionRegion.cpp).
// cuda-emu runs the instructions' emulation, so the fragment reuse is
// checked without a GPU. Not yet: a split over keys for long sequences of
// few heads.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/AttentionRegion.h"

#include "ir/DlcDialect.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;
using namespace dlc::codegen::cuda;

namespace {
constexpr int64_t kWarps = 4, kKeyTile = 64, kPad = 8; // 8 16-bit elements: 16 bytes
} // namespace

bool cuda::emitMmaFlashAttention(KernelContext &ctx, const AttentionRegion &r) {
  DType type = elementDType(r.Q);
  if ((type != DType::BF16 && type != DType::F16) || elementDType(r.K) != type ||
      elementDType(r.V) != type || r.D % 16 || r.Dv % 8)
    return false;
  const std::string mma = type == DType::BF16 ? "dlc_mma_bf16" : "dlc_mma_f16";
  MatmulOp qk = r.qk, pv = r.pv;
  const CudaTarget &target = ctx.target;
  const std::string T = target.storageType(type);
  // K and V copied as stored: [.., Tk, D] and [.., Tk, Dv] kernel arguments,
  // Dv whole pairs of n8 tiles (one ldmatrix.x4 feeds two).
  const Buffer *kBuffer = argumentBuffer(ctx, r.K, type), *vBuffer = argumentBuffer(ctx, r.V, type);
  const bool direct = kBuffer && vBuffer && qk.getTransposeB() && !pv.getTransposeB() &&
                      r.Dv % 16 == 0;
  const int64_t D = r.D, Dv = r.Dv, LQ = D + kPad, LV = direct ? Dv + kPad : kKeyTile + kPad;
  const int64_t NT = kKeyTile / 8, OT = Dv / 8;
  const int64_t threads = kWarps * 32;
  int64_t heads = product(r.batchShape), qTiles = (r.Tq + kFlashQueryTile - 1) / kFlashQueryTile;
  int64_t tiles = heads * qTiles;
  // Q, then one (direct: two) stage(s) of K [keys][LQ] and V (direct: [keys][LV], else [Dv][LV]).
  int64_t stageElements = kKeyTile * LQ + (direct ? kKeyTile : Dv) * LV;
  int64_t smemElements = kFlashQueryTile * LQ + (direct ? 2 : 1) * stageElements;

  CodeWriter &out = ctx.out;
  ElementalEmitter elemental(target, out, ctx.buffers, ctx.statics, *ctx.checks);
  setFlashLaunch(ctx, threads, tiles, smemElements * 2);

  auto line = [&](const std::string &s) { out.line(s); };
  auto fmt = [](const char *f, auto &&...args) {
    return llvm::formatv(f, std::forward<decltype(args)>(args)...).str();
  };
  line(fmt("// flash attention on tensor cores ({0}.m16n8k16): {1} tile(s) of {2} queries "
           "({3} (batch, head) x {4}), 16 per warp, K/V tiles of {5} keys; Tq={6} Tk={7} "
           "D={8} Dv={9}",
           mma, tiles, kFlashQueryTile, heads, qTiles, kKeyTile, r.Tq, r.Tk, D, Dv));
  line("DLC_DYNAMIC_SHARED(dlc_smem);");
  line(fmt("{0} *sQ = ({0} *)dlc_smem;  // [{1}][{2}]", T, kFlashQueryTile, LQ));
  if (direct) {
    line(fmt("{0} *const sKV = sQ + {1};  // 2 stages of K [{2}][{3}] then V [{2}][{4}]", T,
             kFlashQueryTile * LQ, kKeyTile, LQ, LV));
  } else {
    line(fmt("{0} *sK = sQ + {1};  // [{2}][{3}]: keys x d", T, kFlashQueryTile * LQ, kKeyTile,
             LQ));
    line(fmt("{0} *sVt = sK + {1};  // [{2}][{3}]: dv x keys", T, kKeyTile * LQ, Dv, LV));
  }
  line("const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;");
  line("const int gid = lane / 4, tig = lane % 4;  // the fragments' group and thread");
  if (direct) {
    line("const bool kv_aligned = " + aligned16({kBuffer, vBuffer}) + ";");
    emitLdmatrixLanes(out);
  }
  out.open(fmt("for (int64_t tile = blockIdx.x; tile < {0}; tile += gridDim.x)", tiles));
  elemental.pushScope();
  line(fmt("const int64_t bh = tile / {0}, q0 = tile % {0} * {1};", qTiles, kFlashQueryTile));
  Index batch = decompose(out, "bh", r.batchShape);

  // Staging loops: element e of a `rows` x `cols` slice, one per thread in turn.
  auto stage = [&](const std::string &what, int64_t rows, int64_t cols,
                   const std::function<void()> &body) {
    line("// " + what);
    out.open(fmt("for (int e = threadIdx.x; e < {0}; e += {1})", rows * cols, threads));
    elemental.pushScope();
    line(fmt("const int i = e / {0}, d = e % {0};", cols));
    body();
    elemental.popScope();
    out.close();
  };
  auto guardedRead = [&](const std::string &cond, Value v, const Index &index) {
    line("float x = 0.0f;");
    out.open("if (" + cond + ")");
    elemental.pushScope();
    line("x = (float)" + elemental.emit(v, index) + ";");
    elemental.popScope();
    out.close();
  };

  line("__syncthreads();  // the previous tile's readers are done with sQ");
  stage("this tile's queries", kFlashQueryTile, D, [&] {
    line("const int64_t qi = q0 + i;");
    guardedRead(fmt("qi < {0}", r.Tq), r.Q, matmulOperandIndex(r.Q, batch, false, "qi", "d"));
    line(fmt("sQ[i * {0} + d] = {1};", LQ, target.store(type, "x")));
  });
  line(fmt("float o[{0}][4], m[2] = {{-INFINITY, -INFINITY}, l[2] = {{0.0f, 0.0f};", OT));
  line("#pragma unroll");
  line(fmt("for (int c = 0; c < {0}; ++c) o[c][0] = o[c][1] = o[c][2] = o[c][3] = 0.0f;", OT));
  emitKeyRange(out, r);
  // cp.async of key tile `t` (from key `k`) into stage t % 2: its K and V
  // rows as 16-byte chunks, zero past Tk.
  auto copyKeyTile = [&](const std::string &t, const std::string &k) {
    auto rows = [&](const char *what, Value v, const Buffer &b, int64_t width, int64_t stride,
                    int64_t offset) {
      int64_t chunks = kKeyTile * width / 8;
      line(fmt("// {0} rows of key tile {1}", what, t));
      line("#pragma unroll");
      out.open(fmt("for (int l = 0; l < {0}; ++l)", (chunks + threads - 1) / threads));
      line(fmt("const int c = threadIdx.x + l * {0};", threads));
      if (chunks % threads)
        line(fmt("if (c >= {0}) break;", chunks));
      line(fmt("const int i = c / {0}, chunk = c % {0};", width / 8));
      line(fmt("const int64_t key = {0} + i, d = chunk * 8;", k));
      line(fmt("const bool full = key < {0};", r.Tk));
      line("const auto *src = full ? " + b.ptr + " + " +
           flatIndex(b.shape, matmulOperandIndex(v, batch, false, "key", "d")) + " : " + b.ptr +
           ";");
      line(fmt("auto *dst = sKV + ({0}) % 2 * {1} + {2} + i * {3} + chunk * 8;", t, stageElements,
               offset, stride));
      emitChunkCopy(out, "kv_aligned");
      out.close();
    };
    rows("K", r.K, *kBuffer, D, LQ, 0);
    rows("V", r.V, *vBuffer, Dv, LV, kKeyTile * LQ);
    line("dlc_cp_async_commit();");
  };
  if (direct) {
    line(fmt("const int64_t key_tiles = (key_end - key_begin + {0}) / {1};", kKeyTile - 1,
             kKeyTile));
    out.open("if (key_tiles > 0)");
    copyKeyTile("0", "key_begin");
    out.close();
    out.open("for (int64_t kt = 0; kt < key_tiles; ++kt)");
    elemental.pushScope();
    line(fmt("const int64_t k0 = key_begin + kt * {0};", kKeyTile));
    line("dlc_cp_async_wait<0>();");
    line("// tile kt has landed and every warp is done with tile kt - 1, whose stage the next");
    line("// copy overwrites");
    line("__syncthreads();");
    out.open("if (kt + 1 < key_tiles)");
    copyKeyTile("kt + 1", fmt("k0 + {0}", kKeyTile));
    out.close();
    line(fmt("const {0} *const sK = sKV + kt % 2 * {1}, *const sV = sK + {2};", T, stageElements,
             kKeyTile * LQ));
  } else {
    out.open(fmt("for (int64_t k0 = key_begin; k0 < key_end; k0 += {0})", kKeyTile));
    elemental.pushScope();
    line("__syncthreads();");
    stage("K rows of this key tile", kKeyTile, D, [&] {
      line("const int64_t key = k0 + i;");
      guardedRead(fmt("key < {0}", r.Tk), r.K,
                  matmulOperandIndex(r.K, batch, qk.getTransposeB(), "d", "key"));
      line(fmt("sK[i * {0} + d] = {1};", LQ, target.store(type, "x")));
    });
    stage("V rows of this key tile, transposed", kKeyTile, Dv, [&] {
      line("const int64_t key = k0 + i;");
      guardedRead(fmt("key < {0}", r.Tk), r.V,
                  matmulOperandIndex(r.V, batch, pv.getTransposeB(), "key", "d"));
      line(fmt("sVt[d * {0} + i] = {1};", LV, target.store(type, "x")));
    });
    line("__syncthreads();");
  }

  line(fmt("// S = Q·Kᵀ: the warp's 16 queries x {0} keys", kKeyTile));
  line(fmt("float s[{0}][4];", NT));
  line("#pragma unroll");
  line(fmt("for (int j = 0; j < {0}; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;", NT));
  line("#pragma unroll");
  out.open(fmt("for (int ks = 0; ks < {0}; ks += 16)", D));
  if (direct) {
    // Q's matrices: rows +0/+8 at d +0, then at d +8 (a0..a3); K's: d +0/+8
    // of keys +0, then of keys +8 (b[j][0], b[j][1], b[j+1][0], b[j+1][1]).
    line(fmt("unsigned a[4], b[{0}][2];", NT));
    line(fmt("dlc_ldmatrix_x4(a, sQ + (warp * 16 + q_lo * 8 + lrow) * {0} + ks + q_hi * 8);", LQ));
    line("#pragma unroll");
    line(fmt("for (int j = 0; j < {0}; j += 2) dlc_ldmatrix_x4(&b[j][0], sK + (j * 8 + q_hi * 8 "
             "+ lrow) * {1} + ks + q_lo * 8);",
             NT, LQ));
    line("#pragma unroll");
    line(fmt("for (int j = 0; j < {0}; ++j) {1}(s[j], a, b[j]);", NT, mma));
  } else {
    line("const int q = warp * 16 + gid;");
    line(fmt("const unsigned a[4] = {{dlc_load_u32(&sQ[q * {0} + ks + 2 * tig]), "
             "dlc_load_u32(&sQ[(q + 8) * {0} + ks + 2 * tig]), "
             "dlc_load_u32(&sQ[q * {0} + ks + 2 * tig + 8]), "
             "dlc_load_u32(&sQ[(q + 8) * {0} + ks + 2 * tig + 8])};",
             LQ));
    line("#pragma unroll");
    out.open(fmt("for (int j = 0; j < {0}; ++j)", NT));
    line(fmt("const unsigned b[2] = {{dlc_load_u32(&sK[(j * 8 + gid) * {0} + ks + 2 * tig]), "
             "dlc_load_u32(&sK[(j * 8 + gid) * {0} + ks + 2 * tig + 8])};",
             LQ));
    line(mma + "(s[j], a, b);");
    out.close();
  }
  out.close();

  line("// the region's element-wise ops on each score (scale, mask, ...)");
  line("#pragma unroll");
  out.open(fmt("for (int j = 0; j < {0}; ++j)", NT));
  line("#pragma unroll");
  out.open("for (int h = 0; h < 4; ++h)");
  line("const int64_t qi = q0 + warp * 16 + gid + (h >= 2 ? 8 : 0), "
       "key = k0 + j * 8 + 2 * tig + (h & 1);");
  line("float x = -INFINITY;");
  Index sIndex = batch;
  sIndex.push_back("qi");
  sIndex.push_back("key");
  out.open(fmt("if (qi < {0} && key < {1})", r.Tq, r.Tk));
  elemental.pushScope();
  line("const int64_t flat_s = " + flatIndex(r.sShape, sIndex) + ";");
  DType sType = elementDType(r.S);
  line("const " + target.storageType(sType) + " s_v = " + target.store(sType, "s[j][h]") + ";");
  ctx.buffers[r.S] = Buffer{"(&s_v)", sType, r.sShape, "flat_s"};
  line("x = (float)" + elemental.emit(r.X, sIndex) + ";");
  elemental.popScope();
  out.close();
  line("s[j][h] = x;");
  out.close();
  out.close();

  line("// online softmax: rows gid (h = 0, 1) and gid + 8 (h = 2, 3); a row's 64 scores");
  line("// are in the 4 threads of a quad");
  line("#pragma unroll");
  out.open("for (int row = 0; row < 2; ++row)");
  line("float mx = -INFINITY;");
  line("#pragma unroll");
  line(fmt("for (int j = 0; j < {0}; ++j) mx = fmaxf(mx, fmaxf(s[j][2 * row], s[j][2 * row + 1]));",
           NT));
  line("mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));");
  line("mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));");
  line("const float mnew = fmaxf(m[row], mx);");
  line("const float base = mnew == -INFINITY ? 0.0f : mnew;");
  line("const float alpha = expf(m[row] - base);");
  line("float sum = 0.0f;");
  line("#pragma unroll");
  out.open(fmt("for (int j = 0; j < {0}; ++j)", NT));
  line("s[j][2 * row] = expf(s[j][2 * row] - base);");
  line("s[j][2 * row + 1] = expf(s[j][2 * row + 1] - base);");
  line("sum += s[j][2 * row] + s[j][2 * row + 1];");
  out.close();
  line("l[row] = l[row] * alpha + sum;  // this thread's part of the row");
  line("m[row] = mnew;");
  line("#pragma unroll");
  line(fmt("for (int c = 0; c < {0}; ++c) o[c][2 * row] *= alpha, o[c][2 * row + 1] *= alpha;", OT));
  out.close();

  line("// O += P·V: the score fragments of n-tiles 2kk and 2kk+1 are the A fragment of");
  line("// k-step kk");
  line("#pragma unroll");
  out.open(fmt("for (int kk = 0; kk < {0}; ++kk)", kKeyTile / 16));
  auto p = [&](const std::string &j, const std::string &h) {
    return target.store(type, "s[" + j + "][" + h + "]");
  };
  line("const unsigned a[4] = {dlc_pack2(" + p("2 * kk", "0") + ", " + p("2 * kk", "1") +
       "), dlc_pack2(" + p("2 * kk", "2") + ", " + p("2 * kk", "3") + "), dlc_pack2(" +
       p("2 * kk + 1", "0") + ", " + p("2 * kk + 1", "1") + "), dlc_pack2(" +
       p("2 * kk + 1", "2") + ", " + p("2 * kk + 1", "3") + ")};");
  line("#pragma unroll");
  if (direct) {
    // V [keys][dv] transposed by ldmatrix: keys +0/+8 of dv +0, then of dv +8.
    out.open(fmt("for (int c = 0; c < {0}; c += 2)", OT));
    line("unsigned b[2][2];");
    line(fmt("dlc_ldmatrix_x4_trans(&b[0][0], sV + (kk * 16 + q_lo * 8 + lrow) * {0} + c * 8 + "
             "q_hi * 8);",
             LV));
    line(mma + "(o[c], a, b[0]);");
    line(mma + "(o[c + 1], a, b[1]);");
  } else {
    out.open(fmt("for (int c = 0; c < {0}; ++c)", OT));
    line(fmt("const unsigned b[2] = {{dlc_load_u32(&sVt[(c * 8 + gid) * {0} + kk * 16 + 2 * "
             "tig]), dlc_load_u32(&sVt[(c * 8 + gid) * {0} + kk * 16 + 2 * tig + 8])};",
             LV));
    line(mma + "(o[c], a, b);");
  }
  out.close();
  out.close();
  elemental.popScope();
  out.close(); // key tiles

  line("// the row sums over the quad, then the output, o / l, through the layout tail");
  line("#pragma unroll");
  out.open("for (int row = 0; row < 2; ++row)");
  line("l[row] += __shfl_xor_sync(0xffffffffu, l[row], 1);");
  line("l[row] += __shfl_xor_sync(0xffffffffu, l[row], 2);");
  out.close();
  line("#pragma unroll");
  out.open(fmt("for (int c = 0; c < {0}; ++c)", OT));
  line("#pragma unroll");
  out.open("for (int h = 0; h < 4; ++h)");
  line("const int64_t qi = q0 + warp * 16 + gid + (h >= 2 ? 8 : 0), col = c * 8 + 2 * tig + (h & 1);");
  line(fmt("if (qi >= {0}) continue;", r.Tq));
  emitAttentionOutput(ctx, r, batch, "o[c][h] / l[h >> 1]");
  out.close();
  out.close();
  elemental.popScope();
  out.close(); // tiles
  return true;
}
