//===- SessionInternal.h - Helpers shared by Session's files --*- C++ -*-===//
//
// Internal to runtime/executor: how Session's files allocate and lay out
// device memory and read the module's optional vectors.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_EXECUTOR_SESSIONINTERNAL_H
#define DLC_RUNTIME_EXECUTOR_SESSIONINTERNAL_H

#include "runtime/base/Status.h"
#include "runtime/hal/Device.h"

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <memory>

namespace dlc::rt::detail {

/// The alignment of every staging, weight and state buffer's pieces.
constexpr uint64_t kStagingAlignment = 256;

/// device.allocate, naming in a failure what the memory is for ("the
/// arena") and the device: "cannot allocate the arena (N bytes) on device
/// 'cpu': out of memory for N bytes: M bytes available (MemAvailable)".
Status allocateFor(hal::Device &device, const char *what, uint64_t bytes, uint64_t alignment,
                   std::unique_ptr<hal::Buffer> *out);

inline uint64_t roundUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/// The size of an optional vector of the module (0 when absent).
template <typename T> uint32_t sizeOf(const flatbuffers::Vector<T> *v) {
  return v ? v->size() : 0;
}

} // namespace dlc::rt::detail

#endif // DLC_RUNTIME_EXECUTOR_SESSIONINTERNAL_H
