//===- CublasLt.h - library GEMMs through cuBLASLt, by dlopen ---*- C++ -*-===//
//
// The CUDA device runs a kernel's library GEMM (module format 1.4,
// runtime/base/LibraryGemm.h) as one cublasLtMatmul when libcublasLt loads
// ($DLC_CUBLASLT_LIBRARY, else libcublasLt.so.13, .12, then the toolkit's
// lib64): the runtime links no vendor library (DESIGN §7), so, as for the
// driver, the few types and constants it needs are copied from cublasLt.h
// (their values are ABI). Anything cuBLASLt declines — no library, no
// algorithm for the shape, a pointer less aligned than the plan assumed —
// leaves the kernel's generated code to run.
//
// dlc's GEMMs are row-major, cuBLASLt's column-major: D = op(A) op(B) is
// computed as D^T = op(B)^T op(A)^T, i.e. with the operands swapped and
// each stored matrix read as its transpose, which is how it is stored.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/LibraryGemm.h"
#include "runtime/base/Status.h"

#include <cstdint>
#include <memory>
#include <string>

namespace dlc::rt::hal::cuda {

class CublasLtHandle;

/// The workspace every library GEMM may use (cuBLASLt's advice for Hopper).
inline constexpr uint64_t kCublasLtWorkspaceBytes = uint64_t(32) << 20;

/// One kernel's GEMM, its descriptors built and its algorithm chosen once
/// (cublasLtMatmulAlgoGetHeuristic), when the executable loads.
class CublasLtGemm {
public:
  ~CublasLtGemm();
  /// Queues the GEMM on `stream` (a CUstream) with the kernel's argument
  /// pointers and a workspace of kCublasLtWorkspaceBytes that no other
  /// work uses meanwhile; `ran` false, nothing queued, when a pointer is
  /// less aligned than the algorithm was chosen for (the caller then
  /// launches the kernel's code).
  Status run(void *const *args, void *stream, void *workspace, bool *ran) const;

private:
  friend class CublasLtHandle;
  CublasLtGemm() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The library and a cuBLASLt handle, for one device (created with its
/// context current); shared by the GEMMs prepared on it.
class CublasLtHandle : public std::enable_shared_from_this<CublasLtHandle> {
public:
  /// Null, with `why` set, when the library cannot be loaded or initialised.
  static std::shared_ptr<CublasLtHandle> create(std::string *why);
  ~CublasLtHandle();
  /// Null, with `why` set, when cuBLASLt has no algorithm for `call`.
  std::unique_ptr<CublasLtGemm> prepare(const LibraryGemmCall &call, std::string *why) const;

  struct Impl;

private:
  CublasLtHandle() = default;
  std::unique_ptr<Impl> impl_;
};

} // namespace dlc::rt::hal::cuda
