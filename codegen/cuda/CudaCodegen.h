//===- CudaCodegen.h - CUDA C++ for a planned graph -------------*- C++ -*-===//
//
// Emits one CUDA source for all kernels of a function that went through the
// dlc-compile pipeline and dlc-tile (every kernel carries a dlc.schedule):
// per kernel an `extern "C" __global__` function whose parameters are one
// pointer per argument (the kernel's operands, then its results), and its
// launch dimensions. The emitter per strategy lives beside this file:
// Elementwise.cpp, Matmul.cpp, Rows.cpp (reductions, normalisations,
// softmax, attention rows, losses, convolution, pooling).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_CUDA_CUDACODEGEN_H
#define DLC_CODEGEN_CUDA_CUDACODEGEN_H

#include "codegen/common/DataChecks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::codegen {

struct CudaKernelArg {
  std::string name;
  bool write = false; ///< a result (else an operand, read only)
  uint64_t bytes = 0;
};

struct CudaKernelInfo {
  mlir::Operation *op = nullptr; ///< the kernel's top-level op
  std::string entry;             ///< the symbol, "k3_layer_norm"
  std::string strategy;          ///< from the schedule
  std::vector<CudaKernelArg> args;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  uint32_t dynamicSharedBytes = 0;
  /// The kernel checks its data (DataChecks.h): its last parameter is the
  /// status words (not in `args`).
  bool checks = false;
};

struct CudaModuleSource {
  std::string source; ///< the whole .cu: prelude, then every kernel
  std::vector<CudaKernelInfo> kernels;
  /// The checks the kernels make, numbered for the module (Module.checks).
  DataChecks checks;
};

/// Emits the kernels of `func` in block order. Fails (with an error at the
/// kernel) when a kernel has no dlc.schedule or one codegen cannot honour.
mlir::LogicalResult emitCudaModule(mlir::func::FuncOp func,
                                   CudaModuleSource &out);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_CUDA_CUDACODEGEN_H
