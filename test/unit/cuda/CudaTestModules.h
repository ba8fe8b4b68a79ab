//===- CudaTestModules.h - Modules with CUDA kernels, for tests -*- C++ -*-===//
//
// Test-only: builds .dlcm files whose kernels are CUDA C++ compiled here as
// the compiler will (codegen/cuda/Nvrtc.h for PTX and cubin, sm_80 and sm_90;
// codegen/cuda/EmuCompile.h for the cuda-emu shared object), with a CPU
// reference for every output. dlc-cuda-testgen writes them for the GPU
// suite (test/gpu/), which runs them on cuda:0 with no compiler installed.
//
//   cuda-add         c = a + b                 f32[1000], float4 grid-stride
//   cuda-mlp         y = relu(x @ w + b), h = x @ w
//                                              x f32[37, 70], w f32[70, 45]: tiled matmul
//                                              with dynamic shared memory into the
//                                              arena, bias+relu, a Copy to h
//   cuda-softmax     y = softmax(x, axis 1)    f32[33, 300], a warp per row (shuffles)
//   cuda-add-ptx     cuda-add with PTX for compute_80 only (the driver JITs it)
//   cuda-add-source  cuda-add with no PTX or cubin (the runtime's NVRTC compiles it)
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/Status.h"
#include "runtime/format/ModuleWriter.h"

#include <string>
#include <vector>

namespace dlc::testing::cuda {

using rt::Status;

const std::vector<std::string> &cudaModuleNames();

/// A module and what running it must give.
struct CudaTestCase {
  std::vector<std::vector<float>> inputs;   ///< one per module input, row-major
  std::vector<std::vector<float>> expected; ///< one per module output (CPU reference)
};

/// Builds module `name` into `writer` and its inputs and expected outputs.
/// Kernels are compiled for `archs` (sm_80 and sm_90 by default).
Status buildCudaModule(const std::string &name, format::ModuleWriter *writer, CudaTestCase *test,
                       const std::vector<std::string> &archs = {"sm_80", "sm_90"});

/// The CUDA source of a test kernel, as the code generator would write it:
/// "add", "matmul", "bias_relu", "softmax", "half_axpy" (fp16, __half2).
std::string cudaTestKernelSource(const std::string &which);

/// The largest |got - want| / (atol + rtol |want|) over all elements (<= 1 passes).
double worstError(const std::vector<float> &got, const std::vector<float> &want, double rtol,
                  double atol);

} // namespace dlc::testing::cuda
