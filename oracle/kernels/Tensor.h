//===- Tensor.h - float64 reference tensor for the dlc oracle ---*- C++ -*-===//
//
// The oracle is a deliberately simple, obviously-correct reference
// implementation of every dlc op.  All values are stored as `double`, whatever
// the logical dtype; each kernel computes in double and rounds each output
// element to the result dtype exactly once with `roundTo`.
//
// PRECISION NOTE: because storage is `double`, integer tensors (I64 in
// particular) can only represent integers exactly up to 2^53 in magnitude.
// An i64 value beyond that is stored as the nearest double, so results for
// such values are approximate.  I32 and I1 values are always exact.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_ORACLE_KERNELS_TENSOR_H
#define DLC_ORACLE_KERNELS_TENSOR_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace dlc::oracle {

enum class DType { F64, F32, F16, BF16, I64, I32, I1 };

/// "f64", "f32", "f16", "bf16", "i64", "i32", "i1".
const char *dtypeName(DType dtype);
bool isFloat(DType dtype);
/// True for I64, I32 and I1 (bool counts as integer-like).
bool isInteger(DType dtype);

/// Returns the value of `v` after conversion to `dtype`:
///  - F64: identity.
///  - F32: (double)(float)v (round-to-nearest-even).
///  - F16: IEEE binary16, round-to-nearest-even directly from the double,
///         with subnormals; magnitudes >= 65520 become +-inf; NaN stays NaN;
///         the sign of zero is kept.
///  - BF16: v is first rounded to float32, then the float32 bit pattern is
///         rounded to its top 16 bits with round-to-nearest-even
///         (overflow -> inf, NaN stays NaN).
///  - I64 / I32: NaN -> 0; truncate toward zero; saturate to
///         [INT64_MIN, INT64_MAX]; then (I32) wrap modulo 2^32 to two's
///         complement.  (I64 results beyond 2^53 are not exact as doubles.)
///  - I1: v != 0 ? 1 : 0 (NaN counts as nonzero, i.e. true).
double roundTo(DType dtype, double v);

/// Converts a double to int64: NaN -> 0, truncation toward zero, saturating
/// at the int64 limits.  Never has undefined behaviour.
int64_t toInt64(double v);

/// Thrown for data-dependent evaluation failures (index out of range,
/// integer division by zero, empty max/min/mean reduction, ...).
class EvalError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct Tensor {
  DType dtype = DType::F32;
  /// Rank 0 = scalar (one element).
  std::vector<int64_t> shape;
  /// Row-major element values, already rounded to `dtype`.
  std::vector<double> data;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const;

  static Tensor zeros(DType dtype, std::vector<int64_t> shape);
  /// Builds a tensor from values, rounding each one to `dtype`.
  /// Asserts that values.size() == numel(shape).
  static Tensor fromValues(DType dtype, std::vector<int64_t> shape,
                           std::vector<double> values);
  /// Rank-0 tensor holding roundTo(dtype, value).
  static Tensor scalar(DType dtype, double value);
};

/// Number of elements of a shape (1 for rank 0).
int64_t shapeNumel(const std::vector<int64_t> &shape);

/// Row-major strides in elements, e.g. [2,3,4] -> [12,4,1].
std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &shape);

/// For each element (row-major) of a tensor of shape `outShape`, the flat
/// index of the element of a tensor of shape `inShape` that NumPy
/// broadcasting maps onto it.  `inShape` must broadcast to `outShape`
/// (asserted): it is right-aligned and each of its dims is 1 or equal.
std::vector<int64_t> broadcastIndexMap(const std::vector<int64_t> &outShape,
                                       const std::vector<int64_t> &inShape);

/// "[2, 3]"; a scalar shape prints as "[]".
std::string formatShape(const std::vector<int64_t> &shape);

} // namespace dlc::oracle

#endif // DLC_ORACLE_KERNELS_TENSOR_H
