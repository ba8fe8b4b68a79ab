//===- HostCompiler.h - C++ source to a shared object -----------*- C++ -*-===//
//
// Runs the host's C++ compiler (`c++`, or $DLC_CXX) on a module's kernel
// source: `-std=c++17 -O3 -fPIC -shared -fno-math-errno -fno-trapping-math`,
// the baseline instruction set of the target (no -march=native: the module
// must run wherever the runtime runs; the prelude's DLC_KERNEL adds AVX2 and
// AVX-512 clones of each kernel, picked at load time), and -ldnnl
// -lopenblas -lgomp when a kernel calls a GEMM.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_CPU_HOSTCOMPILER_H
#define DLC_CODEGEN_CPU_HOSTCOMPILER_H

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::codegen {

struct HostCompileResult {
  bool ok = false;
  std::vector<uint8_t> sharedObject;
  /// The command line and the compiler's output, on failure.
  std::string log;
};

HostCompileResult compileSharedObject(const std::string &source, bool linkBlas);

/// "x86_64" or "aarch64": the architecture the shared object is built for.
std::string hostArchitecture();

} // namespace dlc::codegen

#endif // DLC_CODEGEN_CPU_HOSTCOMPILER_H
