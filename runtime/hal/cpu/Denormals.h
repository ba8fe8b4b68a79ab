//===- Denormals.h - Kernels run with denormal floats flushed to zero -*- C++ -*-===//
//
// CPU kernels run with the x86 MXCSR's FTZ (denormal results become zero)
// and DAZ (denormal inputs read as zero) bits set, as TensorFlow's and
// oneDNN's CPU kernels do. An operation on a denormal costs on the order of
// a hundred cycles on x86 cores, and training makes them: Adam's moments of
// a weight whose gradient is mostly zero decay by beta1 each step into the
// denormal range, where the fused update of the MNIST MLP ran 4x slower
// (measured: 1.78 -> 0.41 ms per step). Values below 1.2e-38 (f32) are lost,
// far under every tolerance dlc checks against its oracle.
//
// DLC_CPU_DENORMALS=keep turns it off. Elsewhere than x86 it does nothing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define DLC_HAVE_MXCSR 1
#endif

namespace dlc::rt::hal::cpu {

/// Whether kernels flush denormals (DLC_CPU_DENORMALS is not "keep").
inline bool flushDenormalsByDefault() {
  const char *mode = std::getenv("DLC_CPU_DENORMALS");
  return !(mode && std::strcmp(mode, "keep") == 0);
}

/// Whether kernels split their rows the same way whatever the number of
/// threads (ThreadPool's fixedChunks): DLC_DETERMINISTIC=1, which `dlc
/// train --deterministic` sets, so that 1, 2 and 4 ranks (each with its
/// share of the cores) compute bit for bit the same.
inline bool fixedChunksByDefault() {
  const char *mode = std::getenv("DLC_DETERMINISTIC");
  return mode && std::strcmp(mode, "1") == 0;
}

/// Sets FTZ and DAZ on this thread for its lifetime; the previous mode comes
/// back at the end of the scope.
class ScopedFlushDenormals {
public:
  explicit ScopedFlushDenormals(bool enabled) {
#ifdef DLC_HAVE_MXCSR
    if (enabled) {
      saved_ = _mm_getcsr();
      _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
      active_ = true;
    }
#else
    (void)enabled;
#endif
  }
  ~ScopedFlushDenormals() {
#ifdef DLC_HAVE_MXCSR
    if (active_)
      _mm_setcsr(saved_);
#endif
  }
  ScopedFlushDenormals(const ScopedFlushDenormals &) = delete;
  ScopedFlushDenormals &operator=(const ScopedFlushDenormals &) = delete;

private:
  static constexpr unsigned kFlushToZero = 0x8000;     // MXCSR bit 15
  static constexpr unsigned kDenormalsAreZero = 0x0040; // MXCSR bit 6
  unsigned saved_ = 0;
  bool active_ = false;
};

} // namespace dlc::rt::hal::cpu
