//===- CudaTarget.h - CUDA C++ for NVRTC and cuda-emu -----------*- C++ -*-===//
//
// The CUDA answers to CTarget: `extern "C" __global__` kernels whose
// parameters are one device pointer per kernel argument (module format §4),
// a grid-stride loop over the parallel extent, `__half` and
// `__nv_bfloat16` storage, and a prelude that compiles unchanged under
// NVRTC (no host headers) and under the host compiler with
// runtime/hal/cuda_emu/dlc_cuda_emu.h.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_CUDA_CUDATARGET_H
#define DLC_CODEGEN_CUDA_CUDATARGET_H

#include "codegen/common/CTarget.h"

namespace dlc::codegen {

class CudaTarget : public CTarget {
public:
  std::string prelude() const override;
  /// `extern "C" __global__ void NAME`: the CUDA emitters append the
  /// parameter list (one pointer per kernel argument).
  std::string kernelSignature(llvm::StringRef entry) const override;
  std::string parallelLoop(llvm::StringRef var,
                           llvm::StringRef extent) const override;
  std::string rangeBegin() const override;
  std::string rangeEnd() const override;
  std::string storageType(DType dtype) const override;
  std::string load(DType dtype, llvm::StringRef stored) const override;
};

} // namespace dlc::codegen

#endif // DLC_CODEGEN_CUDA_CUDATARGET_H
