//===- MaskedAttention.h - attention products that skip masked keys -*- C++ -*-===//
//
// A CPU kernel holding attention whose scores reach the softmax through a
// constant mask (codegen/common/MaskedKeys.h: a causal mask, a sliding
// window) multiplies only the keys each tile of queries attends: q·kᵀ
// computes those columns of the scores (the others reach only the select,
// which drops them) and p·v sums over those keys (the others' weights are
// 0). GPT-2's causal attention does about half the products.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_CPU_MASKEDATTENTION_H
#define DLC_CODEGEN_CPU_MASKEDATTENTION_H

#include "codegen/common/CodeWriter.h"
#include "codegen/common/MaskedKeys.h"

#include <optional>

namespace dlc::codegen {

struct MaskedAttention {
  /// The products: scores = q·kᵀ, and p·v of the softmax's result.
  mlir::Operation *qk = nullptr, *pv = nullptr;
  /// The softmax between them: over the attended keys only.
  mlir::Operation *softmax = nullptr;
  KeyTiles keys;
};

/// The kernel's masked attention, if it has one whose products can skip
/// keys: q·kᵀ and p·v f32 or f64 stages (the library GEMMs), neither with
/// A transposed; the scores read once, through element-wise ops of their
/// own shape on the select's kept operand; the softmax over the keys.
std::optional<MaskedAttention> matchMaskedAttention(const KernelView &kernel,
                                                    const KernelAnalysis &analysis);

/// Declares `k0` and `k1`, the keys [k0, k1) that query tile `tile` (a C
/// expression) attends, of `keys` in all.
void emitTileKeys(CodeWriter &out, const KeyTiles &tiles, const std::string &tile,
                  int64_t keys);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_CPU_MASKEDATTENTION_H
