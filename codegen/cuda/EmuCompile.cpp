//===- EmuCompile.cpp - CUDA sources to cuda-emu shared objects -----------===//

#include "codegen/cuda/EmuCompile.h"

#include "runtime/base/Checksum.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace dlc::codegen::cuda {

using rt::strCat;

namespace {

// The header's text, generated from runtime/hal/cuda_emu/dlc_cuda_emu.h.
#include "codegen/cuda/EmuHeader.inc"

std::atomic<uint64_t> gCompiles{0};

const char *const kStandIns[] = {"cuda_fp16.h", "cuda_bf16.h", "cuda_runtime.h", "cuda.h"};

const char *env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

bool readFile(const std::string &path, std::vector<uint8_t> *out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !out->empty();
}

bool writeFile(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  return static_cast<bool>(f);
}

bool makeDirectories(const std::string &path) {
  for (size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/')
      mkdir(path.substr(0, i).c_str(), 0755);
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string quote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string cacheDirectory(const EmuCompileOptions &options) {
  if (!options.cacheDirectory.empty())
    return options.cacheDirectory;
  if (const char *d = env("DLC_CACHE_DIR"))
    return std::string(d) + "/emu";
  if (const char *d = env("HOME"))
    return std::string(d) + "/.cache/dlc/emu";
  return "/tmp/dlc-emu";
}

} // namespace

const std::string &emuHeaderText() {
  static const std::string text = kEmuHeader;
  return text;
}

uint64_t emuCompileCount() { return gCompiles.load(); }

rt::Status compileForEmulation(const std::string &name, const std::string &source,
                               const std::vector<std::string> &entries,
                               const EmuCompileOptions &options,
                               std::vector<uint8_t> *sharedObject) {
  // The translation unit: the source as a GPU gets it, then the stubs.
  std::string unit = source;
  if (!unit.empty() && unit.back() != '\n')
    unit += '\n';
  unit += "\n// cuda-emu launch stubs (codegen/cuda/EmuCompile.cpp)\n";
  for (const std::string &entry : entries) {
    if (entry.empty() || entry.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                                                 "VWXYZ0123456789_") != std::string::npos)
      return rt::invalidArgument("kernel '", name, "': entry '", entry,
                                 "' is not a C identifier");
    unit += "DLC_EMU_LAUNCH_STUB(" + entry + ")\n";
  }
  std::string compiler = options.compiler;
  if (compiler.empty())
    compiler = env("CXX") ? env("CXX") : "c++";
  std::string flags = "-std=c++17 " + options.optimisation +
                      " -shared -fPIC -fvisibility=hidden -fno-gnu-unique -DDLC_CUDA_EMU -pthread";
  for (const std::string &f : options.extraFlags)
    flags += " " + f;

  // Cache: by the unit, the header, the compiler and the flags.
  uint64_t hash = rt::fnv1a64(rt::asBytes(unit));
  hash = rt::fnv1a64(rt::asBytes(emuHeaderText()), hash);
  hash = rt::fnv1a64(rt::asBytes(compiler + "\n" + flags), hash);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  const std::string dir = cacheDirectory(options);
  const std::string cached = dir + "/" + hex + ".so";
  if (options.useCache && readFile(cached, sharedObject))
    return rt::okStatus();

  // A private folder: the header, the stand-ins, the unit, the output.
  std::string work = (env("TMPDIR") ? std::string(env("TMPDIR")) : "/tmp") + "/dlc-emu-XXXXXX";
  if (!mkdtemp(work.data()))
    return rt::internalError("kernel '", name, "': cannot create a temporary folder: ",
                             std::strerror(errno));
  auto cleanup = [&] {
    std::string command = "rm -rf " + quote(work);
    (void)std::system(command.c_str());
  };
  bool written = writeFile(work + "/dlc_cuda_emu.h", emuHeaderText());
  for (const char *h : kStandIns)
    written = written && writeFile(work + "/" + h,
                                   strCat("// cuda-emu stand-in for <", h,
                                          ">: dlc_cuda_emu.h defines what kernels use.\n"
                                          "#pragma once\n"));
  const std::string file = work + "/" + "kernel.cu";
  written = written && writeFile(file, unit);
  if (!written) {
    cleanup();
    return rt::internalError("kernel '", name, "': cannot write into ", work);
  }
  const std::string output = work + "/kernel.so";
  const std::string command = strCat(compiler, " ", flags, " -I", quote(work), " -include ",
                                     quote(work + "/dlc_cuda_emu.h"), " -x c++ ", quote(file),
                                     " -o ", quote(output), " > ", quote(work + "/log"), " 2>&1");
  gCompiles.fetch_add(1);
  int rc = std::system(command.c_str());
  if (rc != 0) {
    std::ifstream logFile(work + "/log");
    std::stringstream log;
    log << logFile.rdbuf();
    cleanup();
    return rt::invalidArgument("kernel '", name, "': the host compiler failed (",
                               WIFEXITED(rc) ? WEXITSTATUS(rc) : rc, ") compiling it for cuda-emu:\n",
                               command, "\n", log.str());
  }
  if (!readFile(output, sharedObject)) {
    cleanup();
    return rt::internalError("kernel '", name, "': no shared object from ", command);
  }
  if (options.useCache && makeDirectories(dir)) {
    const std::string temporary = strCat(cached, ".", getpid());
    if (std::rename(output.c_str(), temporary.c_str()) == 0 &&
        std::rename(temporary.c_str(), cached.c_str()) != 0)
      std::remove(temporary.c_str());
  }
  cleanup();
  return rt::okStatus();
}

} // namespace dlc::codegen::cuda
