//===- TestGen.cpp - Write the runtime's test modules -------------------===//
//
// Usage: dlc-runtime-testgen NAME OUT.dlcm     (NAME from --list)
//        dlc-runtime-testgen --list
//
// Test-only: the lit tests of test/runtime run the runtime's tools on these.
//
//===----------------------------------------------------------------------===//

#include "test/unit/runtime/TestModules.h"

#include <cstdio>
#include <cstring>
#include <fstream>

int main(int argc, char **argv) {
  using namespace dlc::testing;
  if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
    for (const std::string &name : variantNames())
      std::printf("%s\n", name.c_str());
    return 0;
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: dlc-runtime-testgen NAME OUT.dlcm | --list\n");
    return 2;
  }
  Bytes bytes;
  Status s = buildVariant(argv[1], &bytes);
  if (!s.ok()) {
    std::fprintf(stderr, "dlc-runtime-testgen: %s\n", s.toString().c_str());
    return 2;
  }
  std::ofstream out(argv[2], std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "dlc-runtime-testgen: cannot write %s\n", argv[2]);
    return 2;
  }
  return 0;
}
