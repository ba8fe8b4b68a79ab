//===- KernelDump.cpp - generated sources into DLC_KERNEL_DUMP_DIR --------===//

#include "codegen/common/KernelDump.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

void dlc::codegen::dumpKernelSource(const std::string &fileName, const std::string &source) {
  const char *dir = std::getenv("DLC_KERNEL_DUMP_DIR");
  if (!dir || !*dir)
    return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream file(std::filesystem::path(dir) / fileName, std::ios::binary | std::ios::trunc);
  file << source;
}
