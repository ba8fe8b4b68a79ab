//===- Kernels.h - what the CUDA kernel emitters share ----------*- C++ -*-===//
//
// The state of one kernel being emitted, and the emitters per strategy of
// the kernel's #dlc.schedule. Internal to codegen/cuda.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_CUDA_KERNELS_H
#define DLC_CODEGEN_CUDA_KERNELS_H

#include "codegen/common/CodeWriter.h"
#include "codegen/common/Elemental.h"
#include "codegen/common/KernelAnalysis.h"
#include "codegen/cuda/CudaCodegen.h"
#include "codegen/cuda/CudaTarget.h"

#include "ir/DlcDialect.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace dlc::codegen::cuda {

struct KernelContext {
  const CudaTarget &target;
  CodeWriter &out;            ///< the kernel's body
  const KernelView &view;
  const KernelAnalysis &analysis;
  dlc::ScheduleAttr schedule;
  CudaKernelInfo &info;
  /// The kernel's arguments as buffers (a0, a1, ...); stages add theirs.
  llvm::DenseMap<mlir::Value, Buffer> buffers;
  /// Per result, the buffer it is written to (r0, r1, ...).
  std::vector<Buffer> results;
  /// Function-scope statics the elemental emitter asks for.
  std::string statics;
  /// File-scope declarations (global scratch) this kernel needs.
  std::string globals;
  /// Where the emitters register the checks they make on the data.
  DataChecks *checks = nullptr;
};

/// Emits `const int64_t iN = flat / stride % dim` for each dimension of
/// `shape` and returns their names (size-1 dimensions are "0").
Index decompose(CodeWriter &out, const std::string &flat,
                llvm::ArrayRef<int64_t> shape);

/// The global scratch of a kernel whose blocks each compute part of a
/// result (split-K, split reductions): `partials` elements of `type` for
/// their partial results, and `counters` arrival counts (zero at load, reset
/// by each last block). Returns the two arrays' names.
struct SplitScratch {
  std::string partials, arrivals;
};
SplitScratch declareSplitScratch(KernelContext &ctx, const std::string &type, int64_t partials,
                                 int64_t counters);

/// Emits the arrival of a block that has stored its partial results in
/// global scratch among the `blocks` blocks counted by `counter` (a
/// `__device__ unsigned` element, zero between launches): every block but
/// the last to arrive returns; the last sees the others' partials. The
/// caller resets the counter after reading them.
void emitLastArrival(CodeWriter &out, const std::string &counter, int64_t blocks);

/// Maps `index` into a value of `shape` through `tail`, the reshapes and
/// transposes between it and a result (listed from the result back), so a
/// result element can be stored where the layout ops put it. Updates
/// `shape` to the result's.
Index indexThroughLayoutTail(CodeWriter &out,
                             llvm::ArrayRef<mlir::Operation *> tail,
                             Index index, std::vector<int64_t> &shape);

/// The index of matmul operand `v` for the result's batch index `batch`
/// (NumPy broadcasting: size-1 batch dims read 0) at row `r`, column `c` of
/// its untransposed form.
Index matmulOperandIndex(mlir::Value v, const Index &batch, bool transposed,
                         const std::string &r, const std::string &c);
int64_t product(llvm::ArrayRef<int64_t> shape);

/// The buffer of `v` when it is one of the kernel's arguments, stored whole
/// in `dtype` (so its elements can be copied straight from memory, e.g. by
/// cp.async); nullptr otherwise.
const Buffer *argumentBuffer(const KernelContext &ctx, mlir::Value v, DType dtype);
/// A C condition: every buffer's address is 16-byte aligned (cp.async's
/// chunks; a caller's view into a larger buffer may not be).
std::string aligned16(llvm::ArrayRef<const Buffer *> buffers);
/// The copy of one 16-byte chunk from `src` to shared `dst` (both in
/// scope, `full` false past the operand: zeros): cp.async when `aligned`
/// holds, else byte by byte.
void emitChunkCopy(CodeWriter &out, const std::string &aligned);
/// Declares `lrow`, `q_lo` and `q_hi`: the row a lane gives an ldmatrix.x4
/// in its matrix q = lane / 8, and q's two bits.
void emitLdmatrixLanes(CodeWriter &out);

/// The accumulator type of a reduction over elements of `dtype`: double for
/// floats (as the oracle), long long for integers.
std::string accumulatorType(DType dtype);

void emitElementwiseKernel(KernelContext &ctx);
void emitMatmulKernel(KernelContext &ctx);
/// MmaMatmul.cpp: a `matmul` schedule with an `mma` instruction.
void emitMmaMatmulKernel(KernelContext &ctx);
void emitRowsKernel(KernelContext &ctx);
/// Attention.cpp: the flash-style kernel of an attention region, which the
/// rows strategy tries first; false (nothing emitted) when the region is not
/// one it supports.
bool emitFlashAttention(KernelContext &ctx);
/// SplitReduction.cpp: a rows kernel of few rows whose only stage is a
/// reduction with an element-wise epilogue, spread over blocks by chunks of
/// outputs and slices of the reduced elements; false (nothing emitted)
/// otherwise.
bool emitSplitReduction(KernelContext &ctx);

} // namespace dlc::codegen::cuda

#endif // DLC_CODEGEN_CUDA_KERNELS_H
