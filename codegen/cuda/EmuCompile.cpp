//===- EmuCompile.cpp - CUDA sources to cuda-emu shared objects -----------===//

#include "codegen/cuda/EmuCompile.h"

#include "codegen/common/HostCompiler.h"

#include <cstdlib>

namespace dlc::codegen::cuda {

using rt::strCat;

namespace {

struct EmbeddedHeader {
  const char *name;
  const char *text;
};

// dlc_cuda_emu.h, dlc_emu_launch.h and the stand-in CUDA headers, generated
// from runtime/hal/cuda_emu by EmbedHeaders.cmake.
#include "codegen/cuda/EmuHeaders.inc"

const char *env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

std::string cacheDirectory(const EmuCompileOptions &options) {
  if (!options.cacheDirectory.empty())
    return options.cacheDirectory;
  return kernelCacheDirectory("emu");
}

} // namespace

rt::Status compileForEmulation(const std::string &name, const std::string &source,
                               const std::vector<std::string> &entries,
                               const EmuCompileOptions &options,
                               std::vector<uint8_t> *sharedObject) {
  // The translation unit: the source as a GPU gets it, then the stubs.
  HostCompileJob job;
  job.source = source;
  if (!job.source.empty() && job.source.back() != '\n')
    job.source += '\n';
  job.source += "\n// cuda-emu launch stubs (codegen/cuda/EmuCompile.cpp)\n";
  for (const std::string &entry : entries) {
    if (entry.empty() || entry.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                                                 "VWXYZ0123456789_") != std::string::npos)
      return rt::invalidArgument("kernel '", name, "': entry '", entry,
                                 "' is not a C identifier");
    job.source += "DLC_EMU_LAUNCH_STUB(" + entry + ")\n";
  }
  job.sourceName = "kernel.cu";
  job.language = "c++";

  job.compiler = options.compiler;
  if (job.compiler.empty())
    job.compiler = env("CXX") ? env("CXX") : "c++";
  job.flags = {"-std=c++17"};
  if (!options.optimisation.empty())
    job.flags.push_back(options.optimisation);
  for (const char *flag : {"-shared", "-fPIC", "-fvisibility=hidden", "-fno-gnu-unique",
                           "-DDLC_CUDA_EMU", "-pthread"})
    job.flags.push_back(flag);
  job.flags.insert(job.flags.end(), options.extraFlags.begin(), options.extraFlags.end());
  for (const EmbeddedHeader &header : kEmuHeaders)
    job.headers.push_back({header.name, header.text});
  job.preincludes = {"dlc_cuda_emu.h"};
  if (options.useCache)
    job.cacheDirectory = cacheDirectory(options);

  rt::Status status = compileOnHost(job, sharedObject);
  if (!status.ok())
    return rt::Status(status.code(), strCat("kernel '", name, "': compiling it for cuda-emu: ",
                                            status.message()));
  return status;
}

} // namespace dlc::codegen::cuda
