//===- Checksum.cpp - CRC-32 and FNV-1a -----------------------------------===//

#include "runtime/base/Checksum.h"

#include <zlib.h>

namespace dlc::rt {

uint32_t crc32(ByteSpan bytes, uint32_t crc) {
  if (bytes.empty()) // zlib treats a null buffer as "start", returning 0
    return crc;
  return static_cast<uint32_t>(::crc32_z(crc, bytes.data(), bytes.size()));
}

uint64_t fnv1a64(ByteSpan bytes, uint64_t hash) {
  for (uint8_t b : bytes) {
    hash ^= b;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

} // namespace dlc::rt
