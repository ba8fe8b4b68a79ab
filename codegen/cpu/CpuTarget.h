//===- CpuTarget.h - C++ for the host compiler ------------------*- C++ -*-===//
//
// The CPU's answers to CTarget: `extern "C"` kernels with the ABI of
// docs/design/2026-11-22-module-format.md §3, a loop over [begin, end) of
// the parallel extent, `_Float16` for f16 and `uint16_t` with conversion
// helpers for bf16, OpenBLAS declared in the prelude.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_CPU_CPUTARGET_H
#define DLC_CODEGEN_CPU_CPUTARGET_H

#include "codegen/common/CTarget.h"
#include "passes/CpuPackedGemm.h"

namespace dlc::codegen {

class CpuTarget : public CTarget {
public:
  std::string prelude() const override;
  /// dlc_sgemm / dlc_dgemm over oneDNN and OpenBLAS, for modules that
  /// call them.
  std::string blasPrelude() const;
  /// dlc_conv_dnnl, oneDNN's convolution with weights reordered once
  /// (DnnlConvPrelude.cpp), for modules whose convolutions use it.
  std::string dnnlConvPrelude() const;
  /// dlc_sgemm_weights, a GEMM whose module-weight B is packed once
  /// (PackedGemmPrelude.cpp); comes after blasPrelude, its fallback.
  std::string packedGemmPrelude() const;
  /// f32 GEMM through oneDNN (else OpenBLAS); chosen by measurement, see
  /// docs/design/2026-11-22-cpu-codegen.md.
  bool sgemmDnnl = true;
  /// Where f32 matmuls by a module weight run dlc_sgemm_weights' packed
  /// GEMM, and channels-last convolutions dlc_conv_packed's: never, on AVX2
  /// CPUs without AVX-512 (where it wins), or on every AVX2 CPU (tests);
  /// decided in the module at load time.
  using PackedGemm = CpuPackedGemm;
  PackedGemm packedGemm = PackedGemm::Auto;
  /// libm's expf/tanhf/erff instead of the prelude's (for comparisons).
  bool libm = false;
  /// Which f32 convolutions with module weights run on oneDNN's primitive
  /// (Contraction.cpp): Auto where it was measured to win, else all or none.
  enum class ConvLibrary { Auto, Dnnl, Gemm } convLibrary = ConvLibrary::Auto;
  /// 3x3 stride-1 convolutions run as Winograd first: dlc's own on the
  /// packed GEMM, or oneDNN's (Contraction.cpp: winogradCandidate): Auto
  /// where the batch's output is large enough, Always on every candidate
  /// (tests), or Never.
  enum class Winograd { Auto, Always, Never } winograd = Winograd::Auto;
  /// Let results that are reshapes/transposes of stage rows split over
  /// those rows (AnalysisOptions::remapStores).
  bool remapStores = true;
  std::string kernelSignature(llvm::StringRef entry) const override;
  std::string parallelLoop(llvm::StringRef var,
                           llvm::StringRef extent) const override;
  std::string rangeBegin() const override { return "begin"; }
  std::string rangeEnd() const override { return "end"; }
  std::string storageType(DType dtype) const override;
  /// exp and tanh in float are the prelude's vectorisable dlc_expf and
  /// dlc_tanhf; everything else is C's.
  std::string math(llvm::StringRef function, DType dtype) const override;
  std::string gelu(DType dtype) const override;
};

} // namespace dlc::codegen

#endif // DLC_CODEGEN_CPU_CPUTARGET_H
