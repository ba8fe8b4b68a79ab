//===- HostCompiler.h - a source to a shared object, by c++ -----*- C++ -*-===//
//
// What the CPU backend and cuda-emu share in driving the host's C++
// compiler: a private temporary folder with the source and its headers, one
// run whose output becomes the error, the shared object read back, and a
// disk cache keyed by all of these; each target gives only its compiler,
// flags and headers. Plain C++ (no LLVM), for programs without LLVM too.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_COMMON_HOSTCOMPILER_H
#define DLC_CODEGEN_COMMON_HOSTCOMPILER_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::codegen {

/// A file written next to the source.
struct HostFile {
  std::string name;
  std::string text;
};

/// One compilation, as
///
///   <compiler> <flags> [-I<folder> [-include <folder>/<preinclude>]...]
///       [-x <language>] <folder>/<sourceName> -o <folder>/<stem>.so
///       <libraries>
struct HostCompileJob {
  /// As the shell reads it: a program on PATH or a path, with any leading
  /// words ("ccache c++").
  std::string compiler;
  std::vector<std::string> flags;
  /// Written into the folder, which is then on the include path.
  std::vector<HostFile> headers;
  /// Names of `headers` included before the source's first line.
  std::vector<std::string> preincludes;
  /// The source's language where its name does not say it ("c++" for .cu).
  std::string language;
  std::string sourceName;
  std::string source;
  /// After the source: "-ldnnl", ...
  std::vector<std::string> libraries;
  /// Where shared objects are kept by a hash of everything above and the
  /// compiler's version (kernelCacheDirectory); empty: compile every time.
  std::string cacheDirectory;
};

/// Where compiled kernels of `kind` ("cpu", "emu") are cached:
/// $DLC_CACHE_DIR/<kind>, else $XDG_CACHE_HOME/dlc/<kind>, else
/// ~/.cache/dlc/<kind>, else /tmp/dlc-cache-<uid>/<kind>; empty (no cache)
/// when DLC_NO_CACHE is set to anything but 0 (`dlc --no-cache`).
std::string kernelCacheDirectory(const std::string &kind);

/// Whether DLC_NO_CACHE turns every compiled-kernel cache off.
bool kernelCacheDisabled();

/// The most a cache folder keeps: DLC_CACHE_MAX_MB megabytes (default
/// 2048). Past it, the least recently used objects go first.
uint64_t kernelCacheLimitBytes();

/// Deletes the least recently used files of `folder` (by modification
/// time, which a cache hit renews) until it holds at most 3/4 of
/// `limitBytes`, when it holds more than `limitBytes`.
void pruneCache(const std::string &folder, uint64_t limitBytes);

/// What `compiler --version` prints (run once per compiler and process):
/// part of every cache key, so that an upgraded compiler's output is never
/// confused with the old one's.
std::string compilerVersion(const std::string &compiler);

/// How many times this process has run a host compiler (cache hits do
/// not count): for tests of the cache.
uint64_t hostCompilerRuns();

/// The shared object `job` compiles to. Fails with INVALID_ARGUMENT, the
/// command line, the compiler's exit status and its output when the
/// compiler fails; INTERNAL when the folder cannot be made or written.
rt::Status compileOnHost(const HostCompileJob &job, std::vector<uint8_t> *sharedObject);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_COMMON_HOSTCOMPILER_H
