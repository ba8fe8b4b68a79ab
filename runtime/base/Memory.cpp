//===- Memory.cpp - Aligned host memory -----------------------------------===//

#include "runtime/base/Memory.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

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
    return resourceExhausted("out of memory for ", size, " bytes", [] {
      std::string available = availableMemoryText();
      return available.empty() ? available : ": " + available;
    }());
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

/// The value in kB of `key` ("MemAvailable:") in /proc file `path`, in
/// bytes; 0 when absent.
static uint64_t procKilobytes(const char *path, const char *key) {
  FILE *f = std::fopen(path, "r");
  if (!f)
    return 0;
  char line[256];
  uint64_t bytes = 0;
  const size_t keyLength = std::strlen(key);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, key, keyLength) == 0) {
      unsigned long long kb = 0;
      if (std::sscanf(line + keyLength, "%llu", &kb) == 1)
        bytes = static_cast<uint64_t>(kb) * 1024;
      break;
    }
  }
  std::fclose(f);
  return bytes;
}

AvailableMemory availableMemory() {
  AvailableMemory result;
  if (uint64_t bytes = procKilobytes("/proc/meminfo", "MemAvailable:")) {
    result.bytes = bytes;
    result.source = "MemAvailable";
  }
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const uint64_t cap = static_cast<uint64_t>(limit.rlim_cur);
    const uint64_t used = procKilobytes("/proc/self/status", "VmSize:");
    const uint64_t room = cap > used ? cap - used : 0;
    if (result.source.empty() || room < result.bytes) {
      result.bytes = room;
      result.source = "under the address-space limit (ulimit -v) of " + std::to_string(cap) +
                      " bytes, " + std::to_string(used) + " in use";
    }
  }
  return result;
}

std::string availableMemoryText() {
  AvailableMemory available = availableMemory();
  if (available.source.empty())
    return "";
  return std::to_string(available.bytes) + " bytes available (" + available.source + ")";
}

} // namespace dlc::rt
