//===- CudaDevice.h - An NVIDIA GPU through the driver API ------*- C++ -*-===//
//
// "cuda" and "cuda:N": the driver API through dlopen (CudaDriver.h), the
// device's primary context, memory from cuMemAlloc (one allocation per
// Buffer: the executor asks for one arena per session, plus the weights and
// the input/output staging buffers), one non-blocking stream per Stream,
// and CUDA Graph capture and replay.
//
// Kernels (docs/design/2026-11-22-cuda-device.md): for each kernel, the
// cubin built for the device's exact sm_XY if the module has one, else the
// newest PTX not newer than the device (JIT-compiled by the driver), else the
// kernel's source compiled by NVRTC (NvrtcJit.h, cached on disk). A source
// swapped in through DLC_KERNEL_OVERRIDE_DIR is always compiled by NVRTC.
// Kernel parameters are one CUdeviceptr per argument, in order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/hal/Device.h"

namespace dlc::rt::hal::cuda {

/// `spec` is "cuda" (device 0) or "cuda:N". UNAVAILABLE with "no CUDA
/// driver: ..." or "no CUDA device ..." when the machine has none.
Status createCudaDevice(const std::string &spec, const DeviceOptions &options,
                        std::unique_ptr<Device> *out);

} // namespace dlc::rt::hal::cuda
