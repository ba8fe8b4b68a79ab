//===- KernelCache.h - NVRTC results on disk (compiler side) ----*- C++ -*-===//
//
// The compiler's view of the kernel cache the runtime also uses
// (runtime/hal/cuda/KernelCache.h: one file per (source hash, arch, NVRTC
// version, flags, kind), in $DLC_CACHE_DIR or ~/.cache/dlc/kernels): a
// cubin the compiler produced for sm_90 is found there by the runtime's JIT
// on the same machine, and the other way round.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/cuda/Nvrtc.h"
#include "runtime/hal/cuda/KernelCache.h"

namespace dlc::codegen::cuda {

using rt::hal::cuda::KernelCache;

/// Looks up both the cubin and the PTX of `source` for `arch` (compiled by
/// `compilerVersion`); true only when both are there.
bool lookupCompiled(const KernelCache &cache, const std::string &source, const std::string &arch,
                    const std::string &compilerVersion, NvrtcOutput *out);

/// Stores both halves of `compiled`.
rt::Status storeCompiled(const KernelCache &cache, const std::string &source,
                         const std::string &compilerVersion, const NvrtcOutput &compiled);

} // namespace dlc::codegen::cuda
