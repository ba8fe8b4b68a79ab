//===- HostCompiler.cpp - C++ source to a shared object -------------------===//

#include "codegen/cpu/HostCompiler.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace dlc::codegen;

std::string dlc::codegen::hostArchitecture() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

HostCompileResult dlc::codegen::compileSharedObject(const std::string &source,
                                                    bool linkBlas) {
  HostCompileResult result;
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("dlc-kernels", dir)) {
    result.log = "cannot create a temporary directory";
    return result;
  }
  std::string cpp = (dir + "/kernels.cpp").str();
  std::string so = (dir + "/kernels.so").str();
  std::string out = (dir + "/compiler.log").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream file(cpp, ec);
    file << source;
  }
  const char *override = std::getenv("DLC_CXX");
  std::string compiler = override && *override ? override : "c++";
  auto program = llvm::sys::findProgramByName(compiler);
  if (!program) {
    result.log = "the host C++ compiler '" + compiler + "' is not on PATH";
    llvm::sys::fs::remove_directories(dir);
    return result;
  }
  std::vector<llvm::StringRef> args = {*program, "-std=c++17", "-O3", "-fPIC",
                                       "-shared", "-fno-math-errno",
                                       "-fno-trapping-math", "-w",
                                       "-o", so, cpp};
  if (linkBlas) {
    args.push_back("-ldnnl");
    args.push_back("-lopenblas");
    args.push_back("-lgomp");
  }
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(out),
                                                llvm::StringRef(out)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(*program, args, std::nullopt, redirects, 0,
                                     0, &error);
  if (rc != 0) {
    result.log = "";
    for (llvm::StringRef a : args)
      result.log += a.str() + " ";
    result.log += "\nexited with " + std::to_string(rc) + (error.empty() ? "" : ": " + error) + "\n";
    if (auto log = llvm::MemoryBuffer::getFile(out))
      result.log += (*log)->getBuffer().str();
  } else if (auto bytes = llvm::MemoryBuffer::getFile(so, false, false)) {
    llvm::StringRef data = (*bytes)->getBuffer();
    result.sharedObject.assign(data.begin(), data.end());
    result.ok = true;
  } else {
    result.log = "the compiler wrote no shared object";
  }
  llvm::sys::fs::remove_directories(dir);
  return result;
}
