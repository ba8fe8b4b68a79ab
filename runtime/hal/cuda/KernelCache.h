//===- KernelCache.h - Compiled CUDA kernels on disk ------------*- C++ -*-===//
//
// NVRTC output cached on disk, shared by the compiler (codegen/cuda/
// KernelCache.h) and the runtime's JIT (NvrtcJit.h): one file per
// (source hash, architecture, NVRTC version, flags, output kind), in
// $DLC_CACHE_DIR, else $XDG_CACHE_HOME/dlc/kernels, else
// ~/.cache/dlc/kernels. A file starts with its full key, which a lookup
// compares, so a hash collision is a miss, never a wrong kernel. Writes go
// to a temporary name and are renamed into place: concurrent processes
// share a cache safely. No CUDA here: the compiler links this too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/Span.h"
#include "runtime/base/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::rt::hal::cuda {

/// What NVRTC produced: a cubin for one exact architecture, or PTX.
enum class CodeKind { kCubin, kPtx };

struct KernelCacheKey {
  std::string source;          ///< the CUDA C++ (hashed, not stored)
  std::string arch;            ///< "sm_90"
  std::string compilerVersion; ///< "nvrtc 13.0"
  std::string flags;           ///< nvrtcFlags() joined by spaces
  CodeKind kind = CodeKind::kCubin;

  /// The key as stored in the file: every field but the source, which is
  /// represented by its FNV-1a 64 hash and length.
  std::string canonical() const;
  /// The file name: "<hash of canonical()>-<arch>.<cubin|ptx>".
  std::string fileName() const;
};

/// The options every NVRTC compilation of dlc uses, in order, for `arch`
/// ("sm_90"): --gpu-architecture=<arch>, -default-device, -std=c++17,
/// -lineinfo. One compilation gives both the cubin and the PTX. The include
/// path for cuda_fp16.h is added by the caller (it is not part of the key).
std::vector<std::string> nvrtcFlags(const std::string &arch);
/// nvrtcFlags(arch) joined by spaces, as KernelCacheKey::flags holds them.
std::string nvrtcFlagString(const std::string &arch);

/// "sm_90" → 90; 0 when `arch` is not of the form sm_<digits>.
int smVersion(const std::string &arch);

/// The folder holding cuda_fp16.h: $DLC_CUDA_INCLUDE_DIR, $CUDA_HOME/include,
/// $CUDA_PATH/include or /usr/local/cuda/include, the first that has it;
/// empty when none does.
std::string cudaIncludeDirectory();

class KernelCache {
public:
  /// `directory` empty: defaultDirectory().
  explicit KernelCache(std::string directory = "");
  static std::string defaultDirectory();
  const std::string &directory() const { return directory_; }

  /// True and the bytes when the cache holds `key`.
  bool lookup(const KernelCacheKey &key, std::vector<uint8_t> *out) const;
  /// Stores (atomically: temporary file, then rename). Creates the folder.
  Status store(const KernelCacheKey &key, ByteSpan bytes) const;

private:
  std::string directory_;
};

} // namespace dlc::rt::hal::cuda
