//===- AttentionRegion.cpp - matching an attention region -----------------===//
//
// See AttentionRegion.h. Masked key tiles: each query tile loops only over
// the keys some row of it may attend (codegen/common/MaskedKeys.h says when
// a constant mask lets it skip the others).
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

  // The keys each query tile attends, when a constant mask leaves some out.
  r.keys = maskedKeyTiles(ctx.view, X, Tq, Tk, kFlashQueryTile);
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
  if (r.keys.causal) {
    out.line("// causal (the constant mask): keys after this tile's last query are skipped");
    out.line(fmt("const int64_t key_begin = 0, key_end = q0 + {0} < {1} ? q0 + {0} : {1};",
                 kFlashQueryTile, r.Tk));
  } else if (r.keys.skips()) {
    auto list = [](const std::vector<int64_t> &v) {
      std::string s;
      for (int64_t x : v)
        s += (s.empty() ? "" : ", ") + std::to_string(x);
      return s;
    };
    out.line("// the keys this tile's queries attend (the constant mask); the rest are skipped");
    out.line(fmt("const int64_t key_begins[] = {{{0}}, key_ends[] = {{{1}};", list(r.keys.begin),
                 list(r.keys.end)));
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
