//===- Version.cpp - dlc --version ----------------------------------------===//
//
// dlc's version and git revision, and what this binary was built with: the
// build type, the host compiler, MLIR, and the libraries the compiled
// kernels use (CUDA/NVRTC for GPU modules, oneDNN for CPU GEMMs). The
// macros come from tools/dlc/CMakeLists.txt.
//
//===----------------------------------------------------------------------===//

#include "CommandLine.h"
#include "GitRevision.inc"

#ifdef DLC_HAVE_NVRTC
#include "codegen/cuda/Nvrtc.h"
#endif

#include "llvm/Config/llvm-config.h"

#if __has_include(<oneapi/dnnl/dnnl_version.h>)
#include <oneapi/dnnl/dnnl_version.h>
#endif

namespace dlc {

void printVersion(llvm::raw_ostream &os) {
  os << "dlc " << DLC_VERSION << " (git " << DLC_GIT_REVISION << ", "
     << DLC_BUILD_TYPE << " build, " << DLC_CXX_COMPILER << ")\n";
  os << "  MLIR/LLVM " << LLVM_VERSION_STRING << "\n";
#ifdef DLC_CUDA_TOOLKIT_VERSION
  os << "  CUDA toolkit " << DLC_CUDA_TOOLKIT_VERSION;
#ifdef DLC_HAVE_NVRTC
  os << ", " << codegen::cuda::nvrtcVersionString();
#endif
  os << " (the runtime loads libcuda, NVRTC and NCCL when a CUDA device is used)\n";
#else
  os << "  CUDA: not built in (no toolkit found at build time)\n";
#endif
#ifdef DNNL_VERSION_MAJOR
  os << "  oneDNN " << DNNL_VERSION_MAJOR << "." << DNNL_VERSION_MINOR << "."
     << DNNL_VERSION_PATCH << " (CPU GEMMs; OpenBLAS as the fallback)\n";
#endif
}

} // namespace dlc
