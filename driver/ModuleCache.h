//===- ModuleCache.h - whole compiled modules, kept by content ---*- C++ -*-===//
//
// `dlc compile -o` of a model compiled before writes the module it wrote
// then, copied from a cache, instead of fusing, planning and lowering again
// (the kernel cache already skips the host compiler; this skips the rest:
// GPT-2 small's 124M parameters are not initialised again).
//
// The key is a BLAKE3 hash of everything the module is a function of:
//  - the loaded model as IR, printed with its locations and resources
//    (the source text and every file it reads, through what they became:
//    --dim, --params, ONNX external data, a .dlg's weight files);
//  - the compile options (target, --train, --memory-budget, the mesh);
//  - the compiler: every shared object loaded into this process and the
//    executable (path, size, modification time, inode: a rebuilt dlc or
//    runtime is another compiler), the host compiler's `--version`, and the
//    DLC_* and CXX environment variables (DLC_CXX, DLC_CPU_SGEMM, ...).
//
// Entries live in kernelCacheDirectory("modules") as <key>.dlcm, written
// to a temporary file and renamed (a reader never sees half a module),
// least recently used first out past DLC_CACHE_MAX_MB; DLC_NO_CACHE (dlc
// --no-cache) turns it off, and DLC_KERNEL_DUMP_DIR bypasses it (a dump
// needs the kernels generated).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_MODULECACHE_H
#define DLC_DRIVER_MODULECACHE_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc {

struct CompileOptions;

/// The cache's folder, or empty when it is off for this compile.
std::string moduleCacheDirectory();

/// The key of the module `compile` makes of `model` (loaded, not yet
/// partitioned or lowered).
std::string moduleCacheKey(mlir::ModuleOp model, const CompileOptions &compile);

/// Writes the cached module for `key` over the (existing, empty) file
/// `output`; false when there is none (or it is damaged: it is removed),
/// with `output` left empty.
bool copyCachedModule(const std::string &directory, const std::string &key,
                      const std::string &output);

/// Keeps `bytes` as the module for `key` (best effort: a cache that cannot
/// be written is skipped silently, the compile has succeeded), then prunes.
void storeCachedModule(const std::string &directory, const std::string &key,
                       const std::vector<uint8_t> &bytes);

} // namespace dlc

#endif // DLC_DRIVER_MODULECACHE_H
