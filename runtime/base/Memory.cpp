//===- Memory.cpp - Aligned host memory -----------------------------------===//

#include "runtime/base/Memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <utility>

namespace dlc::rt {

AlignedBuffer::~AlignedBuffer() { release(); }

AlignedBuffer::AlignedBuffer(AlignedBuffer &&other) noexcept { *this = std::move(other); }

AlignedBuffer &AlignedBuffer::operator=(AlignedBuffer &&other) noexcept {
  if (this != &other) {
    release();
    std::swap(mapping_, other.mapping_);
    std::swap(mappingSize_, other.mappingSize_);
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }
  return *this;
}

void AlignedBuffer::release() {
  if (mapping_)
    munmap(mapping_, mappingSize_);
  mapping_ = nullptr;
  mappingSize_ = 0;
  data_ = nullptr;
  size_ = 0;
}

Status AlignedBuffer::allocate(uint64_t size, uint64_t alignment, AlignedBuffer *out) {
  if (!isPowerOfTwo(alignment) || alignment > (uint64_t(1) << 30))
    return invalidArgument("alignment ", alignment, " is not a power of two up to 2^30");
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  // mmap returns page-aligned memory; ask for more when the alignment is larger.
  const uint64_t slack = alignment > page ? alignment : 0;
  uint64_t total = 0;
  if (addOverflows(size == 0 ? 1 : size, slack, &total) || total > (uint64_t(1) << 62))
    return resourceExhausted("cannot allocate ", size, " bytes");
  void *p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return resourceExhausted("out of memory allocating ", size, " bytes");
  AlignedBuffer result;
  result.mapping_ = p;
  result.mappingSize_ = total;
  result.data_ = reinterpret_cast<uint8_t *>(alignUp(reinterpret_cast<uintptr_t>(p), alignment));
  result.size_ = size;
  *out = std::move(result);
  return okStatus();
}

uint64_t physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
}

} // namespace dlc::rt
