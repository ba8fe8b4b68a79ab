//===- ScalarFunctions.cpp - the element-wise ops, by name ----------------===//
//
// One entry per scalar function of ElementwiseOpInterface (the same names as
// codegen/common/ScalarFunctions.cpp): its arity, its value in double, and
// for integer operands (where double would not be exact) its value in
// 64-bit two's complement. `elementwise` broadcasts the operands, applies
// the function and rounds each result once to the result dtype.
//
//===----------------------------------------------------------------------===//

#include "oracle/kernels/Kernels.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <map>
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

/// Two's-complement arithmetic modulo 2^64.
int64_t wrap(uint64_t u) { return static_cast<int64_t>(u); }
uint64_t bits(int64_t v) { return static_cast<uint64_t>(v); }

int64_t wrappingPow(int64_t base, int64_t exponent) {
  if (exponent < 0)
    throw EvalError("pow: negative exponent " + std::to_string(exponent) +
                    " for an integer tensor");
  uint64_t result = 1, b = bits(base), e = static_cast<uint64_t>(exponent);
  while (e) { // exponentiation by squaring, exact modulo 2^64
    if (e & 1u)
      result *= b;
    b *= b;
    e >>= 1;
  }
  return wrap(result);
}

int64_t truncatingDiv(int64_t a, int64_t b) {
  if (b == 0)
    throw EvalError("div: integer division by zero (" + std::to_string(a) +
                    " / 0)");
  if (a == std::numeric_limits<int64_t>::min() && b == -1)
    return a; // wraps
  return a / b; // C++ truncates toward zero
}

/// NaN when either operand is NaN (max and min propagate it).
double nanOr(double a, double b, double pick) {
  return std::isnan(a) || std::isnan(b) ? kNaN : pick;
}

using Real = double (*)(const double *);
using Integer = int64_t (*)(const int64_t *);

struct ScalarFunction {
  unsigned arity;
  Real real;
  /// Null: integers go through `real` too (exact for what those ops do).
  Integer integer = nullptr;
  /// The result is i1 (comparisons).
  bool predicate = false;
};

const std::map<std::string, ScalarFunction, std::less<>> &table() {
  static const std::map<std::string, ScalarFunction, std::less<>> entries = {
      // Unary.
      {"abs", {1, [](const double *a) { return std::fabs(a[0]); }}},
      {"atan", {1, [](const double *a) { return std::atan(a[0]); }}},
      {"ceil", {1, [](const double *a) { return std::ceil(a[0]); }}},
      {"cos", {1, [](const double *a) { return std::cos(a[0]); }}},
      {"erf", {1, [](const double *a) { return std::erf(a[0]); }}},
      {"exp", {1, [](const double *a) { return std::exp(a[0]); }}},
      {"floor", {1, [](const double *a) { return std::floor(a[0]); }}},
      // GELU's definitions rewritten so that nothing cancels for x < 0:
      // 1 + erf(x / sqrt2) = erfc(-x / sqrt2) and 0.5 (1 + tanh u) =
      // 1 / (1 + exp(-2u)); in the textbook forms even double keeps no
      // correct digit of gelu_tanh(-8) (3.1e-21).
      {"gelu", {1, [](const double *a) {
         return 0.5 * a[0] * std::erfc(-a[0] / std::sqrt(2.0));
       }}},
      {"gelu_tanh", {1, [](const double *a) {
         const double c = std::sqrt(2.0 / 3.14159265358979323846), x = a[0];
         return x / (1.0 + std::exp(-2.0 * c * (x + 0.044715 * x * x * x)));
       }}},
      {"log", {1, [](const double *a) { return std::log(a[0]); }}},
      {"neg", {1, [](const double *a) { return -a[0]; }}},
      {"relu", {1, [](const double *a) {
         return std::isnan(a[0]) ? a[0] : a[0] > 0 ? a[0] : 0.0;
       }}},
      // To nearest, halves to even (the default rounding mode).
      {"round", {1, [](const double *a) { return std::nearbyint(a[0]); }}},
      {"rsqrt", {1, [](const double *a) { return 1.0 / std::sqrt(a[0]); }}},
      {"sigmoid", {1, [](const double *a) { return sigmoid(a[0]); }}},
      {"silu", {1, [](const double *a) { return a[0] * sigmoid(a[0]); }}},
      {"sin", {1, [](const double *a) { return std::sin(a[0]); }}},
      {"softplus", {1, [](const double *a) {
         return std::max(a[0], 0.0) + std::log1p(std::exp(-std::fabs(a[0])));
       }}},
      {"sqrt", {1, [](const double *a) { return std::sqrt(a[0]); }}},
      {"tanh", {1, [](const double *a) { return std::tanh(a[0]); }}},
      // Binary.
      {"add", {2, [](const double *a) { return a[0] + a[1]; },
               [](const int64_t *a) { return wrap(bits(a[0]) + bits(a[1])); }}},
      {"sub", {2, [](const double *a) { return a[0] - a[1]; },
               [](const int64_t *a) { return wrap(bits(a[0]) - bits(a[1])); }}},
      {"mul", {2, [](const double *a) { return a[0] * a[1]; },
               [](const int64_t *a) { return wrap(bits(a[0]) * bits(a[1])); }}},
      {"div", {2, [](const double *a) { return a[0] / a[1]; },
               [](const int64_t *a) { return truncatingDiv(a[0], a[1]); }}},
      {"pow", {2, [](const double *a) { return std::pow(a[0], a[1]); },
               [](const int64_t *a) { return wrappingPow(a[0], a[1]); }}},
      {"max", {2, [](const double *a) { return nanOr(a[0], a[1], std::max(a[0], a[1])); },
               [](const int64_t *a) { return std::max(a[0], a[1]); }}},
      {"min", {2, [](const double *a) { return nanOr(a[0], a[1], std::min(a[0], a[1])); },
               [](const int64_t *a) { return std::min(a[0], a[1]); }}},
      // Comparisons (IEEE: any comparison with NaN is false but ne).
      {"eq", {2, [](const double *a) { return double(a[0] == a[1]); }, nullptr, true}},
      {"ne", {2, [](const double *a) { return double(a[0] != a[1]); }, nullptr, true}},
      {"lt", {2, [](const double *a) { return double(a[0] < a[1]); }, nullptr, true}},
      {"le", {2, [](const double *a) { return double(a[0] <= a[1]); }, nullptr, true}},
      {"gt", {2, [](const double *a) { return double(a[0] > a[1]); }, nullptr, true}},
      {"ge", {2, [](const double *a) { return double(a[0] >= a[1]); }, nullptr, true}},
      // Choice: the condition, then the branches.
      {"select", {3, [](const double *a) { return a[0] != 0.0 ? a[1] : a[2]; }}},
  };
  return entries;
}

} // namespace

bool hasScalarFunction(std::string_view name) {
  return table().find(name) != table().end();
}

Tensor elementwise(std::string_view name,
                   const std::vector<const Tensor *> &operands) {
  auto found = table().find(name);
  if (found == table().end())
    throw EvalError("no scalar function '" + std::string(name) + "'");
  const ScalarFunction &fn = found->second;
  assert(operands.size() == fn.arity && "wrong number of operands");
  std::vector<int64_t> shape = operands[0]->shape;
  for (const Tensor *t : operands)
    shape = broadcastShapes(shape, t->shape);
  std::vector<std::vector<int64_t>> maps;
  for (const Tensor *t : operands)
    maps.push_back(broadcastIndexMap(shape, t->shape));
  // The dtype the function computes in is its (last) value operand's: a
  // select's condition is i1.
  DType in = operands.back()->dtype;
  DType out = fn.predicate ? DType::I1 : in;
  bool integer = fn.integer && isInteger(in) && in != DType::I1;
  Tensor result = Tensor::zeros(out, shape);
  double real[3];
  int64_t ints[3];
  for (size_t i = 0; i < result.data.size(); ++i) {
    for (size_t k = 0; k < operands.size(); ++k) {
      real[k] = operands[k]->data[maps[k][i]];
      ints[k] = toInt64(real[k]);
    }
    if (integer) {
      int64_t v = fn.integer(ints);
      // Wrap to 32 bits exactly, before the value passes through a double.
      result.data[i] = out == DType::I32
                           ? static_cast<double>(static_cast<int32_t>(
                                 static_cast<uint32_t>(static_cast<uint64_t>(v))))
                           : roundTo(out, static_cast<double>(v));
    } else {
      result.data[i] = roundTo(out, fn.real(real));
    }
  }
  return result;
}

Tensor unary(std::string_view name, const Tensor &x) {
  return elementwise(name, {&x});
}
Tensor binary(std::string_view name, const Tensor &lhs, const Tensor &rhs) {
  return elementwise(name, {&lhs, &rhs});
}
Tensor select(const Tensor &cond, const Tensor &a, const Tensor &b) {
  return elementwise("select", {&cond, &a, &b});
}

} // namespace dlc::oracle
