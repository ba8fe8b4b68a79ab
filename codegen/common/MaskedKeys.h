//===- MaskedKeys.h - the keys a constant attention mask leaves in -*- C++ -*-===//
//
// Attention whose softmax input is select(mask, t, fill), with `mask` a
// constant (a causal mask folded by dlc-fold-constants, or any fixed
// pattern: sliding windows too) and `fill` a constant of at most -1e4,
// gives the keys a row does not attend a weight of exp(fill - max), max at
// least one of the row's attended scores: 0 in float as soon as that score
// exceeds fill + 104, which is what the mask's author meant by the fill.
// Both targets skip those keys, per tile of queries: the CUDA flash kernels
// (codegen/cuda/AttentionRegion.cpp) and the CPU's products
// (codegen/cpu/MaskedAttention.cpp). Every row must attend some key (else
// the softmax is uniform over fills).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_COMMON_MASKEDKEYS_H
#define DLC_CODEGEN_COMMON_MASKEDKEYS_H

#include "codegen/common/KernelAnalysis.h"

#include <cstdint>
#include <vector>

namespace dlc::codegen {

/// Per tile of `tile` query rows (tile t: rows [t * tile, min(Tq, (t + 1) *
/// tile))), the keys [begin, end) some row of it attends.
struct KeyTiles {
  int64_t tile = 0;
  /// Empty when every tile attends every key (nothing to skip).
  std::vector<int64_t> begin, end;
  /// Every tile attends [0, min(Tk, its last row + 1)): a causal mask.
  bool causal = false;

  bool skips() const { return !begin.empty(); }
};

/// The key tiles of scores [..., Tq, Tk] whose softmax input `x` (a value
/// of `kernel`'s body) is select(mask, t, fill) with a constant mask
/// broadcast over the batch dimensions ([..., Tq or 1, Tk or 1]), a
/// constant fill of at most -1e4 and every row attending a key; otherwise,
/// or when no tile skips a key, tiles that skip nothing.
KeyTiles maskedKeyTiles(const KernelView &kernel, mlir::Value x, int64_t Tq, int64_t Tk,
                        int64_t tile);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_COMMON_MASKEDKEYS_H
