//===- CudaDriver.h - The CUDA driver API through dlopen --------*- C++ -*-===//
//
// The runtime never links libcuda: it dlopen()s "libcuda.so.1" (or
// $DLC_CUDA_DRIVER_LIBRARY) on first use and resolves the entry points it
// needs into a table. The few types and constants below are copied from
// cuda.h (their values are ABI), so the runtime builds without the toolkit.
// Versioned names (cuMemAlloc_v2, ...) are the ones cuda.h's macros pick.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/Status.h"

#include <cstddef>
#include <cstdint>

namespace dlc::rt::hal::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
inline constexpr int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
inline constexpr unsigned CU_MEMORYTYPE_DEVICE = 2;
inline constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
inline constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
inline constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
inline constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;
inline constexpr int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;

/// The driver entry points the CUDA device uses, resolved once per process.
struct CudaDriver {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int *version);
  CUresult (*cuGetErrorName)(CUresult error, const char **name);
  CUresult (*cuGetErrorString)(CUresult error, const char **text);
  CUresult (*cuDeviceGetCount)(int *count);
  CUresult (*cuDeviceGet)(CUdevice *device, int ordinal);
  CUresult (*cuDeviceGetName)(char *name, int length, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int *value, int attribute, CUdevice device);
  CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice device);                 // _v2
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);                       // _v2
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuMemAlloc)(CUdeviceptr *pointer, size_t bytes);                   // _v2
  CUresult (*cuMemFree)(CUdeviceptr pointer);                                   // _v2
  CUresult (*cuMemGetInfo)(size_t *free, size_t *total);                        // _v2
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);     // _v2
  CUresult (*cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);           // _v2
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream stream);
  CUresult (*cuPointerGetAttribute)(void *data, int attribute, CUdeviceptr pointer);
  CUresult (*cuModuleLoadDataEx)(CUmodule *module, const void *image, unsigned count,
                                 int *options, void **values);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuModuleGetFunction)(CUfunction *function, CUmodule module, const char *name);
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute, int value);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned gridX, unsigned gridY, unsigned gridZ,
                             unsigned blockX, unsigned blockY, unsigned blockZ,
                             unsigned sharedBytes, CUstream stream, void **params, void **extra);
  CUresult (*cuStreamCreate)(CUstream *stream, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream stream);                                 // _v2
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuStreamWaitEvent)(CUstream stream, CUevent event, unsigned flags);
  CUresult (*cuEventCreate)(CUevent *event, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent event);                                    // _v2
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuStreamBeginCapture)(CUstream stream, int mode);                  // _v2
  CUresult (*cuStreamEndCapture)(CUstream stream, CUgraph *graph);
  CUresult (*cuGraphInstantiate)(CUgraphExec *exec, CUgraph graph, unsigned long long flags);
  CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec exec);
  CUresult (*cuGraphDestroy)(CUgraph graph);

  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a result code.
  std::string describe(CUresult result) const;
};

/// Loads the driver (once per process) and calls cuInit(0). Fails with
/// UNAVAILABLE "no CUDA driver: dlopen(libcuda.so.1) failed: ..." when the
/// library is missing, or "no CUDA device: ..." when cuInit finds none.
Status loadCudaDriver(const CudaDriver **out);

/// Turns a failed driver call into an INTERNAL/RESOURCE_EXHAUSTED status
/// naming the call: "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
Status cudaError(const CudaDriver &driver, CUresult result, const char *call);

#define DLC_CU_RETURN_IF_ERROR(driver, call)                                                  \
  do {                                                                                        \
    ::dlc::rt::hal::cuda::CUresult dlc_cu_result_ = (driver).call;                            \
    if (dlc_cu_result_ != ::dlc::rt::hal::cuda::CUDA_SUCCESS)                                 \
      return ::dlc::rt::hal::cuda::cudaError((driver), dlc_cu_result_, #call);                \
  } while (0)

} // namespace dlc::rt::hal::cuda
