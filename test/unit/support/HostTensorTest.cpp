//===- HostTensorTest.cpp - the host tensor: sizes, bytes, elements -------===//

#include "support/HostTensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

using namespace dlc;

using Bytes = std::vector<uint8_t>;

static Bytes bytesOf(const HostTensor &t) {
  return Bytes(t.data(), t.data() + t.byteSize());
}

TEST(HostTensor, SizesAreOverflowChecked) {
  int64_t numel = 0;
  uint64_t bytes = 0;
  ASSERT_TRUE(checkedSizes(DType::F32, {2, 3}, numel, bytes));
  EXPECT_EQ(numel, 6);
  EXPECT_EQ(bytes, 24u);
  ASSERT_TRUE(checkedSizes(DType::I1, {}, numel, bytes));
  EXPECT_EQ(numel, 1);
  EXPECT_EQ(bytes, 1u);
  // A zero dimension empties the tensor, however large the others.
  ASSERT_TRUE(checkedSizes(DType::F64, {0, 9223372036854775807, 4}, numel, bytes));
  EXPECT_EQ(numel, 0);
  EXPECT_FALSE(checkedSizes(DType::F32, {-1}, numel, bytes));
  EXPECT_FALSE(checkedSizes(DType::F32, {1099511627776, 1099511627776}, numel, bytes));
  EXPECT_FALSE(checkedSizes(DType::F64, {4611686018427387904, 2}, numel, bytes));
  EXPECT_FALSE(checkedSizes(DType::F64, {1152921504606846976}, numel, bytes)); // bytes overflow
  EXPECT_THROW(HostTensor(DType::F32, {-2, 3}), std::invalid_argument);
}

TEST(HostTensor, OwnedBytesMustMatchTheShape) {
  HostTensor t(DType::I32, {2}, Bytes{1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF});
  EXPECT_EQ(t.toDoubles(), (std::vector<double>{1, -1}));
  EXPECT_FALSE(t.isBorrowed());
  try {
    HostTensor bad(DType::F32, {2, 2}, Bytes(12));
    FAIL() << "12 bytes accepted for f32[2, 2]";
  } catch (const std::invalid_argument &e) {
    EXPECT_STREQ(e.what(), "HostTensor: f32[2, 2] needs 16 bytes, got 12");
  }
  HostTensor empty;
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.byteSize(), 0u);
  EXPECT_EQ(HostTensor(DType::F16, {}).numel(), 1);
}

TEST(HostTensor, BorrowedBytesAreAView) {
  std::vector<float> memory = {1.5f, -2.0f, 4.0f};
  HostTensor view = HostTensor::borrow(DType::F32, {3}, memory.data(), 12);
  EXPECT_TRUE(view.isBorrowed());
  EXPECT_EQ(view.data(), reinterpret_cast<const uint8_t *>(memory.data()));
  memory[2] = 8.0f;
  EXPECT_EQ(view.getDouble(2), 8.0);
  HostTensor copy = view; // still a view
  EXPECT_EQ(copy.data(), view.data());
  EXPECT_THROW(HostTensor::borrow(DType::F32, {4}, memory.data(), 12), std::invalid_argument);
}

TEST(HostTensor, FromDoublesIntegersSaturateAndRound) {
  HostTensor a = HostTensor::fromDoubles(DType::I8, {5}, {1.4, 2.5, -300, 300, NAN});
  EXPECT_EQ(a.toDoubles(), (std::vector<double>{1, 2, -128, 127, 0}));
  HostTensor u = HostTensor::fromDoubles(DType::U8, {3}, {-1, 255.4, 1e9});
  EXPECT_EQ(u.toDoubles(), (std::vector<double>{0, 255, 255}));
  HostTensor b = HostTensor::fromDoubles(DType::I1, {3}, {0, -0.0, 2});
  EXPECT_EQ(bytesOf(b), (Bytes{0, 0, 1}));
  HostTensor l = HostTensor::fromDoubles(DType::I64, {2}, {1e30, -1e30});
  EXPECT_EQ(l.toDoubles()[0], 9223372036854775807.0);
  EXPECT_THROW(HostTensor::fromDoubles(DType::F32, {2, 2}, {1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(HostTensor::fromDoubles(DType::F32, {-1}, {}), std::invalid_argument);
}

TEST(HostTensor, F32RoundsToNearestFloat) {
  HostTensor a = HostTensor::fromDoubles(DType::F32, {2}, {0.1, 1e40});
  std::vector<double> d = a.toDoubles();
  EXPECT_EQ(d[0], static_cast<double>(0.1f));
  EXPECT_TRUE(std::isinf(d[1]));
  HostTensor h = HostTensor::fromDoubles(DType::BF16, {1}, {1.0 + std::ldexp(1.0, -7)});
  EXPECT_EQ(bytesOf(h), (Bytes{0x81, 0x3F}));
}

TEST(HostTensor, Int64AccessorsAreExact) {
  const int64_t big = (int64_t(1) << 62) + 1; // not a double
  HostTensor t(DType::I64, {2});
  t.setInt64(0, big);
  t.setInt64(1, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(t.getInt64(0), big);
  EXPECT_EQ(t.getInt64(1), std::numeric_limits<int64_t>::min());
  EXPECT_NE(static_cast<int64_t>(t.getDouble(0)), big);
  HostTensor s(DType::I32, {3});
  s.setInt64(0, int64_t(1) << 40); // saturates
  s.setInt64(1, -(int64_t(1) << 40));
  s.setInt64(2, -7);
  EXPECT_EQ(s.toDoubles(), (std::vector<double>{2147483647, -2147483648.0, -7}));
  HostTensor u(DType::U8, {1});
  u.setInt64(0, 300);
  EXPECT_EQ(u.getInt64(0), 255);
  HostTensor f(DType::F32, {1});
  f.setInt64(0, 16777217); // the nearest float
  EXPECT_EQ(f.getInt64(0), 16777216);
}

TEST(HostTensor, FormatShape) {
  EXPECT_EQ(formatShape({2, 3}), "[2, 3]");
  EXPECT_EQ(formatShape({}), "[]");
}
