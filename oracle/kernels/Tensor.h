//===- Tensor.h - the oracle's float64 working tensor -----------*- C++ -*-===//
//
// The oracle is a deliberately simple, obviously-correct reference
// implementation of every dlc op.  Its working tensor holds every value as
// a `double`, whatever the logical dtype; each kernel computes in double and
// rounds each output element to the result dtype exactly once with
// `roundTo` (support/DType.h).  It is the oracle's working value, not a host
// tensor: values arrive as and leave as HostTensors (support/HostTensor.h),
// through fromHost and toHost.
//
// PRECISION NOTE: because storage is `double`, integer tensors (I64 in
// particular) can only represent integers exactly up to 2^53 in magnitude.
// An i64 value beyond that is stored as the nearest double, so results for
// such values are approximate.  I32 and I1 values are always exact.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_ORACLE_KERNELS_TENSOR_H
#define DLC_ORACLE_KERNELS_TENSOR_H

#include "support/DType.h"
#include "support/HostTensor.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace dlc::oracle {

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

  /// The values of a host tensor (each rounded to its dtype, which is exact
  /// for every dtype but i64 beyond 2^53).
  static Tensor fromHost(const HostTensor &host);
  /// The bytes of this tensor's values in its dtype.
  HostTensor toHost() const;
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

} // namespace dlc::oracle

#endif // DLC_ORACLE_KERNELS_TENSOR_H
