//===- KernelCache.cpp - NVRTC results on disk (compiler side) ------------===//

#include "codegen/cuda/KernelCache.h"

namespace dlc::codegen::cuda {

using rt::hal::cuda::CodeKind;
using rt::hal::cuda::KernelCacheKey;

static KernelCacheKey keyFor(const std::string &source, const std::string &arch,
                             const std::string &compilerVersion, CodeKind kind) {
  KernelCacheKey key;
  key.source = source;
  key.arch = arch;
  key.compilerVersion = compilerVersion;
  key.flags = rt::hal::cuda::nvrtcFlagString(arch);
  key.kind = kind;
  return key;
}

bool lookupCompiled(const KernelCache &cache, const std::string &source, const std::string &arch,
                    const std::string &compilerVersion, NvrtcOutput *out) {
  std::vector<uint8_t> cubin, ptx;
  if (!cache.lookup(keyFor(source, arch, compilerVersion, CodeKind::kCubin), &cubin) ||
      !cache.lookup(keyFor(source, arch, compilerVersion, CodeKind::kPtx), &ptx))
    return false;
  out->arch = arch;
  out->cubin = std::move(cubin);
  out->ptx.assign(ptx.begin(), ptx.end());
  return true;
}

rt::Status storeCompiled(const KernelCache &cache, const std::string &source,
                         const std::string &compilerVersion, const NvrtcOutput &compiled) {
  DLC_RETURN_IF_ERROR(cache.store(keyFor(source, compiled.arch, compilerVersion, CodeKind::kCubin),
                                  rt::ByteSpan(compiled.cubin.data(), compiled.cubin.size())));
  return cache.store(keyFor(source, compiled.arch, compilerVersion, CodeKind::kPtx),
                     rt::asBytes(compiled.ptx));
}

} // namespace dlc::codegen::cuda
