//===- AttentionRegion.cpp - matching an attention region -----------------===//
//
// See AttentionRegion.h. Masked key tiles: when the softmax input is
// select(mask, t, fill) with `mask` a constant (a causal mask folded by
// dlc-fold-constants, or any fixed pattern: sliding windows too) and `fill`
// a constant at most -1e4, each query tile loops only over the keys some row
// of it may attend (keysAttended). A skipped key's weight is exp(fill - max)
// with max at least one of the row's attended scores: 0 in float as soon as
// that score exceeds fill + 104, which is what the mask's author meant by
// the fill. Every row must attend some key (else the softmax is uniform
// over fills).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/AttentionRegion.h"

#include "ir/DlcDialect.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;
using namespace dlc::codegen::cuda;

namespace {

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

std::optional<AttentionRegion> cuda::matchAttentionRegion(const KernelContext &ctx) {
  const auto &stages = ctx.analysis.stages;
  if (stages.size() != 3)
    return std::nullopt;
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
    return std::nullopt;
  AttentionRegion r;
  r.qk = qk, r.pv = pv, r.softmax = sm;
  Value S = r.S = qk.getResult(), X = r.X = sm->getOperand(0), P = r.P = sm.getResult(),
        O = r.O = pv.getResult();
  Value Q = r.Q = qk.getLhs(), K = r.K = qk.getRhs(), V = r.V = pv.getRhs();
  std::vector<int64_t> sShape = shapeOf(S), oShape = shapeOf(O);
  size_t rank = sShape.size();
  if (rank < 2 || shapeOf(X) != sShape ||
      (sm.getAxis() != -1 && sm.getAxis() != (int64_t)rank - 1))
    return std::nullopt;
  // Float arithmetic throughout: the softmax in f32, the products' operands
  // and results f32, bf16 or f16 (--precision), read and rounded as stored.
  auto floatStorage = [](Value v) {
    return llvm::is_contained({DType::F32, DType::BF16, DType::F16}, elementDType(v));
  };
  for (Value v : {Q, K, V, S, O})
    if (!floatStorage(v))
      return std::nullopt;
  for (Value v : {X, P})
    if (elementDType(v) != DType::F32)
      return std::nullopt;
  for (Value r : ctx.view.results)
    if (!floatStorage(r))
      return std::nullopt;
  if (oShape.size() != rank ||
      !std::equal(sShape.begin(), sShape.end() - 1, oShape.begin()))
    return std::nullopt;
  // Every result is the output through casts, reshapes and transposes.
  for (Value result : ctx.view.results) {
    Value v = result;
    while (v != O) {
      Operation *def = v.getDefiningOp();
      if (!def || !isa<ReshapeOp, TransposeOp, CastOp>(def))
        return std::nullopt;
      v = def->getOperand(0);
    }
  }
  int64_t Tq = r.Tq = sShape[rank - 2], Tk = r.Tk = sShape[rank - 1];
  int64_t D = r.D = shapeOf(Q).back(), Dv = r.Dv = oShape.back();
  r.sShape = sShape, r.oShape = oShape;
  r.batchShape.assign(sShape.begin(), sShape.end() - 2);
  if (D < 1 || D > kFlashMaxHeadDim || Dv < 1 || Dv > kFlashMaxHeadDim || Tk < 1)
    return std::nullopt;
  // The scores are read only at their own index, and Q, K, V not from a
  // stage.
  llvm::DenseMap<Value, bool> memoS, memoP, memoO;
  if (!elementwiseOf(ctx, X, S, memoS))
    return std::nullopt;
  for (Value v : {Q, K, V})
    if (dependsOn(ctx, v, S, memoS) || dependsOn(ctx, v, P, memoP) ||
        dependsOn(ctx, v, O, memoO))
      return std::nullopt;

  // The keys each query tile attends: [begin, end) per tile, when a
  // constant mask leaves some out.
  std::vector<int64_t> &keyBegin = r.keyBegin, &keyEnd = r.keyEnd;
  bool &causal = r.causal;
  if (auto keys = keysAttended(ctx, X, Tq, Tk)) {
    bool skips = false;
    causal = true;
    for (int64_t q0 = 0; q0 < Tq; q0 += kFlashQueryTile) {
      int64_t begin = Tk, end = 0;
      for (int64_t i = q0; i < std::min(Tq, q0 + kFlashQueryTile); ++i) {
        begin = std::min(begin, (*keys)[i].first);
        end = std::max(end, (*keys)[i].second + 1);
      }
      keyBegin.push_back(begin);
      keyEnd.push_back(end);
      skips |= begin > 0 || end < Tk;
      causal &= begin == 0 && end == std::min(Tk, q0 + kFlashQueryTile);
    }
    if (!skips) {
      keyBegin.clear(), keyEnd.clear();
      causal = false;
    }
  }
  return r;
}

void cuda::setFlashLaunch(KernelContext &ctx, int64_t threads, int64_t tiles,
                          int64_t sharedBytes) {
  ctx.info.block[0] = (unsigned)threads;
  ctx.info.block[1] = ctx.info.block[2] = 1;
  ctx.info.grid[0] = (unsigned)std::min<int64_t>(tiles, 1 << 30);
  ctx.info.grid[1] = ctx.info.grid[2] = 1;
  ctx.info.dynamicSharedBytes = (uint32_t)sharedBytes;
}

void cuda::emitKeyRange(CodeWriter &out, const AttentionRegion &r) {
  auto fmt = [](const char *f, auto &&...args) {
    return llvm::formatv(f, std::forward<decltype(args)>(args)...).str();
  };
  if (r.causal) {
    out.line("// causal (the constant mask): keys after this tile's last query are skipped");
    out.line(fmt("const int64_t key_begin = 0, key_end = q0 + {0} < {1} ? q0 + {0} : {1};",
                 kFlashQueryTile, r.Tk));
  } else if (!r.keyBegin.empty()) {
    auto list = [](const std::vector<int64_t> &v) {
      std::string s;
      for (int64_t x : v)
        s += (s.empty() ? "" : ", ") + std::to_string(x);
      return s;
    };
    out.line("// the keys this tile's queries attend (the constant mask); the rest are skipped");
    out.line(fmt("const int64_t key_begins[] = {{{0}}, key_ends[] = {{{1}};", list(r.keyBegin),
                 list(r.keyEnd)));
    out.line(fmt("const int64_t key_begin = key_begins[q0 / {0}], key_end = key_ends[q0 / {0}];",
                 kFlashQueryTile));
  } else {
    out.line(fmt("const int64_t key_begin = 0, key_end = {0};", r.Tk));
  }
}

void cuda::emitAttentionOutput(KernelContext &ctx, const AttentionRegion &r, const Index &batch,
                               const std::string &value) {
  // The output as p·v stores it (its dtype), then each cast of the tail.
  DType oType = elementDType(r.O);
  std::string rounded = ctx.target.load(oType, ctx.target.store(oType, value));
  Index preIndex = batch;
  preIndex.push_back("qi");
  preIndex.push_back("col");
  for (auto [i, result] : llvm::enumerate(ctx.view.results)) {
    SmallVector<Operation *> tail;
    std::string v = rounded;
    for (Value at = result; at != r.O; at = at.getDefiningOp()->getOperand(0)) {
      if (isa<CastOp>(at.getDefiningOp())) { // a rounding to at's dtype
        DType to = elementDType(at);
        v = ctx.target.load(to, ctx.target.store(to, v));
        continue;
      }
      tail.push_back(at.getDefiningOp());
    }
    std::vector<int64_t> shape = r.oShape;
    Index index = indexThroughLayoutTail(ctx.out, tail, preIndex, shape);
    const Buffer &buffer = ctx.results[i];
    ctx.out.line(buffer.ptr + "[" + flatIndex(shape, index) + "] = " +
                 ctx.target.store(buffer.dtype, v) + ";");
  }
}
