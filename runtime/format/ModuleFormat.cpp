//===- ModuleFormat.cpp - Constants and layout of a .dlcm file ------------===//

#include "runtime/format/ModuleFormat.h"

#include "runtime/base/Checksum.h"

#include <cstring>

namespace dlc::format {

namespace {
template <typename T> void put(uint8_t *out, size_t offset, T value) {
  for (size_t i = 0; i < sizeof(T); ++i)
    out[offset + i] = static_cast<uint8_t>(static_cast<uint64_t>(value) >> (8 * i));
}
template <typename T> T get(const uint8_t *in, size_t offset) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    v |= static_cast<uint64_t>(in[offset + i]) << (8 * i);
  return static_cast<T>(v);
}
} // namespace

void encodePrelude(const Prelude &p, uint8_t out[kPreludeSize]) {
  std::memset(out, 0, kPreludeSize);
  std::memcpy(out, p.magic, 4);
  put<uint16_t>(out, 4, p.major);
  put<uint16_t>(out, 6, p.minor);
  put<uint64_t>(out, 8, p.headerOffset);
  put<uint64_t>(out, 16, p.headerSize);
  put<uint64_t>(out, 24, p.fileSize);
  put<uint32_t>(out, 32, p.headerCrc32);
  put<uint32_t>(out, 36, p.flags);
  put<uint32_t>(out, 60, rt::crc32(ByteSpan(out, 60)));
}

Prelude decodePrelude(const uint8_t in[kPreludeSize]) {
  Prelude p;
  std::memcpy(p.magic, in, 4);
  p.major = get<uint16_t>(in, 4);
  p.minor = get<uint16_t>(in, 6);
  p.headerOffset = get<uint64_t>(in, 8);
  p.headerSize = get<uint64_t>(in, 16);
  p.fileSize = get<uint64_t>(in, 24);
  p.headerCrc32 = get<uint32_t>(in, 32);
  p.flags = get<uint32_t>(in, 36);
  p.preludeCrc32 = get<uint32_t>(in, 60);
  return p;
}

uint64_t dtypeSize(fb::DType dtype) {
  switch (dtype) {
  case fb::DType::f64:
  case fb::DType::i64:
    return 8;
  case fb::DType::f32:
  case fb::DType::i32:
    return 4;
  case fb::DType::f16:
  case fb::DType::bf16:
    return 2;
  case fb::DType::i8:
  case fb::DType::u8:
  case fb::DType::i1:
    return 1;
  case fb::DType::invalid:
    return 0;
  }
  return 0;
}

std::string dtypeName(fb::DType dtype) {
  if (dtypeSize(dtype) == 0)
    return "invalid(" + std::to_string(static_cast<int>(dtype)) + ")";
  return fb::EnumNameDType(dtype);
}

std::string shapeString(const int64_t *dims, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i)
      s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

uint64_t collectivesHash(const std::vector<CollectiveDesc> &collectives) {
  uint64_t h = rt::kFnvOffset;
  for (const CollectiveDesc &c : collectives) {
    uint8_t fixed[15];
    fixed[0] = static_cast<uint8_t>(c.op);
    fixed[1] = static_cast<uint8_t>(c.reduce);
    fixed[2] = static_cast<uint8_t>(c.dtype);
    put<int64_t>(fixed, 3, c.count);
    put<int32_t>(fixed, 11, c.peer);
    h = rt::fnv1a64(ByteSpan(fixed, sizeof fixed), h);
    static const uint8_t zero = 0, end = 0xFF;
    for (const std::string &axis : c.axes) {
      h = rt::fnv1a64(rt::asBytes(axis), h);
      h = rt::fnv1a64(ByteSpan(&zero, 1), h);
    }
    h = rt::fnv1a64(ByteSpan(&end, 1), h);
  }
  return h;
}

} // namespace dlc::format
