//===- CudaDriver.cpp - The CUDA driver API through dlopen ----------------===//

#include "runtime/hal/cuda/CudaDriver.h"

#include "runtime/base/Symbols.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace dlc::rt::hal::cuda {

namespace {

constexpr CUresult kOutOfMemory = 2;

struct LoadedDriver {
  CudaDriver table{};
  Status status;
};

/// Resolves every entry point; the first missing one fails the load (a
/// driver older than the runtime needs).
Status resolve(void *library, CudaDriver *d) {
  auto bind = [&](auto &slot, const char *symbol) { return bindSymbol(library, symbol, slot); };
#define DLC_BIND(field, symbol)                                                                \
  if (!bind(d->field, symbol))                                                                 \
    return unavailable("no usable CUDA driver: libcuda.so.1 has no '", symbol,                 \
                       "' (the driver is older than this runtime needs: CUDA 11.4 or later)");
  DLC_BIND(cuInit, "cuInit")
  DLC_BIND(cuDriverGetVersion, "cuDriverGetVersion")
  DLC_BIND(cuGetErrorName, "cuGetErrorName")
  DLC_BIND(cuGetErrorString, "cuGetErrorString")
  DLC_BIND(cuDeviceGetCount, "cuDeviceGetCount")
  DLC_BIND(cuDeviceGet, "cuDeviceGet")
  DLC_BIND(cuDeviceGetName, "cuDeviceGetName")
  DLC_BIND(cuDeviceGetAttribute, "cuDeviceGetAttribute")
  DLC_BIND(cuDeviceTotalMem, "cuDeviceTotalMem_v2")
  DLC_BIND(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
  DLC_BIND(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")
  DLC_BIND(cuCtxSetCurrent, "cuCtxSetCurrent")
  DLC_BIND(cuMemAlloc, "cuMemAlloc_v2")
  DLC_BIND(cuMemFree, "cuMemFree_v2")
  DLC_BIND(cuMemGetInfo, "cuMemGetInfo_v2")
  DLC_BIND(cuMemcpyHtoD, "cuMemcpyHtoD_v2")
  DLC_BIND(cuMemcpyDtoH, "cuMemcpyDtoH_v2")
  DLC_BIND(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2")
  DLC_BIND(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2")
  DLC_BIND(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2")
  DLC_BIND(cuMemcpyAsync, "cuMemcpyAsync")
  DLC_BIND(cuMemsetD8Async, "cuMemsetD8Async")
  DLC_BIND(cuPointerGetAttribute, "cuPointerGetAttribute")
  DLC_BIND(cuModuleLoadDataEx, "cuModuleLoadDataEx")
  DLC_BIND(cuModuleUnload, "cuModuleUnload")
  DLC_BIND(cuModuleGetFunction, "cuModuleGetFunction")
  DLC_BIND(cuFuncSetAttribute, "cuFuncSetAttribute")
  DLC_BIND(cuLaunchKernel, "cuLaunchKernel")
  DLC_BIND(cuStreamCreate, "cuStreamCreate")
  DLC_BIND(cuStreamDestroy, "cuStreamDestroy_v2")
  DLC_BIND(cuStreamSynchronize, "cuStreamSynchronize")
  DLC_BIND(cuStreamWaitEvent, "cuStreamWaitEvent")
  DLC_BIND(cuEventCreate, "cuEventCreate")
  DLC_BIND(cuEventDestroy, "cuEventDestroy_v2")
  DLC_BIND(cuEventRecord, "cuEventRecord")
  DLC_BIND(cuEventSynchronize, "cuEventSynchronize")
  DLC_BIND(cuStreamBeginCapture, "cuStreamBeginCapture_v2")
  DLC_BIND(cuStreamEndCapture, "cuStreamEndCapture")
  DLC_BIND(cuGraphInstantiate, "cuGraphInstantiateWithFlags")
  DLC_BIND(cuGraphLaunch, "cuGraphLaunch")
  DLC_BIND(cuGraphExecDestroy, "cuGraphExecDestroy")
  DLC_BIND(cuGraphDestroy, "cuGraphDestroy")
#undef DLC_BIND
  return okStatus();
}

LoadedDriver *load() {
  auto *loaded = new LoadedDriver();
  const char *override = std::getenv("DLC_CUDA_DRIVER_LIBRARY");
  const char *name = override && *override ? override : "libcuda.so.1";
  dlerror();
  // Never closed: the driver stays loaded for the life of the process.
  void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    loaded->status = unavailable("no CUDA driver: dlopen(", name, ") failed: ",
                                 why ? why : "unknown error");
    return loaded;
  }
  loaded->status = resolve(library, &loaded->table);
  if (!loaded->status.ok())
    return loaded;
  CudaDriver &d = loaded->table;
  CUresult r = d.cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    loaded->status = unavailable("no CUDA device: cuInit found none (", d.describe(r), ")");
    return loaded;
  }
  if (r == CUDA_ERROR_STUB_LIBRARY) {
    loaded->status = unavailable("no CUDA driver: ", name,
                                 " is the toolkit's link stub, not a driver (",
                                 d.describe(r), ")");
    return loaded;
  }
  if (r != CUDA_SUCCESS) {
    loaded->status = unavailable("no CUDA device: cuInit failed: ", d.describe(r));
    return loaded;
  }
  int count = 0;
  r = d.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0)
    loaded->status = unavailable("no CUDA device: the driver reports ", count, " devices");
  return loaded;
}

} // namespace

std::string CudaDriver::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(result, &name);
  if (cuGetErrorString)
    cuGetErrorString(result, &text);
  return strCat(name ? name : "CUDA error", " ", result, text ? strCat(" (", text, ")") : "");
}

Status loadCudaDriver(const CudaDriver **out) {
  static LoadedDriver *loaded = load();
  if (!loaded->status.ok())
    return loaded->status;
  *out = &loaded->table;
  return okStatus();
}

Status cudaError(const CudaDriver &driver, CUresult result, const char *call) {
  std::string what = call;
  if (size_t paren = what.find('('); paren != std::string::npos)
    what.resize(paren);
  if (result == kOutOfMemory)
    return resourceExhausted(what, ": ", driver.describe(result));
  return unavailable("CUDA device error in ", what, ": ", driver.describe(result));
}

} // namespace dlc::rt::hal::cuda
