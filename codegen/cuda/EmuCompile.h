//===- EmuCompile.h - CUDA sources to cuda-emu shared objects ---*- C++ -*-===//
//
// Builds the `shared_object` binary a kernel of target cuda carries for the
// cuda-emu device: the exact CUDA C++ source, compiled by the host compiler
// as
//
//   c++ -std=c++17 -O2 -shared -fPIC -fvisibility=hidden -fno-gnu-unique \
//       -DDLC_CUDA_EMU -pthread -I<stand-ins> -include dlc_cuda_emu.h \
//       -x c++ kernel.cu -o kernel.so
//
// with `__CUDA_ARCH__` undefined, after appending one
// DLC_EMU_LAUNCH_STUB(<entry>) line per entry (the launch stubs
// dlc_emu_launch_<entry> the device calls). The header, the launch
// description it includes (dlc_emu_launch.h) and the stand-in cuda.h /
// cuda_fp16.h / cuda_bf16.h / cuda_runtime.h are embedded in this library
// and written next to the source, so the compiler needs no file from the
// source tree. Plain C++ (no LLVM), on the shared host-compiler driver
// (codegen/common/HostCompiler.h), which caches the result on disk by a
// hash of the inputs. docs/design/2026-11-22-cuda-device.md has the
// contract.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::codegen::cuda {

struct EmuCompileOptions {
  /// The host compiler: empty means $CXX, else "c++".
  std::string compiler;
  std::string optimisation = "-O2";
  /// Added after the fixed flags (e.g. "-g", "-fsanitize=address").
  std::vector<std::string> extraFlags;
  /// Where compiled objects are cached; empty: kernelCacheDirectory("emu")
  /// (HostCompiler.h). `useCache` false compiles every time.
  std::string cacheDirectory;
  bool useCache = true;
};

/// Compiles one translation unit: `source` (CUDA C++ whose kernels are
/// `extern "C" __global__`) with a launch stub for each of `entries`.
/// On failure, INVALID_ARGUMENT with the compiler's output and `name`.
rt::Status compileForEmulation(const std::string &name, const std::string &source,
                               const std::vector<std::string> &entries,
                               const EmuCompileOptions &options, std::vector<uint8_t> *sharedObject);

} // namespace dlc::codegen::cuda
