//===- Gemm.h - what the SIMT and tensor-core GEMM templates share -*- C++ -*-===//
//
// Both GEMM templates (Matmul.cpp: SIMT FMAs; MmaMatmul.cpp: mma.sync on
// tensor cores) stage BK-deep slices of the operands in shared memory,
// read through the elemental emitter (so transposed, broadcast and fused
// producer operands are read in place), and finish each output element
// with the kernel's epilogue from its accumulator. Internal to codegen/cuda.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_CUDA_GEMM_H
#define DLC_CODEGEN_CUDA_GEMM_H

#include "codegen/cuda/Kernels.h"

#include <functional>

namespace dlc::codegen::cuda {

/// The contraction a `matmul` kernel computes, as a GEMM (passes/TileRules.h
/// gemmDims): a matmul, or a convolution as an implicit GEMM whose lhs is
/// the weight ([m = output channels of a group, k = window], k contiguous)
/// and whose rhs is the images read through the window of each output pixel
/// ([k, n = N * OH * OW], zero in the padding), one batch per group.
struct GemmProblem {
  mlir::Operation *op = nullptr;
  // Op handles are pointers whose accessors are not const: mutable so that
  // a const problem can read its op.
  mutable MatmulOp matmul; ///< null for a convolution
  mutable Conv2dOp conv;   ///< null for a matmul
  /// The batches: a matmul's leading result dimensions; a convolution's
  /// [groups].
  std::vector<int64_t> batchShape;
  /// The contraction's own result ([N, O, OH, OW] for a convolution).
  std::vector<int64_t> resultShape;
  int64_t M = 0, N = 0, K = 0;
  DType dtype;

  mlir::Value lhs() const { return conv ? conv.getW() : matmul.getLhs(); }
  mlir::Value rhs() const { return conv ? conv.getX() : matmul.getRhs(); }
  bool transposed(bool isLhs) const {
    return matmul && (isLhs ? matmul.getTransposeA() : matmul.getTransposeB());
  }
  /// The index into the contraction's result of GEMM element (m, n) of
  /// `batch`.
  Index resultIndex(const Index &batch, const std::string &m, const std::string &n) const;
};
GemmProblem gemmProblem(const KernelContext &ctx);

/// Emits the staging of one operand's slice at k = `kOrigin` (a variable or
/// expression): `rows` x `depth` elements (rows of the output's m for the
/// lhs, n for the rhs), spread over `threads` threads so that consecutive
/// threads read consecutive elements of the operand's contiguous dimension;
/// thread-local element `l` of the slice is its l-th. Each thread has `kk`
/// (0..depth), `rr` (0..rows) and `l` in scope when `store(value)` is called
/// with the element's value (in the compute type) and `store("0")` outside
/// the problem; `store` returns the statement.
void emitOperandSlice(KernelContext &ctx, ElementalEmitter &elemental,
                      const GemmProblem &problem, const Index &batch, bool isLhs,
                      int64_t rows, int64_t depth, int64_t threads,
                      const std::function<std::string(const std::string &)> &store,
                      const std::string &kOrigin = "k0");

/// The same loop over a thread's elements of a slice (`kk`, `rr`, `l` in
/// scope) without reading the operand: `statement` stores element `l` of a
/// slice prefetched into registers.
void emitSliceLoop(KernelContext &ctx, const GemmProblem &problem, bool isLhs, int64_t rows,
                   int64_t depth, int64_t threads, const std::string &statement);

/// Emits the epilogue of one output element: the variables `m` and `n` (in
/// range) are in scope and `accumulator` is its float (or double, or
/// integer) accumulator. The matmul's element is the accumulator rounded to
/// the matmul's dtype; the kernel's results are computed from it and stored
/// through their layout tails.
void emitGemmEpilogue(KernelContext &ctx, ElementalEmitter &elemental,
                      const GemmProblem &problem, const Index &batch,
                      const std::string &accumulator);

/// The tensor-core templates' geometry (MmaMatmul.cpp, MmaPipelined.cpp):
/// the schedule's block tile BM x BN x BK and warp tile WM x WN of MT x NT
/// mma.sync instructions, each k-step KI deep.
struct MmaGeometry {
  std::string mma, type; ///< "m16n8k16.bf16", "bf16"
  bool tf32 = false;
  int64_t BM, BN, BK, WM, WN, MT, NT, KI, warpsN, threads;
};
MmaGeometry mmaGeometry(const KernelContext &ctx);

/// Declares a thread's warp, lane and fragment coordinates (gid, tig), its
/// warp tile's origin (wm0, wn0), its block tile's (m0, n0), and its float
/// accumulators acc[MT][NT][4], zeroed; returns the batch index.
Index emitMmaPrologue(KernelContext &ctx, const GemmProblem &problem, const MmaGeometry &g);

/// The warp tile's MT x NT instructions on the fragments a[MT][4], b[NT][2].
void emitMmaProducts(CodeWriter &out, const MmaGeometry &g);

/// Every accumulator's element through the GEMM epilogue (emitGemmEpilogue).
void emitMmaEpilogue(KernelContext &ctx, ElementalEmitter &elemental,
                     const GemmProblem &problem, const Index &batch, const MmaGeometry &g);

/// MmaPipelined.cpp: the tensor-core GEMM whose operands are kernel
/// arguments of the instruction's type, copied by cp.async into a ring of
/// shared-memory stages; false (nothing emitted) for other operands.
bool emitPipelinedMmaMatmul(KernelContext &ctx);

} // namespace dlc::codegen::cuda

#endif // DLC_CODEGEN_CUDA_GEMM_H
