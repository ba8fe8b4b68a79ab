//===- ModuleFormat.cpp - Constants and layout of a .dlcm file ------------===//

#include "runtime/format/ModuleFormat.h"

#include "runtime/base/Checksum.h"

#include <cmath>
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

// The wire lists the DTypes in their order after `invalid` (0), so that a
// value converts by an offset of one; this holds the two enums to that.
static_assert(static_cast<int>(fb::DType::f64) == static_cast<int>(DType::F64) + 1);
static_assert(static_cast<int>(fb::DType::f32) == static_cast<int>(DType::F32) + 1);
static_assert(static_cast<int>(fb::DType::f16) == static_cast<int>(DType::F16) + 1);
static_assert(static_cast<int>(fb::DType::bf16) == static_cast<int>(DType::BF16) + 1);
static_assert(static_cast<int>(fb::DType::i64) == static_cast<int>(DType::I64) + 1);
static_assert(static_cast<int>(fb::DType::i32) == static_cast<int>(DType::I32) + 1);
static_assert(static_cast<int>(fb::DType::i8) == static_cast<int>(DType::I8) + 1);
static_assert(static_cast<int>(fb::DType::u8) == static_cast<int>(DType::U8) + 1);
static_assert(static_cast<int>(fb::DType::i1) == static_cast<int>(DType::I1) + 1);
static_assert(fb::DType::MAX == fb::DType::i1, "a wire dtype without a DType");

std::optional<DType> dtypeFromWire(fb::DType wire) {
  if (wire == fb::DType::invalid || wire > fb::DType::MAX)
    return std::nullopt;
  return static_cast<DType>(static_cast<int>(wire) - 1);
}

fb::DType wireDType(DType dtype) {
  return static_cast<fb::DType>(static_cast<int>(dtype) + 1);
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
    fixed[2] = static_cast<uint8_t>(wireDType(c.dtype));
    put<int64_t>(fixed, 3, c.count);
    put<int32_t>(fixed, 11, c.peer);
    h = rt::fnv1a64(ByteSpan(fixed, sizeof fixed), h);
    if (c.outer != 1) { // hashed only where set: older lists keep their hash
      uint8_t outer[8];
      put<int64_t>(outer, 0, c.outer);
      h = rt::fnv1a64(ByteSpan(outer, sizeof outer), h);
    }
    static const uint8_t zero = 0, end = 0xFF;
    for (const std::string &axis : c.axes) {
      h = rt::fnv1a64(rt::asBytes(axis), h);
      h = rt::fnv1a64(ByteSpan(&zero, 1), h);
    }
    h = rt::fnv1a64(ByteSpan(&end, 1), h);
  }
  return h;
}

std::optional<rt::LibraryGemmCall> libraryGemmOf(const fb::Kernel &kernel) {
  const fb::LibraryGemm *g = kernel.library_gemm();
  if (!g)
    return std::nullopt;
  rt::LibraryGemmCall call;
  call.a = g->a(), call.b = g->b(), call.d = g->d();
  call.bias = g->bias(), call.c = g->c();
  call.operandDtype = dtypeFromWire(g->operand_dtype()).value_or(DType::F32);
  call.resultDtype = dtypeFromWire(g->result_dtype()).value_or(DType::F32);
  call.biasDtype = dtypeFromWire(g->bias_dtype()).value_or(DType::F32);
  call.transposeA = g->transpose_a(), call.transposeB = g->transpose_b(), call.tf32 = g->tf32();
  call.batch = g->batch(), call.m = g->m(), call.n = g->n(), call.k = g->k();
  call.strideA = g->stride_a(), call.strideB = g->stride_b();
  call.activation = static_cast<rt::LibraryGemmCall::Activation>(g->activation());
  return call;
}

std::optional<Draw> drawFromWire(const fb::Draw &wire) {
  Draw draw;
  switch (wire.kind()) {
  case fb::DrawKind::ones: draw.kind = InitKind::Ones; break;
  case fb::DrawKind::normal: draw.kind = InitKind::Normal; break;
  case fb::DrawKind::uniform: draw.kind = InitKind::Uniform; break;
  case fb::DrawKind::xavier: draw.kind = InitKind::Xavier; break;
  case fb::DrawKind::he: draw.kind = InitKind::He; break;
  default: return std::nullopt;
  }
  draw.options.mean = wire.mean(), draw.options.std = wire.std();
  draw.options.low = wire.low(), draw.options.high = wire.high();
  draw.options.seed = wire.seed();
  for (double v : {draw.options.mean, draw.options.std, draw.options.low, draw.options.high})
    if (!std::isfinite(v))
      return std::nullopt;
  return draw;
}

fb::DrawKind wireDrawKind(InitKind kind) {
  switch (kind) {
  case InitKind::Normal: return fb::DrawKind::normal;
  case InitKind::Uniform: return fb::DrawKind::uniform;
  case InitKind::Xavier: return fb::DrawKind::xavier;
  case InitKind::He: return fb::DrawKind::he;
  default: return fb::DrawKind::ones;
  }
}

rt::Status drawTensor(const Draw &draw, DType dtype, const std::vector<int64_t> &shape,
                      HostTensor *out) {
  try {
    *out = initParam(draw.kind, draw.options, dtype, shape);
  } catch (const std::exception &e) { // an invalid shape: the reader checked it
    return rt::internalError("drawing a tensor failed: ", e.what());
  }
  return rt::okStatus();
}

} // namespace dlc::format
