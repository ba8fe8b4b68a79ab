//===- Tensor.cpp - float64 reference tensor for the dlc oracle -----------===//

#include "oracle/kernels/Tensor.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace dlc::oracle {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F64: return "f64";
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I64: return "i64";
  case DType::I32: return "i32";
  case DType::I1: return "i1";
  }
  return "<invalid dtype>";
}

bool isFloat(DType dtype) {
  return dtype == DType::F64 || dtype == DType::F32 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

bool isInteger(DType dtype) {
  return dtype == DType::I64 || dtype == DType::I32 || dtype == DType::I1;
}

namespace {

/// Round a non-negative double to the nearest integer, ties to even.
/// Independent of the floating-point rounding mode.
double roundHalfEven(double q) {
  assert(q >= 0);
  double f = std::floor(q);
  double frac = q - f; // exact
  if (frac > 0.5)
    return f + 1;
  if (frac < 0.5)
    return f;
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1;
}

/// IEEE binary16: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits.
/// Normal range [2^-14, 65504]; subnormal spacing 2^-24.  We round directly
/// from the double (no intermediate float, so no double rounding): the
/// spacing of representable values around |v| is 2^(max(e,-14) - 10) where
/// 2^e <= |v| < 2^(e+1); dividing by that power of two is exact, so rounding
/// the quotient to an integer (ties to even) is exactly binary16 RNE.
double roundF16(double v) {
  if (std::isnan(v) || std::isinf(v) || v == 0.0)
    return v;
  double a = std::fabs(v);
  // 65520 is the midpoint between 65504 (max finite) and 65536 (= 2^16, the
  // next value if the exponent range were unbounded); ties go to the even
  // significand, i.e. 65536, which overflows to infinity.
  if (a >= 65520.0)
    return std::copysign(std::numeric_limits<double>::infinity(), v);
  int e2 = 0;
  std::frexp(a, &e2); // a = m * 2^e2 with m in [0.5, 1)
  int exponent = std::max(e2 - 1, -14);
  double quantum = std::ldexp(1.0, exponent - 10);
  double rounded = roundHalfEven(a / quantum) * quantum;
  return std::copysign(rounded, v);
}

/// bfloat16: round the float32 bit pattern to its top 16 bits (RNE).
double roundBF16(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(f))
    return v;
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof(bits));
  uint32_t lsb = (bits >> 16) & 1u;
  bits += 0x7FFFu + lsb; // carries into the exponent give inf correctly
  bits &= 0xFFFF0000u;
  float r = 0;
  std::memcpy(&r, &bits, sizeof(r));
  return static_cast<double>(r);
}

} // namespace

int64_t toInt64(double v) {
  if (std::isnan(v))
    return 0;
  // 2^63 is exactly representable; anything >= it saturates.
  if (v >= 9223372036854775808.0)
    return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v); // truncates toward zero
}

double roundTo(DType dtype, double v) {
  switch (dtype) {
  case DType::F64:
    return v;
  case DType::F32:
    return static_cast<double>(static_cast<float>(v));
  case DType::F16:
    return roundF16(v);
  case DType::BF16:
    return roundBF16(v);
  case DType::I64:
    return static_cast<double>(toInt64(v));
  case DType::I32: {
    uint64_t u = static_cast<uint64_t>(toInt64(v)); // modulo 2^64
    uint32_t low = static_cast<uint32_t>(u);         // modulo 2^32
    int64_t wrapped = low >= 0x80000000u
                          ? static_cast<int64_t>(low) - (int64_t(1) << 32)
                          : static_cast<int64_t>(low);
    return static_cast<double>(wrapped);
  }
  case DType::I1:
    return v != 0.0 ? 1.0 : 0.0;
  }
  assert(false && "invalid dtype");
  return v;
}

int64_t shapeNumel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    assert(d >= 0 && "negative dimension");
    n *= d;
  }
  return n;
}

int64_t Tensor::numel() const { return shapeNumel(shape); }

Tensor Tensor::zeros(DType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dtype;
  t.data.assign(static_cast<size_t>(shapeNumel(shape)), 0.0);
  t.shape = std::move(shape);
  return t;
}

Tensor Tensor::fromValues(DType dtype, std::vector<int64_t> shape,
                          std::vector<double> values) {
  assert(static_cast<int64_t>(values.size()) == shapeNumel(shape) &&
         "value count does not match shape");
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = std::move(values);
  for (double &v : t.data)
    v = roundTo(dtype, v);
  return t;
}

Tensor Tensor::scalar(DType dtype, double value) {
  return fromValues(dtype, {}, {value});
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::vector<int64_t> broadcastIndexMap(const std::vector<int64_t> &outShape,
                                       const std::vector<int64_t> &inShape) {
  const size_t outRank = outShape.size();
  const size_t inRank = inShape.size();
  assert(inRank <= outRank && "input rank exceeds broadcast rank");
  // Input strides aligned to the output's dims; 0 where the input dim is 1
  // (broadcast) or missing.
  std::vector<int64_t> inStrides = contiguousStrides(inShape);
  std::vector<int64_t> aligned(outRank, 0);
  for (size_t i = 0; i < inRank; ++i) {
    size_t o = outRank - inRank + i;
    assert((inShape[i] == 1 || inShape[i] == outShape[o]) &&
           "shape does not broadcast");
    aligned[o] = inShape[i] == 1 ? 0 : inStrides[i];
  }
  int64_t n = shapeNumel(outShape);
  std::vector<int64_t> map(static_cast<size_t>(n));
  std::vector<int64_t> idx(outRank, 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t off = 0;
    for (size_t d = 0; d < outRank; ++d)
      off += idx[d] * aligned[d];
    map[static_cast<size_t>(flat)] = off;
    // Increment the multi-index (row-major).
    for (int64_t d = static_cast<int64_t>(outRank) - 1; d >= 0; --d) {
      if (++idx[d] < outShape[d])
        break;
      idx[d] = 0;
    }
  }
  return map;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      os << ", ";
    os << shape[i];
  }
  os << ']';
  return os.str();
}

} // namespace dlc::oracle
