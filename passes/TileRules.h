//===- TileRules.h - what dlc-tile decides, for code generation -*- C++ -*-===//
//
// The rules of `dlc-tile` that code generation also needs to read the
// schedule back: which kernels are a GEMM with an epilogue the tiled
// matmul kernel can fuse, and the architectures' figures the cost model
// uses. The pass (passes/Tile.cpp) is the only place that chooses.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_TILERULES_H
#define DLC_PASSES_TILERULES_H

#include "mlir/IR/Operation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace dlc {

/// Whether every value of `kernel` computed from `stage`'s result is
/// element-wise at its shape (bias, activation, residual, casts, an
/// optimizer's update) — with `layoutTail`, except a tail of reshapes and
/// transposes feeding the yield — and every result depends on the stage:
/// then each result element is computed from the stage's element at the
/// same index alone.
bool elementwiseEpilogue(mlir::Operation *kernel, mlir::Operation *stage, bool layoutTail);

/// A kernel whose only non-elemental op is one contraction the GEMM
/// templates compute — a matmul, or a conv2d over NCHW (an implicit GEMM,
/// gemmDims) — every value computed from its result is element-wise at its
/// shape (bias, activation, residual, casts) except a tail of reshapes and
/// transposes feeding the yield, and every result depends on it. Returns
/// the contraction, else null.
mlir::Operation *fusableContraction(mlir::Operation *kernel);

/// A contraction as a GEMM: batches of [m x k] x [k x n]. A matmul's are its
/// own; a conv2d's is the implicit GEMM of each group: m = output channels
/// of the group, n = output pixels of every image (N * OH * OW, the batch
/// folded in, as cuDNN's GEMM-N: a 7x7 image, or a weight gradient's 3x3
/// "image", would fill a tile poorly alone), k = the window (C / groups *
/// KH * KW), batch = groups.
struct GemmDims {
  int64_t m = 0, n = 0, k = 0, batch = 1;
};
GemmDims gemmDims(mlir::Operation *contraction);

/// The figures of a CUDA architecture the cost model uses.
struct CudaArch {
  const char *name;         ///< "sm_90"
  int sms;                  ///< multiprocessors (the SXM part)
  int maxThreadsPerSm;      ///< resident threads
  int registersPerSm;       ///< 32-bit registers
  int sharedPerSm;          ///< bytes of shared memory per SM
  int sharedPerBlock;       ///< bytes a block gets without opting in
  double fp32Flops;         ///< SIMT peak, FLOP/s
  double dramBytesPerSecond;
  double tf32Flops;         ///< dense tensor-core peak on TF32 operands
  double halfFlops;         ///< dense tensor-core peak on BF16/F16 operands
};

/// The tensor-core instruction (PTX `mma.sync`, f32 accumulation) a matmul
/// or convolution runs on: "m16n8k16.bf16" or "m16n8k16.f16" for 16-bit float operands,
/// "m16n8k8.tf32" for f32 operands whose `precision` is tf32; empty for
/// everything else (SIMT FMAs: exact f32, f64, integers).
std::string mmaInstruction(mlir::Operation *contraction);

/// sm_80 (A100) or sm_90 (H100); null for anything else.
const CudaArch *cudaArch(llvm::StringRef arch);

/// The dlc-compile pipeline followed by dlc-tile for `target`
/// ("cuda:sm_90"): what `dlc compile --target cuda:...` runs.
void buildCudaCompilePipeline(mlir::OpPassManager &pm, llvm::StringRef target);

} // namespace dlc

#endif // DLC_PASSES_TILERULES_H
