//===- Nvrtc.h - Compile CUDA kernels with NVRTC (compiler side) -*- C++ -*-===//
//
// `dlc compile --target cuda:sm_XY` compiles every kernel here, without a
// GPU: one NVRTC compilation per architecture gives the cubin for that
// architecture and its PTX (embedded so that newer GPUs JIT it). The options
// are the runtime's (runtime/hal/cuda/KernelCache.h: nvrtcFlags) plus the
// toolkit's include folder for cuda_fp16.h / cuda_bf16.h; results go
// through the disk cache the runtime shares (KernelCache.h). Links libnvrtc;
// the runtime dlopens it instead.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::codegen::cuda {

/// What one architecture's compilation gave.
struct NvrtcOutput {
  std::string arch;           ///< "sm_90"
  std::string ptx;            ///< without the terminating NUL
  std::vector<uint8_t> cubin; ///< an ELF for exactly `arch`
};

struct NvrtcOptions {
  std::vector<std::string> archs = {"sm_80", "sm_90"};
  /// Use the disk cache (KernelCache.h); `cacheDirectory` empty: the default.
  bool useCache = true;
  std::string cacheDirectory;
};

/// Compiles `source` for every architecture of `options`. On failure,
/// INVALID_ARGUMENT "kernel '<name>': NVRTC (nvrtc 13.0, sm_90) failed: ..."
/// followed by NVRTC's log.
rt::Status compileWithNvrtc(const std::string &kernelName, const std::string &source,
                            const NvrtcOptions &options, std::vector<NvrtcOutput> *out);

/// What every generated CUDA source begins with: the GPU definition of
/// DLC_DYNAMIC_SHARED(name), through which kernels declare dynamic shared
/// memory (dlc_cuda_emu.h defines it for cuda-emu, so the #ifndef skips it
/// there). Sources are self-contained: NVRTC gets no -D from dlc.
const char *cudaSourcePreamble();

/// "nvrtc 13.0".
std::string nvrtcVersionString();

/// NVRTC compilations run by this process (cache hits do not count).
uint64_t nvrtcCompileCount();

} // namespace dlc::codegen::cuda
