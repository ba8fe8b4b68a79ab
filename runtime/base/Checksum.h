//===- Checksum.h - CRC-32 and FNV-1a ---------------------------*- C++ -*-===//
#pragma once

#include "runtime/base/Span.h"

#include <cstdint>

namespace dlc::rt {

/// zlib's CRC-32 (the polynomial of gzip and PNG) of `bytes`, continuing
/// from `crc` (0 to start).
uint32_t crc32(ByteSpan bytes, uint32_t crc = 0);

/// 64-bit FNV-1a, continuing from `hash` (kFnvOffset to start).
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
uint64_t fnv1a64(ByteSpan bytes, uint64_t hash = kFnvOffset);

} // namespace dlc::rt
