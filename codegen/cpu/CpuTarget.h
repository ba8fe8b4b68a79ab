//===- CpuTarget.h - C++ for the host compiler ------------------*- C++ -*-===//
//
// The CPU's answers to CTarget: `extern "C"` kernels with the ABI of
// docs/design/2026-11-22-module-format.md §3, a loop over [begin, end) of
// the parallel extent, `_Float16` for f16 and `uint16_t` with conversion
// helpers for bf16, OpenBLAS declared in the prelude.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_CPU_CPUTARGET_H
#define DLC_CODEGEN_CPU_CPUTARGET_H

#include "codegen/common/CTarget.h"

namespace dlc::codegen {

class CpuTarget : public CTarget {
public:
  std::string prelude() const override;
  /// Declarations of the OpenBLAS calls, for modules that make them.
  std::string blasPrelude() const;
  std::string kernelSignature(llvm::StringRef entry) const override;
  std::string parallelLoop(llvm::StringRef var,
                           llvm::StringRef extent) const override;
  std::string rangeBegin() const override { return "begin"; }
  std::string rangeEnd() const override { return "end"; }
  std::string storageType(ElemKind kind) const override;
};

} // namespace dlc::codegen

#endif // DLC_CODEGEN_CPU_CPUTARGET_H
