//===- DType.cpp - the element types of dlc and their encodings -----------===//

#include "support/DType.h"

#include <cassert>
#include <cmath>
#include <limits>

namespace dlc {

static constexpr DType kAllDTypes[] = {DType::F64, DType::F32, DType::F16,
                                       DType::BF16, DType::I64, DType::I32,
                                       DType::I8,  DType::U8,  DType::I1};

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F64: return "f64";
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I64: return "i64";
  case DType::I32: return "i32";
  case DType::I8: return "i8";
  case DType::U8: return "u8";
  case DType::I1: return "i1";
  }
  return "<invalid dtype>";
}

std::optional<DType> parseDType(std::string_view name) {
  if (name == "bool")
    return DType::I1;
  for (DType dtype : kAllDTypes)
    if (name == dtypeName(dtype))
      return dtype;
  return std::nullopt;
}

size_t elementSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64: return 8;
  case DType::F32:
  case DType::I32: return 4;
  case DType::F16:
  case DType::BF16: return 2;
  case DType::I8:
  case DType::U8:
  case DType::I1: return 1;
  }
  return 1;
}

bool isFloat(DType dtype) {
  return dtype == DType::F64 || dtype == DType::F32 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

bool isInteger(DType dtype) { return !isFloat(dtype); }

//===----------------------------------------------------------------------===//
// f16 / bf16
//===----------------------------------------------------------------------===//

/// Rounds a non-negative double to the nearest integer, ties to even,
/// whatever the floating-point rounding mode.
static double roundHalfEven(double q) {
  assert(q >= 0);
  double f = std::floor(q);
  double frac = q - f; // exact
  if (frac > 0.5)
    return f + 1;
  if (frac < 0.5)
    return f;
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1;
}

/// A 16-bit float with `mantBits` fraction and `expBits` exponent bits.
static double decodeSmallFloat(uint16_t bits, int mantBits, int expBits) {
  int bias = (1 << (expBits - 1)) - 1;
  bool negative = (bits >> 15) & 1;
  int exponent = (bits >> mantBits) & ((1 << expBits) - 1);
  int mantissa = bits & ((1 << mantBits) - 1);
  double v;
  if (exponent == (1 << expBits) - 1)
    v = mantissa ? std::numeric_limits<double>::quiet_NaN()
                 : std::numeric_limits<double>::infinity();
  else if (exponent == 0)
    v = std::ldexp(static_cast<double>(mantissa), 1 - bias - mantBits);
  else
    v = std::ldexp(static_cast<double>(mantissa | (1 << mantBits)),
                   exponent - bias - mantBits);
  return negative ? -v : v;
}

/// Round-to-nearest-even from the double. The spacing of representable
/// values around |v| is a power of two, so scaling by it is exact and
/// rounding the quotient to an integer is exactly the format's rounding; a
/// carry out of the fraction moves into the exponent, up to infinity.
static uint16_t encodeSmallFloat(double value, int mantBits, int expBits) {
  const int bias = (1 << (expBits - 1)) - 1;
  const uint32_t expMask = ((1u << expBits) - 1) << mantBits;
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value))
    return static_cast<uint16_t>(sign | expMask | (1u << (mantBits - 1)));
  double a = std::fabs(value);
  if (std::isinf(a))
    return static_cast<uint16_t>(sign | expMask);
  if (a == 0)
    return sign;
  int e2 = 0;
  std::frexp(a, &e2);
  int e = e2 - 1; // a in [2^e, 2^(e+1))
  if (e > bias)
    return static_cast<uint16_t>(sign | expMask);
  uint32_t bits;
  if (e < 1 - bias) { // subnormal, or rounds up to the smallest normal
    bits = static_cast<uint32_t>(
        roundHalfEven(std::ldexp(a, bias - 1 + mantBits)));
  } else { // the rounded significand is in [2^mantBits, 2^(mantBits+1)]
    double m = roundHalfEven(std::ldexp(a, mantBits - e));
    bits = (static_cast<uint32_t>(e + bias) << mantBits) +
           (static_cast<uint32_t>(m) - (1u << mantBits));
  }
  if (bits >= expMask)
    return static_cast<uint16_t>(sign | expMask);
  return static_cast<uint16_t>(sign | bits);
}

uint16_t toF16Bits(double value) { return encodeSmallFloat(value, 10, 5); }
double fromF16Bits(uint16_t bits) { return decodeSmallFloat(bits, 10, 5); }
uint16_t toBF16Bits(double value) { return encodeSmallFloat(value, 7, 8); }
double fromBF16Bits(uint16_t bits) { return decodeSmallFloat(bits, 7, 8); }

//===----------------------------------------------------------------------===//
// roundTo
//===----------------------------------------------------------------------===//

int64_t toInt64(double value) {
  if (std::isnan(value))
    return 0;
  // 2^63 is exactly representable; anything >= it saturates.
  if (value >= 9223372036854775808.0)
    return std::numeric_limits<int64_t>::max();
  if (value <= -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(value); // truncates toward zero
}

/// toInt64(v) wrapped modulo 2^bits to two's complement (or unsigned).
static double wrapTo(double v, unsigned bits, bool isSigned) {
  uint64_t u = static_cast<uint64_t>(toInt64(v)) & ((uint64_t(1) << bits) - 1);
  if (isSigned && (u >> (bits - 1)))
    return static_cast<double>(static_cast<int64_t>(u) -
                               (int64_t(1) << bits));
  return static_cast<double>(u);
}

double roundTo(DType dtype, double v) {
  if (std::isnan(v) && isFloat(dtype))
    return v;
  switch (dtype) {
  case DType::F64: return v;
  case DType::F32: return static_cast<double>(static_cast<float>(v));
  case DType::F16: return fromF16Bits(toF16Bits(v));
  case DType::BF16:
    return fromBF16Bits(toBF16Bits(static_cast<float>(v)));
  case DType::I64: return static_cast<double>(toInt64(v));
  case DType::I32: return wrapTo(v, 32, true);
  case DType::I8: return wrapTo(v, 8, true);
  case DType::U8: return wrapTo(v, 8, false);
  case DType::I1: return v != 0.0 ? 1.0 : 0.0;
  }
  assert(false && "invalid dtype");
  return v;
}

} // namespace dlc
