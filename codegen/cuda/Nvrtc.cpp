//===- Nvrtc.cpp - Compile CUDA kernels with NVRTC (compiler side) --------===//

#include "codegen/cuda/Nvrtc.h"

#include "codegen/common/HostCompiler.h"
#include "codegen/cuda/KernelCache.h"

#include <nvrtc.h>

#include <atomic>

#ifndef DLC_CUDA_INCLUDE_DIR
#define DLC_CUDA_INCLUDE_DIR ""
#endif

namespace dlc::codegen::cuda {

namespace {

std::atomic<uint64_t> gCompiles{0};

/// The toolkit's include folder: the runtime's search (environment, then
/// /usr/local/cuda), else the one this compiler was built against.
std::string includeDirectory() {
  std::string dir = rt::hal::cuda::cudaIncludeDirectory();
  return dir.empty() ? DLC_CUDA_INCLUDE_DIR : dir;
}

rt::Status compileOne(const std::string &kernelName, const std::string &source,
                      const std::string &arch, NvrtcOutput *out) {
  std::vector<std::string> flags = rt::hal::cuda::nvrtcFlags(arch);
  const std::string include = includeDirectory();
  if (!include.empty())
    flags.push_back("-I" + include);
  std::vector<const char *> options;
  for (const std::string &f : flags)
    options.push_back(f.c_str());
  nvrtcProgram program = nullptr;
  const std::string file = kernelName + ".cu";
  if (nvrtcResult r = nvrtcCreateProgram(&program, source.c_str(), file.c_str(), 0, nullptr, nullptr))
    return rt::internalError("kernel '", kernelName, "': nvrtcCreateProgram: ",
                             nvrtcGetErrorString(r));
  gCompiles.fetch_add(1);
  nvrtcResult result = nvrtcCompileProgram(program, static_cast<int>(options.size()), options.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(program, &logSize);
  std::string log(logSize, '\0');
  if (logSize)
    nvrtcGetProgramLog(program, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  if (result != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&program);
    return rt::invalidArgument("kernel '", kernelName, "': NVRTC (", nvrtcVersionString(), ", ",
                               arch, ") failed: ", nvrtcGetErrorString(result), "\n", log);
  }
  size_t ptxSize = 0, cubinSize = 0;
  nvrtcGetPTXSize(program, &ptxSize);
  nvrtcGetCUBINSize(program, &cubinSize);
  out->arch = arch;
  out->ptx.assign(ptxSize, '\0');
  out->cubin.resize(cubinSize);
  if (ptxSize)
    nvrtcGetPTX(program, out->ptx.data());
  if (cubinSize)
    nvrtcGetCUBIN(program, reinterpret_cast<char *>(out->cubin.data()));
  nvrtcDestroyProgram(&program);
  while (!out->ptx.empty() && out->ptx.back() == '\0')
    out->ptx.pop_back();
  if (out->ptx.empty() || out->cubin.empty())
    return rt::internalError("kernel '", kernelName, "': NVRTC produced no PTX or cubin for ",
                             arch);
  return rt::okStatus();
}

} // namespace

const char *cudaSourcePreamble() {
  return "#ifndef DLC_DYNAMIC_SHARED\n"
         "#define DLC_DYNAMIC_SHARED(name) extern __shared__ __align__(16) unsigned char name[]\n"
         "#endif\n";
}

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return rt::strCat("nvrtc ", major, ".", minor);
}

uint64_t nvrtcCompileCount() { return gCompiles.load(); }

rt::Status compileWithNvrtc(const std::string &kernelName, const std::string &source,
                            const NvrtcOptions &options, std::vector<NvrtcOutput> *out) {
  out->clear();
  KernelCache cache(options.cacheDirectory);
  const std::string version = nvrtcVersionString();
  // DLC_NO_CACHE (`dlc --no-cache`) turns every compiled-kernel cache off.
  const bool useCache = options.useCache && !kernelCacheDisabled();
  for (const std::string &arch : options.archs) {
    if (rt::hal::cuda::smVersion(arch) == 0)
      return rt::invalidArgument("kernel '", kernelName, "': '", arch,
                                 "' is not a CUDA architecture (expected sm_XY)");
    NvrtcOutput compiled;
    if (useCache && lookupCompiled(cache, source, arch, version, &compiled)) {
      out->push_back(std::move(compiled));
      continue;
    }
    DLC_RETURN_IF_ERROR(compileOne(kernelName, source, arch, &compiled));
    if (useCache)
      (void)storeCompiled(cache, source, version, compiled); // a cache that cannot be written is no error
    out->push_back(std::move(compiled));
  }
  return rt::okStatus();
}

} // namespace dlc::codegen::cuda
