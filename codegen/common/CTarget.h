//===- CTarget.h - what a C-like kernel target says differently -*- C++ -*-===//
//
// The kernel emitters write C-like source once; a target overrides only
// what differs between C++ for the host and CUDA C++ (tinygrad's renderer
// split): qualifiers and signature of a kernel, how a call iterates over its
// share of the parallel extent, the names of element types and of math
// functions, and the conversions between stored and computed elements.
//
// Element types are the project's one DType (support/DType.h), the IR's
// through ir/ParamSpec.h's dtypeOf. Every dtype has a storage type (how it
// sits in memory) and a compute type (what element-wise math runs in): f64
// in double; f32, f16 and bf16 in float, rounded to the storage type at
// every op's result as the oracle rounds; integers (i64, i32 and the
// data-only i8 and u8) in int64_t, wrapped to i32, i8 or u8 at every op's
// result as the oracle's roundTo wraps; i1 in bool. Reductions and
// normalisations accumulate in double.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_COMMON_CTARGET_H
#define DLC_CODEGEN_COMMON_CTARGET_H

#include "support/DType.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace dlc::codegen {

class CTarget {
public:
  virtual ~CTarget();

  /// Source text every module starts with: includes, conversion helpers.
  virtual std::string prelude() const = 0;
  /// On the CPU a kernel's body, `static void NAME(void *const *buffers,
  /// int64_t begin, int64_t end, int64_t dlc_check_base)`, which the
  /// module's entry calls (codegen/cpu/CpuBackend.cpp); on CUDA the entry,
  /// `extern "C" __global__ void NAME(...)`.
  virtual std::string kernelSignature(llvm::StringRef entry) const = 0;
  /// The loop header over the indices of [0, extent) that this call owns,
  /// without the opening brace: CPU `for (int64_t p = begin; p < end; ++p)`,
  /// CUDA a grid-stride loop. `extent` is a C expression.
  virtual std::string parallelLoop(llvm::StringRef var,
                                   llvm::StringRef extent) const = 0;
  /// The first and one-past-last parallel index of this call, as C
  /// expressions valid after the loop head's declarations (CPU: `begin`,
  /// `end`). Kernels that work on a contiguous block of rows use these.
  virtual std::string rangeBegin() const = 0;
  virtual std::string rangeEnd() const = 0;

  /// How an element sits in memory: `float`, `_Float16` / `__half`,
  /// `uint16_t` / `__nv_bfloat16`, `int8_t` for i8, `uint8_t` for u8 and i1.
  virtual std::string storageType(DType dtype) const = 0;
  /// What element-wise math runs in (see the file comment).
  virtual std::string computeType(DType dtype) const;
  /// A stored element (an lvalue expression) as its compute type.
  virtual std::string load(DType dtype, llvm::StringRef stored) const;
  /// A compute-type value as the stored type.
  virtual std::string store(DType dtype, llvm::StringRef value) const;
  /// A computed value rounded as the op's result dtype rounds it (f16/bf16
  /// round-trip through the storage type; i32, i8 and u8 wrap; others
  /// unchanged).
  virtual std::string round(DType dtype, llvm::StringRef value) const;
  /// A math function of the compute type: ("exp", F32) -> "expf".
  virtual std::string math(llvm::StringRef function, DType dtype) const;
  /// A function computing GELU's exact form x Φ(x) whole, or "" where the
  /// target has none (then 0.5 x erfc(-x / √2) is emitted).
  virtual std::string gelu(DType) const { return ""; }
  /// A literal of the compute type (inf and NaN spelled portably).
  virtual std::string literal(DType dtype, double value) const;
};

} // namespace dlc::codegen

#endif // DLC_CODEGEN_COMMON_CTARGET_H
