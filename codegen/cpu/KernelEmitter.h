//===- KernelEmitter.h - one kernel as a C++ function -----------*- C++ -*-===//
//
// Emits the function of one kernel (a fusion region or a lone op): its
// arguments as typed pointers, each stage into this call's rows of scratch
// (codegen/cpu/Stages.h), then one loop nest per shape of results, computing
// every element-wise, layout and data-movement op inline
// (codegen/common/Elemental.h). The loop over rows is the parallel extent
// (codegen/common/KernelAnalysis.h).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_CPU_KERNELEMITTER_H
#define DLC_CODEGEN_CPU_KERNELEMITTER_H

#include "codegen/common/CTarget.h"
#include "codegen/common/DataChecks.h"
#include "codegen/common/KernelAnalysis.h"
#include "codegen/cpu/CpuTarget.h"

#include <string>
#include <vector>

namespace dlc::codegen {

/// The name every kernel's definition gives its function: the backend
/// renames each distinct definition and calls it from the kernel's entry.
inline constexpr const char *kKernelBodyName = "dlc_kernel_body";

struct EmittedKernel {
  /// The module's name of the kernel (its entry symbol).
  std::string entry;
  /// Comment lines: what the kernel computes and how it splits.
  std::string header;
  /// The function: CTarget::kernelSignature(kKernelBodyName) and the body;
  /// the same text for two kernels that compute the same thing on
  /// different buffers (numbers of data checks are the kernel's own).
  std::string definition;
  int64_t parallelExtent = 1;
  int64_t grain = 1;
  /// The extent of the outermost dimension of the rows other than 1 (the
  /// results' outermost in memory), or 0 for a kernel that does not split.
  int64_t outerRows = 0;
  /// The entry calls the body on blocks of at most this many rows of its
  /// range, at multiples of it (0: on the whole range): bounds the
  /// scratch one call holds (KernelEmitter.cpp rowBlock).
  int64_t rowBlock = 0;
  bool usesBlas = false;
  /// A stage calls dlc_conv_dnnl (CpuTarget::dnnlConvPrelude).
  bool usesDnnlConv = false;
  /// The kernel checks its data (DataChecks.h): its last argument is the
  /// status words.
  bool checks = false;
};

/// `argNames` describe the kernel's operands then results, for comments.
/// Checks on the kernel's data go to `checks` (as kernel `index` of the
/// module).
EmittedKernel emitCpuKernel(const CpuTarget &target, const KernelView &kernel,
                            const std::string &entry,
                            const std::vector<std::string> &argNames,
                            DataChecks &checks, uint32_t index);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_CPU_KERNELEMITTER_H
