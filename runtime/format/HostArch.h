//===- HostArch.h - the architecture name of host binaries ------*- C++ -*-===//
//
// A module's `shared_object` binaries (CPU kernels, cuda-emu kernels) name
// the architecture they were built for; the compiler writes this host's
// name and the cpu and cuda-emu devices run only binaries that carry it.
// The one spelling both sides use, in the layer both include.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace dlc::format {

/// "x86_64" or "aarch64"; "unknown" on other hosts.
constexpr const char *hostArchitecture() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

} // namespace dlc::format
