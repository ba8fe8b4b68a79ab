//===- EmuLibraryGemm.h - cuda-emu's stand-in for cuBLASLt ------*- C++ -*-===//
//
// With DLC_GEMM_LIBRARY=on, cuda-emu runs a kernel's library GEMM (module
// format 1.4) by its definition (runtime/base/LibraryGemm.h) instead of the
// kernel's generated code: what the compiler recorded — which arguments,
// transposes, strides, epilogue — is then checked against the oracle on a
// machine without a GPU, as cuBLASLt would compute it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/LibraryGemm.h"
#include "runtime/base/Status.h"

namespace dlc::rt::hal::cuda_emu {

/// `args` are the kernel's argument pointers (host memory). Products and
/// sums in double, operands rounded to TF32 first when `call.tf32`.
Status emulateLibraryGemm(const LibraryGemmCall &call, void *const *args);

} // namespace dlc::rt::hal::cuda_emu
