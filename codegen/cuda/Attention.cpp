//===- Attention.cpp - flash-style attention regions -----------------------===//
//
// An attention region (a `rows` kernel whose stages are q·kᵀ, a softmax
// over the keys of something element-wise in the scores, and p·v, with the
// results the last stage through reshapes/transposes; see layoutTailSplit
// in Rows.cpp) as one flash-style kernel: a block of 256 threads takes a
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
// Masked key tiles are skipped: when the softmax input is select(mask, t,
// fill) with `mask` a constant (a causal mask folded by dlc-fold-constants,
// or any fixed pattern: sliding windows too) and `fill` a constant at most
// -1e4, each query tile loops only over the keys some row of it may attend
// (keysAttended). A skipped key's weight is exp(fill - max) with max at
// least one of the row's attended scores: 0 in float as soon as that score
// exceeds fill + 104, which is what the mask's author meant by the fill.
// Every row must attend some key (else the softmax is uniform over fills).
//
// Anything else falls back to the per-row kernel (emitFlashAttention
// returns false before emitting anything): non-float dtypes, head dims over
// 128, an element-wise chain that reads the scores at another index, V or
// Q/K computed from a stage.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/Kernels.h"

#include "ir/DlcDialect.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <functional>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;
using namespace dlc::codegen::cuda;

namespace {

constexpr int64_t kThreads = 256, kBQ = 64, kRowsPerThread = kBQ / 16;
constexpr int64_t kMaxHeadDim = 128;

/// Whether `v` is computed (inside the kernel) from `target`.
bool dependsOn(const KernelContext &ctx, Value v, Value target,
               llvm::DenseMap<Value, bool> &memo) {
  if (v == target)
    return true;
  auto it = memo.find(v);
  if (it != memo.end())
    return it->second;
  bool result = false;
  Operation *op = v.getDefiningOp();
  if (op && !ctx.buffers.count(v))
    for (Value operand : op->getOperands())
      if (dependsOn(ctx, operand, target, memo)) {
        result = true;
        break;
      }
  memo[v] = result;
  return result;
}

/// Whether `x` reads `scores` only at its own index: every op between them
/// is element-wise at the scores' shape (other operands may broadcast).
bool elementwiseOf(const KernelContext &ctx, Value x, Value scores,
                   llvm::DenseMap<Value, bool> &memo) {
  if (x == scores)
    return true;
  if (!dependsOn(ctx, x, scores, memo))
    return true;
  Operation *op = x.getDefiningOp();
  if (!op || shapeOf(x) != shapeOf(scores))
    return false;
  if (!isa<ElementwiseOpInterface>(op))
    return false;
  for (Value operand : op->getOperands())
    if (dependsOn(ctx, operand, scores, memo) &&
        (shapeOf(operand) != shapeOf(scores) ||
         !elementwiseOf(ctx, operand, scores, memo)))
      return false;
  return true;
}

/// The index of a matmul operand of shape `s` (batch dims broadcast from
/// the result's `batch`) at row `r`, column `c` of its untransposed form.
Index operandIndex(Value v, const Index &batch, bool transposed,
                   const std::string &r, const std::string &c) {
  std::vector<int64_t> s = shapeOf(v);
  size_t rank = s.size();
  Index idx(rank, "0");
  size_t skip = batch.size() - (rank - 2);
  for (size_t d = 0; d + 2 < rank; ++d)
    idx[d] = s[d] == 1 ? "0" : batch[skip + d];
  idx[rank - 2] = transposed ? c : r;
  idx[rank - 1] = transposed ? r : c;
  return idx;
}

/// The constant that kernel argument `v` (a block argument of the fusion)
/// receives, if any.
DenseElementsAttr constantArgument(const KernelContext &ctx, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner()->getParentOp() != ctx.view.op)
    return {};
  auto constant = ctx.view.op->getOperand(arg.getArgNumber()).getDefiningOp<ConstantOp>();
  return constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : DenseElementsAttr();
}

/// For each query row i of the scores [..., Tq, Tk], the keys [first, last]
/// it attends, when the softmax input `x` is select(mask, t, fill) with a
/// constant mask broadcast over the batch dimensions, a constant fill of at
/// most -1e4, and every row attending a key; else nothing.
std::optional<std::vector<std::pair<int64_t, int64_t>>>
keysAttended(const KernelContext &ctx, Value x, int64_t Tq, int64_t Tk) {
  auto select = x.getDefiningOp<SelectOp>();
  if (!select)
    return std::nullopt;
  DenseElementsAttr mask = constantArgument(ctx, select->getOperand(0));
  DenseElementsAttr fill = constantArgument(ctx, select->getOperand(2));
  if (!mask || !fill || !fill.isSplat() || !mask.getElementType().isInteger(1) ||
      !isa<FloatType>(fill.getElementType()) ||
      !(fill.getSplatValue<APFloat>().convertToDouble() <= -1e4))
    return std::nullopt;
  ArrayRef<int64_t> m = mask.getType().getShape();
  size_t rank = m.size();
  if (rank < 2 || llvm::any_of(m.drop_back(2), [](int64_t d) { return d != 1; }) ||
      (m[rank - 2] != Tq && m[rank - 2] != 1) || (m[rank - 1] != Tk && m[rank - 1] != 1))
    return std::nullopt;
  std::vector<bool> bits;
  if (mask.isSplat())
    bits.assign(mask.getNumElements(), mask.getSplatValue<bool>());
  else
    for (bool b : mask.getValues<bool>())
      bits.push_back(b);
  std::vector<std::pair<int64_t, int64_t>> keys;
  for (int64_t i = 0; i < Tq; ++i) {
    int64_t row = m[rank - 2] == 1 ? 0 : i, first = -1, last = -1;
    for (int64_t j = 0; j < Tk; ++j)
      if (bits[row * m[rank - 1] + (m[rank - 1] == 1 ? 0 : j)]) {
        if (first < 0)
          first = j;
        last = j;
      }
    if (first < 0)
      return std::nullopt;
    keys.push_back({first, last});
  }
  return keys;
}

} // namespace

bool cuda::emitFlashAttention(KernelContext &ctx) {
  const auto &stages = ctx.analysis.stages;
  if (stages.size() != 3)
    return false;
  auto qk = dyn_cast<MatmulOp>(stages[0]);
  auto sm = dyn_cast<SoftmaxOp>(stages[1]);
  auto pv = dyn_cast<MatmulOp>(stages[2]);
  // The probabilities may reach p·v cast (--precision bf16/f16): the kernel
  // keeps them in float, which is closer to the f32 graph.
  Value probs = pv ? pv.getLhs() : Value();
  if (auto cast = probs ? probs.getDefiningOp<CastOp>() : CastOp())
    probs = cast.getX();
  if (!qk || !sm || !pv || qk.getTransposeA() || pv.getTransposeA() ||
      probs != sm.getResult())
    return false;
  Value S = qk.getResult(), X = sm->getOperand(0), P = sm.getResult(),
        O = pv.getResult();
  Value Q = qk.getLhs(), K = qk.getRhs(), V = pv.getRhs();
  std::vector<int64_t> sShape = shapeOf(S), oShape = shapeOf(O);
  size_t rank = sShape.size();
  if (rank < 2 || shapeOf(X) != sShape ||
      (sm.getAxis() != -1 && sm.getAxis() != (int64_t)rank - 1))
    return false;
  // Float arithmetic throughout: the softmax in f32, the products' operands
  // and results f32, bf16 or f16 (--precision), read and rounded as stored.
  auto floatStorage = [](Value v) {
    return llvm::is_contained({DType::F32, DType::BF16, DType::F16}, elementDType(v));
  };
  for (Value v : {Q, K, V, S, O})
    if (!floatStorage(v))
      return false;
  for (Value v : {X, P})
    if (elementDType(v) != DType::F32)
      return false;
  for (Value r : ctx.view.results)
    if (!floatStorage(r))
      return false;
  if (oShape.size() != rank ||
      !std::equal(sShape.begin(), sShape.end() - 1, oShape.begin()))
    return false;
  // Every result is the output through casts, reshapes and transposes.
  for (Value result : ctx.view.results) {
    Value v = result;
    while (v != O) {
      Operation *def = v.getDefiningOp();
      if (!def || !isa<ReshapeOp, TransposeOp, CastOp>(def))
        return false;
      v = def->getOperand(0);
    }
  }
  int64_t Tq = sShape[rank - 2], Tk = sShape[rank - 1];
  std::vector<int64_t> qShape = shapeOf(Q);
  int64_t D = qShape.back(), Dv = oShape.back();
  if (D < 1 || D > kMaxHeadDim || Dv < 1 || Dv > kMaxHeadDim || Tk < 1)
    return false;
  // The scores are read only at their own index, and Q, K, V not from a
  // stage.
  llvm::DenseMap<Value, bool> memoS, memoP, memoO;
  if (!elementwiseOf(ctx, X, S, memoS))
    return false;
  for (Value v : {Q, K, V})
    if (dependsOn(ctx, v, S, memoS) || dependsOn(ctx, v, P, memoP) ||
        dependsOn(ctx, v, O, memoO))
      return false;

  // The keys each query tile attends: [begin, end) per tile, when a
  // constant mask leaves some out.
  std::vector<int64_t> keyBegin, keyEnd;
  bool causal = false;
  if (auto keys = keysAttended(ctx, X, Tq, Tk)) {
    bool skips = false;
    causal = true;
    for (int64_t q0 = 0; q0 < Tq; q0 += kBQ) {
      int64_t begin = Tk, end = 0;
      for (int64_t i = q0; i < std::min(Tq, q0 + kBQ); ++i) {
        begin = std::min(begin, (*keys)[i].first);
        end = std::max(end, (*keys)[i].second + 1);
      }
      keyBegin.push_back(begin);
      keyEnd.push_back(end);
      skips |= begin > 0 || end < Tk;
      causal &= begin == 0 && end == std::min(Tk, q0 + kBQ);
    }
    if (!skips) {
      keyBegin.clear(), keyEnd.clear();
      causal = false;
    }
  }
  const int64_t BK = D <= 64 ? 64 : 32;
  const int64_t KPT = BK / 16, CPT = (Dv + 15) / 16, RPT = kRowsPerThread;
  const int64_t qStride = D + 1, kStride = D + 1, pStride = BK + 4;
  const int64_t smemFloats = kBQ * qStride + BK * kStride + BK * Dv + kBQ * pStride;
  std::vector<int64_t> batchShape(sShape.begin(), sShape.end() - 2);
  int64_t heads = product(batchShape), qTiles = (Tq + kBQ - 1) / kBQ;
  int64_t tiles = heads * qTiles;

  CodeWriter &out = ctx.out;
  ElementalEmitter elemental(ctx.target, out, ctx.buffers, ctx.statics, *ctx.checks);
  ctx.info.block[0] = kThreads;
  ctx.info.block[1] = ctx.info.block[2] = 1;
  ctx.info.grid[0] = (unsigned)std::min<int64_t>(tiles, 1 << 30);
  ctx.info.grid[1] = ctx.info.grid[2] = 1;
  ctx.info.dynamicSharedBytes = (uint32_t)(smemFloats * 4);

  auto line = [&](const std::string &s) { out.line(s); };
  auto fmt = [](const char *f, auto &&...args) {
    return llvm::formatv(f, std::forward<decltype(args)>(args)...).str();
  };
  line(fmt("// flash attention: {0} tile(s) of {1} queries ({2} (batch, head) x "
           "{3}), K/V tiles of {4} keys in shared memory, online softmax in "
           "float; Tq={5} Tk={6} D={7} Dv={8}",
           tiles, kBQ, heads, qTiles, BK, Tq, Tk, D, Dv));
  line("DLC_DYNAMIC_SHARED(dlc_smem);");
  line(fmt("float *sQ = (float *)dlc_smem;  // [{0}][{1}]", kBQ, qStride));
  line(fmt("float *sK = sQ + {0};  // [{1}][{2}]", kBQ * qStride, BK, kStride));
  line(fmt("float *sV = sK + {0};  // [{1}][{2}]", BK * kStride, BK, Dv));
  line(fmt("float *sP = sV + {0};  // [{1}][{2}]", BK * Dv, kBQ, pStride));
  line("const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;");
  out.open(fmt("for (int64_t tile = blockIdx.x; tile < {0}; tile += gridDim.x)", tiles));
  elemental.pushScope();
  line(fmt("const int64_t bh = tile / {0}, q0 = tile % {0} * {1};", qTiles, kBQ));
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
  strided("e", kBQ * D);
  line(fmt("const int r = e / {0}, d = e % {0};", D));
  line("const int64_t qi = q0 + r;");
  line("float x = 0.0f;");
  guarded(fmt("qi < {0}", Tq), "x", [&] {
    return elemental.emit(Q, operandIndex(Q, batch, false, "qi", "d"));
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

  if (causal) {
    line("// causal (the constant mask): keys after this tile's last query are skipped");
    line(fmt("const int64_t key_begin = 0, key_end = q0 + {0} < {1} ? q0 + {0} : {1};", kBQ, Tk));
  } else if (!keyBegin.empty()) {
    auto list = [](const std::vector<int64_t> &v) {
      std::string s;
      for (int64_t x : v)
        s += (s.empty() ? "" : ", ") + std::to_string(x);
      return s;
    };
    line("// the keys this tile's queries attend (the constant mask); the rest are skipped");
    line(fmt("const int64_t key_begins[] = {{{0}}, key_ends[] = {{{1}};", list(keyBegin),
             list(keyEnd)));
    line(fmt("const int64_t key_begin = key_begins[q0 / {0}], key_end = key_ends[q0 / {0}];",
             kBQ));
  } else {
    line(fmt("const int64_t key_begin = 0, key_end = {0};", Tk));
  }
  out.open(fmt("for (int64_t k0 = key_begin; k0 < key_end; k0 += {0})", BK));
  elemental.pushScope();
  line("__syncthreads();");
  line("// K and V rows of this key tile");
  strided("e", BK * D);
  line(fmt("const int j = e / {0}, d = e % {0};", D));
  line("const int64_t key = k0 + j;");
  line("float x = 0.0f;");
  guarded(fmt("key < {0}", Tk), "x", [&] {
    return elemental.emit(K, operandIndex(K, batch, qk.getTransposeB(), "d", "key"));
  });
  line(fmt("sK[j * {0} + d] = x;", kStride));
  close();
  strided("e", BK * Dv);
  line(fmt("const int j = e / {0}, c = e % {0};", Dv));
  line("const int64_t key = k0 + j;");
  line("float x = 0.0f;");
  guarded(fmt("key < {0}", Tk), "x", [&] {
    return elemental.emit(V, operandIndex(V, batch, pv.getTransposeB(), "key", "c"));
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
  // The output as p·v stores it (its dtype), then each cast of the tail.
  DType oType = elementDType(O);
  line("const float o_v = " + ctx.target.load(oType, ctx.target.store(oType, "acc[i][c] / l[i]")) +
       ";");
  Index preIndex = batch;
  preIndex.push_back("qi");
  preIndex.push_back("col");
  for (auto [r, result] : llvm::enumerate(ctx.view.results)) {
    SmallVector<Operation *> tail;
    std::string value = "o_v";
    for (Value v = result; v != O; v = v.getDefiningOp()->getOperand(0)) {
      if (isa<CastOp>(v.getDefiningOp())) { // a rounding to v's dtype
        DType to = elementDType(v);
        value = ctx.target.load(to, ctx.target.store(to, value));
        continue;
      }
      tail.push_back(v.getDefiningOp());
    }
    std::vector<int64_t> shape = oShape;
    Index index = indexThroughLayoutTail(out, tail, preIndex, shape);
    const Buffer &buffer = ctx.results[r];
    line(buffer.ptr + "[" + flatIndex(shape, index) + "] = " +
         ctx.target.store(buffer.dtype, value) + ";");
  }
  out.close();
  out.close();
  line("__syncthreads();");
  close(); // tiles
  return true;
}
