//===- AttentionRegion.h - what the flash attention kernels share -*- C++ -*-===//
//
// An attention region (a `rows` kernel whose stages are q·kᵀ, a softmax
// over the keys of something element-wise in the scores, and p·v, with the
// results the output through casts, reshapes and transposes), matched once
// for both flash kernels: the SIMT one (Attention.cpp, float) and the
// tensor-core one (AttentionMma.cpp, bf16/f16 products). Also the parts of
// their code that are the same: the keys a query tile attends when a
// constant mask leaves some out, and the output's store through the layout
// tail. Internal to codegen/cuda.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_CUDA_ATTENTIONREGION_H
#define DLC_CODEGEN_CUDA_ATTENTIONREGION_H

#include "codegen/common/MaskedKeys.h"
#include "codegen/cuda/Kernels.h"

#include <optional>

namespace dlc::codegen::cuda {

/// Query tile of both flash kernels, and the head dims they take.
constexpr int64_t kFlashQueryTile = 64, kFlashMaxHeadDim = 128;

struct AttentionRegion {
  MatmulOp qk, pv;
  SoftmaxOp softmax;
  /// q·kᵀ's operands and result S; X the softmax's input (element-wise in
  /// S), P its result; V p·v's rhs and O its result.
  mlir::Value Q, K, V, S, X, P, O;
  std::vector<int64_t> sShape, oShape, batchShape;
  int64_t Tq = 0, Tk = 0, D = 0, Dv = 0;
  /// Per query tile of kFlashQueryTile queries, the keys its rows attend
  /// when a constant mask leaves some out.
  KeyTiles keys;
};

/// The region of the kernel, or nothing when it is not one either flash
/// kernel supports (then the per-row kernel runs it).
std::optional<AttentionRegion> matchAttentionRegion(const KernelContext &ctx);

/// The launch of a flash kernel: one block of `threads` per query tile
/// (grid-stride beyond 2^30 tiles), `sharedBytes` of dynamic shared memory.
void setFlashLaunch(KernelContext &ctx, int64_t threads, int64_t tiles, int64_t sharedBytes);

/// Emits `key_begin` and `key_end` for the query tile at `q0`.
void emitKeyRange(CodeWriter &out, const AttentionRegion &region);

/// Stores output element (`qi`, `col`) of O, whose float value is `value`:
/// rounded to O's dtype, then through each result's casts and layout tail.
void emitAttentionOutput(KernelContext &ctx, const AttentionRegion &region, const Index &batch,
                         const std::string &value);

/// AttentionMma.cpp: the region on tensor cores when its products are bf16
/// or f16 (--precision) with head dims that are whole instructions; false
/// (nothing emitted) otherwise.
bool emitMmaFlashAttention(KernelContext &ctx, const AttentionRegion &region);

} // namespace dlc::codegen::cuda

#endif // DLC_CODEGEN_CUDA_ATTENTIONREGION_H
