//===- CpuBackend.h - a planned function as a CPU module --------*- C++ -*-===//
//
// The CPU backend of `dlc compile`: one C++ source for the whole module
// (the prelude, then one function per kernel), compiled by the host
// compiler into a shared object that is embedded in the .dlcm as a
// `binary` section; a plan of one Launch per kernel (and the Copies of
// codegen/common/ModuleLowering.h); the weights. $DLC_KERNEL_DUMP_DIR, when
// set, receives the source as <graph>.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_CPU_CPUBACKEND_H
#define DLC_CODEGEN_CPU_CPUBACKEND_H

#include "support/ParamSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace dlc::codegen {

struct CpuModule {
  std::string source;
  std::vector<uint8_t> bytes; ///< the .dlcm file
  ParamStore params;
};

enum class CpuFailure { None, BadInput, Internal };

/// Emits the kernel source of a function that went through dlc-compile.
mlir::FailureOr<std::string> emitCpuSource(mlir::func::FuncOp func);

/// Emits, compiles and writes the module. On failure `failure` says whose
/// fault it is and `message` what happened (the compiler's log included).
/// Without `keepParams` the result's `params` is empty (lowerModule).
mlir::FailureOr<CpuModule> buildCpuModule(mlir::func::FuncOp func,
                                          CpuFailure &failure,
                                          std::string &message, bool keepParams = true);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_CPU_CPUBACKEND_H
