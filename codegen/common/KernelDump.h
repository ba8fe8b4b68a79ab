//===- KernelDump.h - generated sources into DLC_KERNEL_DUMP_DIR -*- C++ -*-===//
//
// The backends' half of README's "tips for hacking": when
// $DLC_KERNEL_DUMP_DIR is set, `dlc compile` and `dlc run` write every
// module source they generate there (<graph>.cpp for the CPU, <graph>.cu
// for CUDA), so that it can be read, diffed or compiled by hand.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_COMMON_KERNELDUMP_H
#define DLC_CODEGEN_COMMON_KERNELDUMP_H

#include <string>

namespace dlc::codegen {

/// Writes `source` as $DLC_KERNEL_DUMP_DIR/`fileName`, creating the folder,
/// when the variable is set. A dump that cannot be written is skipped: it
/// is a debugging aid, never a reason to fail a compilation.
void dumpKernelSource(const std::string &fileName, const std::string &source);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_COMMON_KERNELDUMP_H
