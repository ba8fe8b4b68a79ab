//===- CpuDevice.h - The host CPU as a device -------------------*- C++ -*-===//
//
// Memory is host memory; an executable is a shared object loaded from the
// module's bytes (memfd_create, or a temporary file, then dlopen); a launch
// calls the kernel's entry over [0, parallel_extent) split across a thread
// pool (ThreadPool.h), with the kernel ABI of
// docs/design/2026-11-22-module-format.md:
//
//   extern "C" void entry(void *const *buffers, int64_t begin, int64_t end);
//
// Streams run work synchronously on the calling thread (plus the pool), so
// events are signalled as soon as they are recorded.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/hal/Device.h"

namespace dlc::rt::hal::cpu {

/// The signature of every CPU kernel entry point.
using KernelEntry = void (*)(void *const *buffers, int64_t begin, int64_t end);

/// dlopen()s a shared object held in memory (RTLD_NOW | RTLD_LOCAL): through
/// an anonymous memfd, else a temporary file removed at once. `keptFd` (may
/// be null) gets the memfd, which the caller closes after dlclose (-1 when
/// there is none to close). Also used by cuda-emu, whose kernels are shared
/// objects too.
Status dlopenBinary(const BinarySpec &binary, void **handle, int *keptFd);
/// dlclose()s what dlopenBinary loaded and closes its memfd, unless glibc
/// keeps the object loaded (then the fd stays open, so that its path is
/// never reused for another object).
void dlcloseBinary(void *handle, int keptFd);

Status createCpuDevice(const DeviceOptions &options, std::unique_ptr<Device> *out);

} // namespace dlc::rt::hal::cpu
