//===- MaskedKeys.cpp - the keys a constant attention mask leaves in ------===//
//
// See MaskedKeys.h.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/MaskedKeys.h"

#include "ir/DlcDialect.h"

#include <algorithm>
#include <optional>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

/// The constant that kernel argument `v` (a block argument of the kernel's
/// op) receives, if any.
static DenseElementsAttr constantArgument(const KernelView &kernel, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner()->getParentOp() != kernel.op)
    return {};
  auto constant = kernel.op->getOperand(arg.getArgNumber()).getDefiningOp<ConstantOp>();
  return constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : DenseElementsAttr();
}

/// For each query row i, the keys [first, last] it attends (see
/// maskedKeyTiles); nothing where the mask is not such a constant.
static std::optional<std::vector<std::pair<int64_t, int64_t>>>
keysAttended(const KernelView &kernel, Value x, int64_t Tq, int64_t Tk) {
  auto select = x.getDefiningOp<SelectOp>();
  if (!select)
    return std::nullopt;
  DenseElementsAttr mask = constantArgument(kernel, select->getOperand(0));
  DenseElementsAttr fill = constantArgument(kernel, select->getOperand(2));
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

KeyTiles dlc::codegen::maskedKeyTiles(const KernelView &kernel, Value x, int64_t Tq, int64_t Tk,
                                      int64_t tile) {
  KeyTiles tiles;
  tiles.tile = tile;
  auto keys = keysAttended(kernel, x, Tq, Tk);
  if (!keys || tile < 1)
    return tiles;
  bool skips = false, causal = true;
  for (int64_t q0 = 0; q0 < Tq; q0 += tile) {
    int64_t begin = Tk, end = 0;
    for (int64_t i = q0; i < std::min(Tq, q0 + tile); ++i) {
      begin = std::min(begin, (*keys)[i].first);
      end = std::max(end, (*keys)[i].second + 1);
    }
    tiles.begin.push_back(begin);
    tiles.end.push_back(end);
    skips |= begin > 0 || end < Tk;
    causal &= begin == 0 && end == std::min(Tk, q0 + tile);
  }
  if (!skips) {
    tiles.begin.clear(), tiles.end.clear();
    causal = false;
  }
  tiles.causal = causal;
  return tiles;
}
