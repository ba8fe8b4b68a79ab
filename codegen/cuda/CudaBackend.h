//===- CudaBackend.h - a planned function as a CUDA module ------*- C++ -*-===//
//
// The CUDA backend of `dlc compile --target cuda:sm_80,sm_90`: dlc-tile
// must have given every kernel a schedule. One CUDA source for the module
// (CudaCodegen.h), compiled by NVRTC for every requested architecture
// (a cubin and PTX section each) and by the host compiler for cuda-emu (a
// shared_object section), so the same module runs on a GPU and, without
// one, on cuda-emu. Each kernel carries the whole source (for JIT on other
// architectures; its hash keys the runtime's cache once for all kernels),
// its entry, argument list and launch dimensions. $DLC_KERNEL_DUMP_DIR,
// when set, receives the source as <graph>.cu.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_CUDA_CUDABACKEND_H
#define DLC_CODEGEN_CUDA_CUDABACKEND_H

#include "support/ParamSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace dlc::codegen {

/// Parses "cuda:sm_80,sm_90" (or "cuda" = sm_80,sm_90) into architectures.
/// False for anything else.
bool parseCudaTarget(const std::string &target, std::vector<std::string> &archs);

struct CudaBuildOptions {
  std::vector<std::string> archs = {"sm_80", "sm_90"};
  bool emulation = true; ///< embed the cuda-emu shared object
};

struct CudaModule {
  std::string source;
  std::vector<uint8_t> bytes; ///< the .dlcm file
  ParamStore params;
};

enum class CudaFailure { None, BadInput, Internal };

/// The CUDA source of a function that went through dlc-compile and dlc-tile.
mlir::FailureOr<std::string> emitCudaSource(mlir::func::FuncOp func);

/// Emits, compiles (NVRTC, host compiler) and writes the module.
mlir::FailureOr<CudaModule> buildCudaModule(mlir::func::FuncOp func,
                                            const CudaBuildOptions &options,
                                            CudaFailure &failure,
                                            std::string &message);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_CUDA_CUDABACKEND_H
