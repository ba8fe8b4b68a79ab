//===- CudaEmuDevice.h - CUDA kernels on the CPU ----------------*- C++ -*-===//
//
// "cuda-emu": runs kernels of target cuda from their `shared_object`
// binary, the kernel's CUDA source compiled by the host compiler with
// dlc_cuda_emu.h (codegen/cuda/EmuCompile.h). Memory is host memory; a
// launch calls the binary's stub
//
//   extern "C" void dlc_emu_launch_<entry>(const dlc_emu_launch_t *launch,
//                                          void **args);
//
// with the kernel's grid, block and dynamic shared memory, and args[i]
// pointing at the i-th parameter's value (a device pointer, as
// cuLaunchKernel's kernelParams); dlc_emu_launch.h defines the launch
// description and the stub's type once, for this device and the kernels.
// Blocks run on up to DeviceOptions::numThreads OS threads (0: one per
// core), each block's threads as fibers. Streams are synchronous.
// docs/design/2026-11-22-cuda-device.md has the contract.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/hal/Device.h"
#include "runtime/hal/cuda_emu/dlc_emu_launch.h"

#include <cstdint>

namespace dlc::rt::hal::cuda_emu {

/// The prefix of every launch stub's symbol: "dlc_emu_launch_".
inline constexpr const char *kLaunchStubPrefix = "dlc_emu_launch_";

/// The most dynamic shared memory a cuda-emu block may have (sm_90's 227 KB).
inline constexpr uint32_t kMaxDynamicSharedBytes = 227 * 1024;

Status createCudaEmuDevice(const DeviceOptions &options, std::unique_ptr<Device> *out);

} // namespace dlc::rt::hal::cuda_emu
