//===- LibraryGemm.h - kernels a vendor GEMM library computes ---*- C++ -*-===//
//
// A CUDA kernel that is one matmul plus an epilogue cuBLASLt can apply
// itself — a bias along the result's columns, a residual of the result's
// shape and dtype, ReLU or tanh-GELU, casts between float types — runs as
// one cublasLtMatmul call (module format 1.4, Kernel.library_gemm), its
// generated code kept as the fallback. dlc-tile marks such kernels
// `implementation = library`; the CUDA back end writes the call from the
// same match, so the two never disagree.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_LIBRARYGEMM_H
#define DLC_PASSES_LIBRARYGEMM_H

#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace dlc {

/// Per batch b: D[b] = act(op(A[b]) x op(B[b]) + bias + C[b]), row-major,
/// op(A) m x k and op(B) k x n, accumulated in f32.
struct LibraryGemm {
  enum class Activation { none, relu, geluTanh };
  /// Kernel argument indices (the kernel's operands, then its results).
  unsigned a = 0, b = 0, d = 0;
  int bias = -1, c = -1; ///< -1: none
  bool transposeA = false, transposeB = false;
  /// f32 operands multiplied in TF32 (--precision tf32).
  bool tf32 = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  /// Elements between consecutive batches of A and B (D and C: m * n).
  int64_t strideA = 0, strideB = 0;
  Activation activation = Activation::none;
  mlir::Type operandType, resultType, biasType;

  /// "bias + GELU + residual": the epilogue, for schedules' reasons.
  std::string epilogue() const;
};

/// The library GEMM `kernel` (a dlc.fusion or a lone op) computes, if it is
/// one: its only stage a matmul of two kernel arguments of one float type
/// (f32, bf16, f16), whose batch dimensions are equal on both sides or
/// folded into m (a 2-D rhs); every other op a cast, the bias add (a 1-D
/// kernel argument of n values of the result's type), the residual add
/// (a kernel argument of the result's shape and type) or one activation,
/// in an order cuBLASLt's epilogue computes (act(x + bias + C)); and the
/// kernel's one result that chain's end, at the matmul's shape; no value on
/// the way of a narrower type than the result's (cuBLASLt rounds once),
/// unless the module's --precision mode made it so.
std::optional<LibraryGemm> matchLibraryGemm(mlir::Operation *kernel);

} // namespace dlc

#endif // DLC_PASSES_LIBRARYGEMM_H
