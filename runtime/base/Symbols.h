//===- Symbols.h - Entry points of a dlopen()ed library ---------*- C++ -*-===//
//
// The runtime links no vendor library (DESIGN §7): libcuda, NVRTC, Open MPI
// and NCCL are dlopen()ed and their entry points looked up into typed
// function pointers, all the same way.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <dlfcn.h>

#include <cstring>

namespace dlc::rt {

/// Sets `slot` (a function or data pointer) to `symbol` of `library`;
/// false, leaving it null, when the library has no such symbol.
template <typename T> bool bindSymbol(void *library, const char *symbol, T &slot) {
  void *p = dlsym(library, symbol);
  static_assert(sizeof(slot) == sizeof(p), "function and data pointers differ");
  std::memcpy(&slot, &p, sizeof p);
  return p != nullptr;
}

} // namespace dlc::rt
