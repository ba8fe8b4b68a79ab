//===- LibraryGemm.h - one GEMM a vendor library runs -----------*- C++ -*-===//
//
// The call module format 1.4 records on a kernel (module.fbs LibraryGemm),
// as the reader hands it to a device: cuBLASLt runs it on CUDA, cuda-emu
// computes it by definition (hal/cuda_emu/EmuLibraryGemm.cpp) when asked,
// every device may run the kernel's generated code instead. Row-major; for
// each batch b < batch:
//
//   D[b] = act(op(A[b]) x op(B[b]) + bias + C[b])
//
// op(A) is m x k, op(B) k x n, the products accumulated in f32 (operands
// rounded to TF32 first when `tf32`), bias n values broadcast over the rows,
// C of D's layout and dtype. Operands are kernel arguments by index.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/DType.h"

#include <cstdint>

namespace dlc::rt {

struct LibraryGemmCall {
  enum class Activation : uint8_t { kNone, kRelu, kGeluTanh };
  uint32_t a = 0, b = 0, d = 0; ///< kernel argument indices
  int32_t bias = -1, c = -1;    ///< -1: none
  DType operandDtype = DType::F32, resultDtype = DType::F32, biasDtype = DType::F32;
  bool transposeA = false, transposeB = false, tf32 = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t strideA = 0, strideB = 0; ///< elements between batches (D, C: m * n)
  Activation activation = Activation::kNone;
};

/// Which GEMM a device runs for a kernel that has a library call, from
/// $DLC_GEMM_LIBRARY: `auto` (unset): the library where the device has one
/// (CUDA: cuBLASLt if it loads), else the generated kernel; `off`: always
/// the generated kernel; `on`: the library, on cuda-emu its emulation.
enum class GemmLibraryPolicy { kAuto, kOff, kOn };
GemmLibraryPolicy gemmLibraryPolicy();

} // namespace dlc::rt
