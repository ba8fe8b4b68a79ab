//===- Elementwise.cpp - unary, binary, compare, select, cast -------------===//

#include "oracle/kernels/Kernels.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>

namespace dlc::oracle {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double sigmoid(double x) {
  if (x >= 0)
    return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

double applyUnary(UnaryOp op, double x) {
  switch (op) {
  case UnaryOp::Neg:
    return -x;
  case UnaryOp::Abs:
    return std::fabs(x);
  case UnaryOp::Exp:
    return std::exp(x);
  case UnaryOp::Log:
    return std::log(x);
  case UnaryOp::Sqrt:
    return std::sqrt(x);
  case UnaryOp::Rsqrt:
    return 1.0 / std::sqrt(x);
  case UnaryOp::Tanh:
    return std::tanh(x);
  case UnaryOp::Sigmoid:
    return sigmoid(x);
  case UnaryOp::Relu:
    if (std::isnan(x))
      return x;
    return x > 0 ? x : 0.0;
  case UnaryOp::GeluErf:
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  case UnaryOp::GeluTanh: {
    const double pi = 3.14159265358979323846;
    const double c = std::sqrt(2.0 / pi);
    return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
  }
  case UnaryOp::Silu:
    return x * sigmoid(x);
  case UnaryOp::Erf:
    return std::erf(x);
  case UnaryOp::Floor:
    return std::floor(x);
  case UnaryOp::Ceil:
    return std::ceil(x);
  case UnaryOp::Round:
    return std::nearbyint(x); // the default rounding mode: halves to even
  case UnaryOp::Sin:
    return std::sin(x);
  case UnaryOp::Cos:
    return std::cos(x);
  case UnaryOp::Atan:
    return std::atan(x);
  }
  assert(false && "invalid unary op");
  return kNaN;
}

// Two's-complement wrapping helpers (all arithmetic in uint64, mod 2^64).
int64_t fromBits(uint64_t u) { return static_cast<int64_t>(u); }
uint64_t toBits(int64_t v) { return static_cast<uint64_t>(v); }

int64_t wrappingPow(int64_t base, int64_t exponent) {
  assert(exponent >= 0);
  uint64_t result = 1;
  uint64_t b = toBits(base);
  uint64_t e = static_cast<uint64_t>(exponent);
  // Exponentiation by squaring; exact modulo 2^64.
  while (e) {
    if (e & 1u)
      result *= b;
    b *= b;
    e >>= 1;
  }
  return fromBits(result);
}

/// Integer arithmetic in 64-bit two's complement; the caller wraps the exact
/// result to the result dtype before it becomes a double.
int64_t applyIntegerBinary(BinaryOp op, double x, double y) {
  int64_t a = toInt64(x);
  int64_t b = toInt64(y);
  switch (op) {
  case BinaryOp::Add:
    return fromBits(toBits(a) + toBits(b));
  case BinaryOp::Sub:
    return fromBits(toBits(a) - toBits(b));
  case BinaryOp::Mul:
    return fromBits(toBits(a) * toBits(b));
  case BinaryOp::Div:
    if (b == 0)
      throw EvalError("div: integer division by zero (" + std::to_string(a) +
                      " / 0)");
    if (a == std::numeric_limits<int64_t>::min() && b == -1)
      return a; // wraps
    return a / b; // C++ truncates toward zero
  case BinaryOp::Pow:
    if (b < 0)
      throw EvalError("pow: negative exponent " + std::to_string(b) +
                      " for an integer tensor");
    return wrappingPow(a, b);
  case BinaryOp::Max:
    return std::max(a, b);
  case BinaryOp::Min:
    return std::min(a, b);
  }
  assert(false && "invalid binary op");
  return 0;
}

double applyFloatBinary(BinaryOp op, double a, double b) {
  switch (op) {
  case BinaryOp::Add:
    return a + b;
  case BinaryOp::Sub:
    return a - b;
  case BinaryOp::Mul:
    return a * b;
  case BinaryOp::Div:
    return a / b;
  case BinaryOp::Pow:
    return std::pow(a, b);
  case BinaryOp::Max:
    if (std::isnan(a) || std::isnan(b))
      return kNaN;
    return std::max(a, b);
  case BinaryOp::Min:
    if (std::isnan(a) || std::isnan(b))
      return kNaN;
    return std::min(a, b);
  }
  assert(false && "invalid binary op");
  return kNaN;
}

bool applyCompare(ComparePredicate pred, double a, double b) {
  switch (pred) {
  case ComparePredicate::Eq: return a == b;
  case ComparePredicate::Ne: return a != b;
  case ComparePredicate::Lt: return a < b;
  case ComparePredicate::Le: return a <= b;
  case ComparePredicate::Gt: return a > b;
  case ComparePredicate::Ge: return a >= b;
  }
  assert(false && "invalid predicate");
  return false;
}

} // namespace

Tensor unary(UnaryOp op, const Tensor &x) {
  Tensor out = Tensor::zeros(x.dtype, x.shape);
  for (size_t i = 0; i < x.data.size(); ++i)
    out.data[i] = roundTo(x.dtype, applyUnary(op, x.data[i]));
  return out;
}

std::vector<int64_t> broadcastShapes(const std::vector<int64_t> &a,
                                     const std::vector<int64_t> &b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned; missing dims count as 1.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    assert((da == db || da == 1 || db == 1) && "shapes do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor binary(BinaryOp op, const Tensor &lhs, const Tensor &rhs) {
  assert(lhs.dtype == rhs.dtype && "binary operands must share a dtype");
  std::vector<int64_t> shape = broadcastShapes(lhs.shape, rhs.shape);
  std::vector<int64_t> lmap = broadcastIndexMap(shape, lhs.shape);
  std::vector<int64_t> rmap = broadcastIndexMap(shape, rhs.shape);
  Tensor out = Tensor::zeros(lhs.dtype, shape);
  const bool integer = isInteger(lhs.dtype);
  for (size_t i = 0; i < out.data.size(); ++i) {
    double a = lhs.data[lmap[i]];
    double b = rhs.data[rmap[i]];
    if (integer) {
      int64_t v = applyIntegerBinary(op, a, b);
      // Wrap to 32 bits exactly, before the value passes through a double.
      out.data[i] = out.dtype == DType::I32
                        ? static_cast<double>(static_cast<int32_t>(
                              static_cast<uint32_t>(static_cast<uint64_t>(v))))
                        : roundTo(out.dtype, static_cast<double>(v));
    } else {
      out.data[i] = roundTo(out.dtype, applyFloatBinary(op, a, b));
    }
  }
  return out;
}

Tensor compare(ComparePredicate pred, const Tensor &lhs, const Tensor &rhs) {
  std::vector<int64_t> shape = broadcastShapes(lhs.shape, rhs.shape);
  std::vector<int64_t> lmap = broadcastIndexMap(shape, lhs.shape);
  std::vector<int64_t> rmap = broadcastIndexMap(shape, rhs.shape);
  Tensor out = Tensor::zeros(DType::I1, shape);
  for (size_t i = 0; i < out.data.size(); ++i)
    out.data[i] =
        applyCompare(pred, lhs.data[lmap[i]], rhs.data[rmap[i]]) ? 1.0 : 0.0;
  return out;
}

Tensor select(const Tensor &cond, const Tensor &a, const Tensor &b) {
  assert(a.dtype == b.dtype && "select operands must share a dtype");
  std::vector<int64_t> shape =
      broadcastShapes(cond.shape, broadcastShapes(a.shape, b.shape));
  std::vector<int64_t> cmap = broadcastIndexMap(shape, cond.shape);
  std::vector<int64_t> amap = broadcastIndexMap(shape, a.shape);
  std::vector<int64_t> bmap = broadcastIndexMap(shape, b.shape);
  Tensor out = Tensor::zeros(a.dtype, shape);
  for (size_t i = 0; i < out.data.size(); ++i) {
    double v = cond.data[cmap[i]] != 0.0 ? a.data[amap[i]] : b.data[bmap[i]];
    out.data[i] = roundTo(out.dtype, v);
  }
  return out;
}

Tensor cast(const Tensor &x, DType to) {
  Tensor out = Tensor::zeros(to, x.shape);
  for (size_t i = 0; i < x.data.size(); ++i)
    out.data[i] = roundTo(to, x.data[i]);
  return out;
}

} // namespace dlc::oracle
