//===- HostTensor.cpp - a tensor's bytes in host memory -------------------===//

#include "support/HostTensor.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "HostTensor keeps elements little-endian and assumes a little-endian host"
#endif

namespace dlc {

bool checkedSizes(DType dtype, const std::vector<int64_t> &shape,
                  int64_t &numel, uint64_t &numBytes) {
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    empty |= d == 0;
  }
  uint64_t n = empty ? 0 : 1;
  for (int64_t d : shape) {
    if (empty)
      break;
    uint64_t ud = static_cast<uint64_t>(d);
    if (n > limit / ud)
      return false;
    n *= ud;
  }
  uint64_t size = elementSize(dtype);
  if (n > limit / size ||
      n * size > static_cast<uint64_t>(std::numeric_limits<size_t>::max()))
    return false;
  numel = static_cast<int64_t>(n);
  numBytes = n * size;
  return true;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

HostTensor::HostTensor() : shape_{0} {}

void HostTensor::setLayout(DType dtype, std::vector<int64_t> shape) {
  uint64_t bytes = 0;
  if (!checkedSizes(dtype, shape, numel_, bytes))
    throw std::invalid_argument("HostTensor: invalid shape " +
                                formatShape(shape) + " for " +
                                dtypeName(dtype));
  dtype_ = dtype;
  shape_ = std::move(shape);
  size_ = static_cast<size_t>(bytes);
}

void HostTensor::checkByteCount(size_t size) const {
  if (size != size_)
    throw std::invalid_argument(
        "HostTensor: " + std::string(dtypeName(dtype_)) + formatShape(shape_) +
        " needs " + std::to_string(size_) + " bytes, got " +
        std::to_string(size));
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape) {
  setLayout(dtype, std::move(shape));
  owned_.assign(size_, 0);
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape,
                       std::vector<uint8_t> bytes) {
  setLayout(dtype, std::move(shape));
  checkByteCount(bytes.size());
  owned_ = std::move(bytes);
}

HostTensor HostTensor::borrow(DType dtype, std::vector<int64_t> shape,
                              const void *data, size_t size) {
  HostTensor t;
  t.setLayout(dtype, std::move(shape));
  t.checkByteCount(size);
  t.owned_.clear();
  // A tensor without elements needs no memory: keep it owned (and empty).
  if (size)
    t.borrowed_ = static_cast<const uint8_t *>(data);
  return t;
}

HostTensor HostTensor::fromDoubles(DType dtype, std::vector<int64_t> shape,
                                   const std::vector<double> &values) {
  HostTensor t(dtype, std::move(shape));
  if (static_cast<uint64_t>(t.numel()) != values.size())
    throw std::invalid_argument(
        "HostTensor::fromDoubles: shape " + formatShape(t.shape()) + " has " +
        std::to_string(t.numel()) + " elements, got " +
        std::to_string(values.size()) + " values");
  for (size_t i = 0; i < values.size(); ++i)
    t.setDouble(static_cast<int64_t>(i), values[i]);
  return t;
}

uint8_t *HostTensor::mutableData() {
  assert(!borrowed_ && "a borrowed tensor's bytes are read-only");
  return owned_.data();
}

template <typename T> static T load(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> static void store(uint8_t *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

/// `v` rounded to nearest (ties to even) and saturated to T; NaN -> 0.
template <typename T> static T saturate(double v) {
  if (std::isnan(v))
    return 0;
  v = std::nearbyint(v);
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  // For int64, max() converts to 2^63: anything >= it saturates.
  if (v >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

template <typename T> static T clampTo(int64_t v) {
  if (v < static_cast<int64_t>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  if (v > static_cast<int64_t>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

double HostTensor::getDouble(int64_t i) const {
  assert(i >= 0 && i < numel_ && "element index out of range");
  const uint8_t *p = data() + static_cast<size_t>(i) * elementSize(dtype_);
  switch (dtype_) {
  case DType::F64: return load<double>(p);
  case DType::F32: return load<float>(p);
  case DType::F16: return fromF16Bits(load<uint16_t>(p));
  case DType::BF16: return fromBF16Bits(load<uint16_t>(p));
  case DType::I64: return static_cast<double>(load<int64_t>(p));
  case DType::I32: return load<int32_t>(p);
  case DType::I8: return static_cast<int8_t>(*p);
  case DType::U8: return *p;
  case DType::I1: return *p ? 1.0 : 0.0;
  }
  return 0;
}

void HostTensor::setDouble(int64_t i, double v) {
  assert(i >= 0 && i < numel_ && "element index out of range");
  uint8_t *p = mutableData() + static_cast<size_t>(i) * elementSize(dtype_);
  switch (dtype_) {
  case DType::F64: store<double>(p, v); break;
  case DType::F32: store<float>(p, static_cast<float>(v)); break;
  case DType::F16: store<uint16_t>(p, toF16Bits(v)); break;
  case DType::BF16: store<uint16_t>(p, toBF16Bits(v)); break;
  case DType::I64: store<int64_t>(p, saturate<int64_t>(v)); break;
  case DType::I32: store<int32_t>(p, saturate<int32_t>(v)); break;
  case DType::I8: store<int8_t>(p, saturate<int8_t>(v)); break;
  case DType::U8: *p = saturate<uint8_t>(v); break;
  case DType::I1: *p = v != 0 ? 1 : 0; break;
  }
}

int64_t HostTensor::getInt64(int64_t i) const {
  assert(i >= 0 && i < numel_ && "element index out of range");
  const uint8_t *p = data() + static_cast<size_t>(i) * elementSize(dtype_);
  switch (dtype_) {
  case DType::I64: return load<int64_t>(p);
  case DType::I32: return load<int32_t>(p);
  case DType::I8: return static_cast<int8_t>(*p);
  case DType::U8:
  case DType::I1: return *p;
  default: return toInt64(getDouble(i));
  }
}

void HostTensor::setInt64(int64_t i, int64_t v) {
  assert(i >= 0 && i < numel_ && "element index out of range");
  uint8_t *p = mutableData() + static_cast<size_t>(i) * elementSize(dtype_);
  switch (dtype_) {
  case DType::I64: store<int64_t>(p, v); break;
  case DType::I32: store<int32_t>(p, clampTo<int32_t>(v)); break;
  case DType::I8: store<int8_t>(p, clampTo<int8_t>(v)); break;
  case DType::U8: *p = clampTo<uint8_t>(v); break;
  case DType::I1: *p = v != 0 ? 1 : 0; break;
  default: setDouble(i, static_cast<double>(v)); break;
  }
}

std::vector<double> HostTensor::toDoubles() const {
  std::vector<double> values(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i)
    values[static_cast<size_t>(i)] = getDouble(i);
  return values;
}

std::vector<uint8_t> HostTensor::takeBytes() && {
  std::vector<uint8_t> bytes =
      borrowed_ ? std::vector<uint8_t>(borrowed_, borrowed_ + size_) : std::move(owned_);
  *this = HostTensor();
  return bytes;
}

} // namespace dlc
