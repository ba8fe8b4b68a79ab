//===- NvrtcJit.h - The runtime's NVRTC, through dlopen ---------*- C++ -*-===//
//
// Compiles a kernel's embedded CUDA source at load time, for a device whose
// architecture the module has no cubin or PTX for (or for a kernel swapped
// in through DLC_KERNEL_OVERRIDE_DIR). NVRTC is dlopen()ed
// ($DLC_NVRTC_LIBRARY, else libnvrtc.so, libnvrtc.so.13, .12, .11.2); every
// result goes through the disk cache (KernelCache.h), so a warm start
// compiles nothing. No GPU is needed for this part.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/hal/cuda/KernelCache.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::rt::hal::cuda {

struct JitResult {
  std::vector<uint8_t> image; ///< a cubin, or NUL-terminated PTX
  CodeKind kind = CodeKind::kCubin;
  bool fromCache = false;
};

/// Loads NVRTC once per process. UNAVAILABLE "no NVRTC: dlopen(...) failed:
/// ..." when it is not installed. `version` gets "nvrtc 13.0".
Status loadNvrtc(std::string *version);

/// The cubin for `arch` ("sm_90") of `source`, from `cache` or compiled by
/// NVRTC (then stored). `name` names the kernel in messages and NVRTC's log.
Status jitCompile(const std::string &name, const std::string &source, const std::string &arch,
                  const KernelCache &cache, JitResult *out);

/// NVRTC compilations this process has run (cache hits do not count).
uint64_t jitCompileCount();

} // namespace dlc::rt::hal::cuda
