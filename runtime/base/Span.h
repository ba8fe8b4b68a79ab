//===- Span.h - A pointer and a length --------------------------*- C++ -*-===//
//
// C++17 has no std::span. This one is a view over contiguous elements; subspan
// is only defined for ranges the caller has checked (see `contains`).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dlc::rt {

template <typename T> class Span {
public:
  constexpr Span() = default;
  constexpr Span(T *data, size_t size) : data_(data), size_(size) {}
  template <typename U>
  Span(const std::vector<U> &v) : data_(v.data()), size_(v.size()) {}
  template <typename U>
  Span(std::vector<U> &v) : data_(v.data()), size_(v.size()) {}

  constexpr T *data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr T *begin() const { return data_; }
  constexpr T *end() const { return data_ + size_; }
  constexpr T &operator[](size_t i) const { return data_[i]; }

  /// True when [offset, offset + length) lies inside the span, without
  /// overflowing for any 64-bit values.
  constexpr bool contains(uint64_t offset, uint64_t length) const {
    return offset <= size_ && length <= size_ - offset;
  }
  /// Precondition: contains(offset, length).
  constexpr Span subspan(uint64_t offset, uint64_t length) const {
    return Span(data_ + offset, static_cast<size_t>(length));
  }

private:
  T *data_ = nullptr;
  size_t size_ = 0;
};

using ByteSpan = Span<const uint8_t>;
using MutableByteSpan = Span<uint8_t>;

inline ByteSpan asBytes(const std::string &s) {
  return ByteSpan(reinterpret_cast<const uint8_t *>(s.data()), s.size());
}

} // namespace dlc::rt
