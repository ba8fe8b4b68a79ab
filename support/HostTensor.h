//===- HostTensor.h - a tensor's bytes in host memory ------------*- C++ -*-===//
//
// The one host tensor of dlc: a dtype, a shape and the elements' bytes,
// little-endian and row-major, as weight files hold them, as parameters are
// materialised and as a compiled module's weights are written. The bytes
// are owned, or borrowed from memory the caller keeps alive (a mapped file,
// an attribute's blob). Every size is overflow checked, so a hostile shape
// read from a file is an error, never a huge allocation.
//
// (The oracle computes on its own float64 working tensor, oracle::Tensor;
// it converts to and from this one at its edges.)
//
//===----------------------------------------------------------------------===//

#ifndef DLC_SUPPORT_HOSTTENSOR_H
#define DLC_SUPPORT_HOSTTENSOR_H

#include "support/DType.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dlc {

/// The element count and byte size of a `dtype` tensor of `shape`; false for
/// a negative dimension or a count that overflows int64 or size_t. A shape
/// with a zero dimension has no elements, however large the others.
bool checkedSizes(DType dtype, const std::vector<int64_t> &shape,
                  int64_t &numel, uint64_t &numBytes);

/// "[2, 3]"; a scalar's shape prints as "[]".
std::string formatShape(const std::vector<int64_t> &shape);

class HostTensor {
public:
  /// An f32 tensor of shape [0] (no elements).
  HostTensor();
  /// Zero-filled. Throws std::invalid_argument for an invalid shape.
  HostTensor(DType dtype, std::vector<int64_t> shape);
  /// Owns `bytes`. Throws std::invalid_argument for an invalid shape or
  /// unless `bytes` holds exactly the shape's elements.
  HostTensor(DType dtype, std::vector<int64_t> shape,
             std::vector<uint8_t> bytes);
  /// Views `size` bytes at `data`, which must stay alive and unchanged while
  /// this tensor or a copy of it is used. Throws as above.
  static HostTensor borrow(DType dtype, std::vector<int64_t> shape,
                           const void *data, size_t size);
  /// Each value stored with setDouble. Throws std::invalid_argument unless
  /// `values` has one value per element of a valid `shape`.
  static HostTensor fromDoubles(DType dtype, std::vector<int64_t> shape,
                                const std::vector<double> &values);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  /// Product of the shape (1 for rank 0).
  int64_t numel() const { return numel_; }
  size_t byteSize() const { return size_; }
  bool isBorrowed() const { return borrowed_ != nullptr; }
  const uint8_t *data() const { return borrowed_ ? borrowed_ : owned_.data(); }
  /// The bytes of an owned tensor (asserts that it is not borrowed).
  uint8_t *mutableData();

  /// Element `i` (row-major) as a double: f16/bf16 decoded exactly, i64
  /// beyond 2^53 rounded, i1 as 0 or 1.
  double getDouble(int64_t i) const;
  /// Stores `v`: f32 the nearest float, f16/bf16 rounded to nearest even;
  /// integers rounded to nearest (ties to even), saturated to the dtype's
  /// range, NaN -> 0; i1: v != 0 (NaN is true, as in NumPy).
  void setDouble(int64_t i, double v);
  /// Element `i` exactly for integer dtypes; floats through toInt64.
  int64_t getInt64(int64_t i) const;
  /// Stores `v` exactly where the dtype holds it: integers saturated to the
  /// dtype's range, i1 v != 0, floats the nearest value.
  void setInt64(int64_t i, int64_t v);

  std::vector<double> toDoubles() const;

  /// The bytes: moved out of an owned tensor, which becomes the empty
  /// tensor; copied from a borrowed one.
  std::vector<uint8_t> takeBytes() &&;

private:
  /// Sets the dtype, shape and sizes; throws for an invalid shape.
  void setLayout(DType dtype, std::vector<int64_t> shape);
  /// Throws unless `size` bytes are exactly the elements' bytes.
  void checkByteCount(size_t size) const;

  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  size_t size_ = 0;
  std::vector<uint8_t> owned_;
  const uint8_t *borrowed_ = nullptr;
};

} // namespace dlc

#endif // DLC_SUPPORT_HOSTTENSOR_H
