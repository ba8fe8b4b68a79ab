//===- Memory.h - Aligned host memory and overflow-checked math -*- C++ -*-===//
#pragma once

#include "runtime/base/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace dlc::rt {

/// a * b, or false on overflow.
inline bool mulOverflows(uint64_t a, uint64_t b, uint64_t *out) {
  return __builtin_mul_overflow(a, b, out);
}
/// a + b, or false on overflow.
inline bool addOverflows(uint64_t a, uint64_t b, uint64_t *out) {
  return __builtin_add_overflow(a, b, out);
}
inline bool isPowerOfTwo(uint64_t x) { return x && !(x & (x - 1)); }
/// Precondition: `alignment` is a power of two and the result fits.
inline uint64_t alignUp(uint64_t x, uint64_t alignment) {
  return (x + alignment - 1) & ~(alignment - 1);
}

/// Owned host memory aligned to a power of two (at least 64), zero-filled.
/// Large blocks come from mmap, so untouched pages cost nothing. Move-only.
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  ~AlignedBuffer();
  AlignedBuffer(AlignedBuffer &&other) noexcept;
  AlignedBuffer &operator=(AlignedBuffer &&other) noexcept;
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;

  /// Fails with RESOURCE_EXHAUSTED instead of throwing or aborting.
  static Status allocate(uint64_t size, uint64_t alignment, AlignedBuffer *out);

  uint8_t *data() const { return data_; }
  uint64_t size() const { return size_; }

private:
  void release();
  void *mapping_ = nullptr; ///< what munmap gets back
  uint64_t mappingSize_ = 0;
  uint8_t *data_ = nullptr;
  uint64_t size_ = 0;
};

/// Physical memory of this machine in bytes (0 when unknown).
uint64_t physicalMemoryBytes();

/// What this process can still allocate, in bytes, and where the figure
/// comes from: the kernel's estimate of memory available without swapping
/// (/proc/meminfo MemAvailable), or, when lower, the room left under the
/// address-space limit (RLIMIT_AS, `ulimit -v`) after the process's
/// current mappings. `bytes` is 0 and `source` empty when neither is known.
struct AvailableMemory {
  uint64_t bytes = 0;
  std::string source;
};
AvailableMemory availableMemory();
/// "123 bytes available (MemAvailable)", or "" when unknown.
std::string availableMemoryText();

} // namespace dlc::rt
