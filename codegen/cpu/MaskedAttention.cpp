//===- MaskedAttention.cpp - attention products that skip masked keys ------===//
//
// See MaskedAttention.h. The tiles of queries are at multiples of the tile
// within each batch element's Tq rows whatever rows a call gets, so that
// the keys a row's products sum over never depend on the split.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/MaskedAttention.h"

#include "codegen/common/Elemental.h"

#include "ir/DlcDialect.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

/// GPT-2's block, T = 128 and 1024: the attention kernel's time with tiles
/// of 16, 32 and 64 queries, 32 best or as good (fewer skipped keys with
/// larger tiles, more and smaller library calls with smaller ones).
static constexpr int64_t kQueryTile = 32;

/// Whether `x` is `scores` through element-wise ops of the scores' shape,
/// each value on the way read once and the ops' other operands kernel
/// arguments (a scale, a bias): then the scores reach nothing else.
static bool onlyThroughElementwise(const KernelView &kernel, Value x, Value scores) {
  const std::vector<int64_t> shape = shapeOf(scores);
  if (!x.hasOneUse())
    return false;
  while (x != scores) {
    Operation *op = x.getDefiningOp();
    if (!op || !isa<ElementwiseOpInterface>(op) || shapeOf(x) != shape)
      return false;
    Value next;
    for (Value operand : op->getOperands()) {
      if (llvm::is_contained(kernel.args, operand))
        continue;
      if (next)
        return false;
      next = operand;
    }
    if (!next || !next.hasOneUse())
      return false;
    x = next;
  }
  return true;
}

std::optional<MaskedAttention>
dlc::codegen::matchMaskedAttention(const KernelView &kernel, const KernelAnalysis &analysis) {
  const auto &stages = analysis.stages;
  for (size_t i = 1; i + 1 < stages.size(); ++i) {
    auto softmax = dyn_cast<SoftmaxOp>(stages[i]);
    auto pv = dyn_cast<MatmulOp>(stages[i + 1]);
    if (!softmax || !pv || pv.getTransposeA() || pv.getLhs() != softmax.getResult())
      continue;
    Value x = softmax->getOperand(0);
    auto select = x.getDefiningOp<SelectOp>();
    std::vector<int64_t> shape = shapeOf(x);
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (!select || rank < 2 || (softmax.getAxis() != -1 && softmax.getAxis() != rank - 1))
      continue;
    // The scores: the one stage result the select's kept operand reads.
    auto qk = dyn_cast<MatmulOp>(stages[i - 1]);
    if (!qk || qk.getTransposeA() || shapeOf(qk.getResult()) != shape ||
        !onlyThroughElementwise(kernel, select->getOperand(1), qk.getResult()))
      continue;
    auto libraryGemm = [](MatmulOp m) {
      Type t = cast<ShapedType>(m.getLhs().getType()).getElementType();
      return (t.isF32() || t.isF64()) && cast<ShapedType>(m.getRhs().getType()).getElementType() == t;
    };
    if (!libraryGemm(qk) || !libraryGemm(pv))
      continue;
    KeyTiles keys = maskedKeyTiles(kernel, x, shape[rank - 2], shape[rank - 1], kQueryTile);
    if (!keys.skips())
      return std::nullopt;
    return MaskedAttention{qk, pv, softmax, std::move(keys)};
  }
  return std::nullopt;
}

void dlc::codegen::emitTileKeys(CodeWriter &out, const KeyTiles &tiles, const std::string &tile,
                                int64_t keys) {
  const std::string size = std::to_string(tiles.tile), count = std::to_string(keys);
  if (tiles.causal) {
    // MaskedKeys.h's causal: [0, min(Tk, q0 + tile)), q0 + tile past Tq too.
    out.line("// causal (the constant mask): no key after the tile's last query");
    out.line("const int64_t tileEnd = (" + tile + " + 1) * " + size + ";");
    out.line("const int64_t k0 = 0, k1 = tileEnd < " + count + " ? tileEnd : " + count + ";");
    return;
  }
  std::string begins, ends;
  for (size_t t = 0; t < tiles.begin.size(); ++t) {
    begins += (t ? ", " : "") + std::to_string(tiles.begin[t]);
    ends += (t ? ", " : "") + std::to_string(tiles.end[t]);
  }
  out.line("// the keys each tile's queries attend (the constant mask)");
  out.line("static const int64_t keyBegin[] = {" + begins + "}, keyEnd[] = {" + ends + "};");
  out.line("const int64_t k0 = keyBegin[" + tile + "], k1 = keyEnd[" + tile + "];");
}
