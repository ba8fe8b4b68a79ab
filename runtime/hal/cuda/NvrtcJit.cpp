//===- NvrtcJit.cpp - The runtime's NVRTC, through dlopen -----------------===//

#include "runtime/hal/cuda/NvrtcJit.h"

#include "runtime/base/Log.h"
#include "runtime/base/Symbols.h"

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace dlc::rt::hal::cuda {

namespace {

using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram *;

struct Nvrtc {
  const char *(*nvrtcGetErrorString)(nvrtcResult);
  nvrtcResult (*nvrtcVersion)(int *, int *);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int,
                                    const char *const *, const char *const *);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *);
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char *);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *);
  std::string version;
  Status status;
};

std::atomic<uint64_t> gCompiles{0};

Nvrtc *load() {
  auto *n = new Nvrtc{};
  std::vector<std::string> names;
  if (const char *o = std::getenv("DLC_NVRTC_LIBRARY"); o && *o)
    names.push_back(o);
  else
    names = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
             "/usr/local/cuda/lib64/libnvrtc.so"};
  void *library = nullptr;
  std::string firstError;
  for (const std::string &name : names) {
    dlerror();
    library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library)
      break;
    if (firstError.empty()) {
      const char *why = dlerror();
      firstError = strCat("dlopen(", name, ") failed: ", why ? why : "unknown error");
    }
  }
  if (!library) {
    n->status = unavailable("no NVRTC: ", firstError);
    return n;
  }
  auto bind = [&](auto &slot, const char *symbol) { return bindSymbol(library, symbol, slot); };
  bool ok = bind(n->nvrtcGetErrorString, "nvrtcGetErrorString") &&
            bind(n->nvrtcVersion, "nvrtcVersion") &&
            bind(n->nvrtcCreateProgram, "nvrtcCreateProgram") &&
            bind(n->nvrtcDestroyProgram, "nvrtcDestroyProgram") &&
            bind(n->nvrtcCompileProgram, "nvrtcCompileProgram") &&
            bind(n->nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize") &&
            bind(n->nvrtcGetProgramLog, "nvrtcGetProgramLog") &&
            bind(n->nvrtcGetPTXSize, "nvrtcGetPTXSize") && bind(n->nvrtcGetPTX, "nvrtcGetPTX") &&
            bind(n->nvrtcGetCUBINSize, "nvrtcGetCUBINSize") &&
            bind(n->nvrtcGetCUBIN, "nvrtcGetCUBIN");
  if (!ok) {
    n->status = unavailable("no usable NVRTC: the library lacks nvrtcGetCUBIN (CUDA 11.1 or "
                            "later is needed)");
    return n;
  }
  int major = 0, minor = 0;
  n->nvrtcVersion(&major, &minor);
  n->version = strCat("nvrtc ", major, ".", minor);
  return n;
}

const Nvrtc &nvrtc() {
  static Nvrtc *n = load();
  return *n;
}

} // namespace

Status loadNvrtc(std::string *version) {
  const Nvrtc &n = nvrtc();
  if (!n.status.ok())
    return n.status;
  if (version)
    *version = n.version;
  return okStatus();
}

uint64_t jitCompileCount() { return gCompiles.load(); }

Status jitCompile(const std::string &name, const std::string &source, const std::string &arch,
                  const KernelCache &cache, JitResult *out) {
  DLC_RETURN_IF_ERROR(loadNvrtc(nullptr));
  const Nvrtc &n = nvrtc();
  KernelCacheKey key;
  key.source = source;
  key.arch = arch;
  key.compilerVersion = n.version;
  key.kind = CodeKind::kCubin;
  std::vector<std::string> flags = nvrtcFlags(arch);
  key.flags = nvrtcFlagString(arch);
  out->kind = CodeKind::kCubin;
  if (cache.lookup(key, &out->image)) {
    out->fromCache = true;
    if (logEnabled())
      log(LogLevel::kInfo, strCat("cuda: kernel '", name, "' for ", arch, " from the kernel cache"));
    return okStatus();
  }

  const std::string include = cudaIncludeDirectory();
  if (!include.empty())
    flags.push_back("-I" + include);
  std::vector<const char *> options;
  for (const std::string &f : flags)
    options.push_back(f.c_str());
  auto started = std::chrono::steady_clock::now();
  nvrtcProgram program = nullptr;
  const std::string file = name + ".cu";
  if (int r = n.nvrtcCreateProgram(&program, source.c_str(), file.c_str(), 0, nullptr, nullptr))
    return internalError("kernel '", name, "': nvrtcCreateProgram: ", n.nvrtcGetErrorString(r));
  gCompiles.fetch_add(1);
  int result = n.nvrtcCompileProgram(program, static_cast<int>(options.size()), options.data());
  size_t logSize = 0;
  n.nvrtcGetProgramLogSize(program, &logSize);
  std::string compileLog(logSize, '\0');
  if (logSize)
    n.nvrtcGetProgramLog(program, compileLog.data());
  while (!compileLog.empty() && (compileLog.back() == '\0' || compileLog.back() == '\n'))
    compileLog.pop_back();
  if (result != 0) {
    n.nvrtcDestroyProgram(&program);
    return invalidModule("kernel '", name, "': NVRTC (", n.version, ", ", arch,
                         ") failed: ", n.nvrtcGetErrorString(result), "\n", compileLog,
                         include.empty() ? "\n(no CUDA include folder found for cuda_fp16.h: "
                                           "set DLC_CUDA_INCLUDE_DIR)"
                                         : "");
  }
  size_t size = 0;
  n.nvrtcGetCUBINSize(program, &size);
  out->image.resize(size);
  if (size)
    n.nvrtcGetCUBIN(program, reinterpret_cast<char *>(out->image.data()));
  n.nvrtcDestroyProgram(&program);
  if (size == 0)
    return internalError("kernel '", name, "': NVRTC produced no cubin for ", arch);
  out->fromCache = false;
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                  .count();
  if (logEnabled())
    log(LogLevel::kInfo, strCat("cuda: kernel '", name, "' compiled by ", n.version, " for ",
                                arch, " in ", static_cast<int>(ms), " ms"));
  Status stored = cache.store(key, ByteSpan(out->image.data(), out->image.size()));
  if (!stored.ok() && logEnabled())
    log(LogLevel::kWarning, stored.message());
  return okStatus();
}

} // namespace dlc::rt::hal::cuda
