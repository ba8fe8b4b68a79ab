//===- DTypeTest.cpp - the one DType, its f16/bf16 codec and roundTo ------===//

#include "support/DType.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace dlc;

namespace {
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
} // namespace

TEST(DType, NamesParseAndSizes) {
  const DType all[] = {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64,
                       DType::I32, DType::I8,  DType::U8,  DType::I1};
  const char *names[] = {"f64", "f32", "f16", "bf16", "i64", "i32", "i8", "u8", "i1"};
  const size_t sizes[] = {8, 4, 2, 2, 8, 4, 1, 1, 1};
  for (size_t i = 0; i < 9; ++i) {
    EXPECT_STREQ(dtypeName(all[i]), names[i]);
    EXPECT_EQ(elementSize(all[i]), sizes[i]);
    EXPECT_EQ(parseDType(names[i]), all[i]);
  }
  EXPECT_EQ(parseDType("bool"), DType::I1); // NumPy's name
  EXPECT_EQ(parseDType("f8"), std::nullopt);
  EXPECT_EQ(parseDType(""), std::nullopt);
}

TEST(DType, NamesAndClasses) {
  EXPECT_STREQ(dtypeName(DType::F64), "f64");
  EXPECT_STREQ(dtypeName(DType::F32), "f32");
  EXPECT_STREQ(dtypeName(DType::F16), "f16");
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
  EXPECT_STREQ(dtypeName(DType::I64), "i64");
  EXPECT_STREQ(dtypeName(DType::I32), "i32");
  EXPECT_STREQ(dtypeName(DType::I1), "i1");
  EXPECT_TRUE(isFloat(DType::BF16));
  EXPECT_FALSE(isFloat(DType::I32));
  EXPECT_TRUE(isInteger(DType::I1));
  EXPECT_TRUE(isInteger(DType::I64));
  EXPECT_FALSE(isInteger(DType::F16));
}

TEST(RoundTo, F64AndF32) {
  EXPECT_EQ(roundTo(DType::F64, 0.1), 0.1);
  EXPECT_EQ(roundTo(DType::F32, 0.1), 0.100000001490116119384765625);
  EXPECT_EQ(roundTo(DType::F32, 1.0 / 3.0), 0.3333333432674407958984375);
  EXPECT_EQ(roundTo(DType::F32, 1e39), kInf);
}

TEST(RoundTo, F16Normal) {
  EXPECT_EQ(roundTo(DType::F16, 1.0 / 3.0), 0.333251953125);
  EXPECT_EQ(roundTo(DType::F16, 1.0), 1.0);
  EXPECT_EQ(roundTo(DType::F16, -2.5), -2.5);
  // Spacing at 1 is 2^-10: 1 + 2^-11 is a tie -> even (1.0);
  // 1 + 3*2^-11 is a tie -> even (1 + 2^-9).
  EXPECT_EQ(roundTo(DType::F16, 1.0 + std::ldexp(1.0, -11)), 1.0);
  EXPECT_EQ(roundTo(DType::F16, 1.0 + 3 * std::ldexp(1.0, -11)),
            1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(roundTo(DType::F16, 0.1), 0.0999755859375);
}

TEST(RoundTo, F16Overflow) {
  EXPECT_EQ(roundTo(DType::F16, 65504.0), 65504.0);
  EXPECT_EQ(roundTo(DType::F16, 65519.0), 65504.0);
  EXPECT_EQ(roundTo(DType::F16, 65520.0), kInf);
  EXPECT_EQ(roundTo(DType::F16, -65520.0), -kInf);
  EXPECT_EQ(roundTo(DType::F16, 1e10), kInf);
  EXPECT_EQ(roundTo(DType::F16, -kInf), -kInf);
}

TEST(RoundTo, F16Subnormal) {
  const double minSub = std::ldexp(1.0, -24); // 5.9604644775390625e-8
  EXPECT_EQ(roundTo(DType::F16, 5.96e-8), minSub);
  EXPECT_EQ(roundTo(DType::F16, std::ldexp(1.0, -25)), 0.0); // tie -> 0
  EXPECT_EQ(roundTo(DType::F16, 3 * std::ldexp(1.0, -25)), 2 * minSub);
  EXPECT_EQ(roundTo(DType::F16, 1e-9), 0.0);
  // Largest subnormal 1023 * 2^-24 and smallest normal 2^-14.
  EXPECT_EQ(roundTo(DType::F16, 1023 * minSub), 1023 * minSub);
  EXPECT_EQ(roundTo(DType::F16, std::ldexp(1.0, -14)), std::ldexp(1.0, -14));
  double negZero = roundTo(DType::F16, -1e-10);
  EXPECT_EQ(negZero, 0.0);
  EXPECT_TRUE(std::signbit(negZero));
}

TEST(RoundTo, F16NaN) {
  EXPECT_TRUE(std::isnan(roundTo(DType::F16, kNaN)));
}

TEST(RoundTo, BF16) {
  EXPECT_EQ(roundTo(DType::BF16, 1.0 / 3.0), 0.333984375);
  EXPECT_EQ(roundTo(DType::BF16, 1.0), 1.0);
  // 7 fraction bits: spacing at 1 is 2^-7.
  EXPECT_EQ(roundTo(DType::BF16, 1.0 + std::ldexp(1.0, -8)), 1.0);
  EXPECT_EQ(roundTo(DType::BF16, 1.0 + 3 * std::ldexp(1.0, -8)),
            1.0 + std::ldexp(1.0, -6));
  EXPECT_EQ(roundTo(DType::BF16, std::numeric_limits<float>::max()), kInf);
  EXPECT_TRUE(std::isnan(roundTo(DType::BF16, kNaN)));
}

TEST(RoundTo, I32Wraps) {
  EXPECT_EQ(roundTo(DType::I32, 2147483648.0), -2147483648.0);
  EXPECT_EQ(roundTo(DType::I32, -2147483649.0), 2147483647.0);
  EXPECT_EQ(roundTo(DType::I32, 4294967296.0 + 5), 5.0);
  EXPECT_EQ(roundTo(DType::I32, 2.9), 2.0);
  EXPECT_EQ(roundTo(DType::I32, -2.9), -2.0);
  EXPECT_EQ(roundTo(DType::I32, kNaN), 0.0);
  // Saturates to INT64_MAX (low 32 bits all ones) before wrapping -> -1.
  EXPECT_EQ(roundTo(DType::I32, 1e30), -1.0);
}

TEST(RoundTo, I64AndI1) {
  EXPECT_EQ(roundTo(DType::I64, -3.7), -3.0);
  EXPECT_EQ(roundTo(DType::I64, kNaN), 0.0);
  EXPECT_EQ(roundTo(DType::I64, 1e300), 9223372036854775808.0);
  EXPECT_EQ(roundTo(DType::I64, -1e300), -9223372036854775808.0);
  EXPECT_EQ(toInt64(1e300), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(toInt64(-2.5), -2);
  EXPECT_EQ(roundTo(DType::I1, 0.0), 0.0);
  EXPECT_EQ(roundTo(DType::I1, -0.0), 0.0);
  EXPECT_EQ(roundTo(DType::I1, 0.5), 1.0);
  EXPECT_EQ(roundTo(DType::I1, -2.0), 1.0);
}

TEST(RoundTo, BF16RoundsThroughFloat) {
  // Just above the tie between 1 and 1 + 2^-7: the float rounding first
  // lands on the tie itself, which then goes to even (1.0); the codec
  // rounds the double directly, up.
  double justAboveTie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(roundTo(DType::BF16, justAboveTie), 1.0);
  EXPECT_EQ(toBF16Bits(justAboveTie), 0x3F81);
  // For values a float holds, the two agree.
  for (double v : {0.1, -3.75, 1e-40, 3.0e38, 1.0 + std::ldexp(1.0, -8)})
    EXPECT_EQ(roundTo(DType::BF16, static_cast<float>(v)),
              fromBF16Bits(toBF16Bits(static_cast<float>(v))));
}

TEST(RoundTo, I8AndU8Wrap) {
  EXPECT_EQ(roundTo(DType::I8, 127.9), 127.0);
  EXPECT_EQ(roundTo(DType::I8, 128.0), -128.0);
  EXPECT_EQ(roundTo(DType::I8, -129.0), 127.0);
  EXPECT_EQ(roundTo(DType::U8, 256.0 + 3), 3.0);
  EXPECT_EQ(roundTo(DType::U8, -1.0), 255.0);
  EXPECT_EQ(roundTo(DType::U8, kNaN), 0.0);
}

TEST(Codec, HalfDecodeKnownValues) {
  EXPECT_EQ(fromF16Bits(0x3C00), 1.0);
  EXPECT_EQ(fromF16Bits(0xC000), -2.0);
  EXPECT_EQ(fromF16Bits(0x7BFF), 65504.0);
  EXPECT_EQ(fromF16Bits(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(fromF16Bits(0x03FF), std::ldexp(1023.0, -24));
  EXPECT_EQ(fromF16Bits(0x0400), std::ldexp(1.0, -14));
  EXPECT_EQ(fromF16Bits(0x3555), 0.333251953125);
  EXPECT_TRUE(std::isinf(fromF16Bits(0xFC00)) && fromF16Bits(0xFC00) < 0);
  EXPECT_TRUE(std::isnan(fromF16Bits(0x7E00)));
  EXPECT_TRUE(std::signbit(fromF16Bits(0x8000)));
}

TEST(Codec, BF16DecodeKnownValues) {
  EXPECT_EQ(fromBF16Bits(0x3F80), 1.0);
  EXPECT_EQ(fromBF16Bits(0xC0A0), -5.0);
  EXPECT_EQ(fromBF16Bits(0x7F7F), std::ldexp(255.0, 120)); // max finite
  EXPECT_EQ(fromBF16Bits(0x0001), std::ldexp(1.0, -133));  // min subnormal
  EXPECT_EQ(fromBF16Bits(0x0080), std::ldexp(1.0, -126));  // min normal
  EXPECT_TRUE(std::isinf(fromBF16Bits(0x7F80)));
  EXPECT_TRUE(std::isnan(fromBF16Bits(0x7FC0)));
}

// Every finite pattern survives decode -> encode, and the midpoint between
// two neighbours rounds to the one with the even mantissa (ties-to-even);
// values just off the midpoint round to the nearer one.
static void checkSmallFloatExhaustive(double (*dec)(uint16_t), uint16_t (*enc)(double),
                                      uint16_t infBits) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    uint16_t bits = static_cast<uint16_t>(b);
    double v = dec(bits);
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(dec(enc(v))));
      continue;
    }
    ASSERT_EQ(enc(v), bits) << "pattern " << b;
  }
  for (uint16_t b = 0; b + 1 < infBits; ++b) { // finite b and its finite successor
    double lo = dec(b), hi = dec(static_cast<uint16_t>(b + 1));
    double mid = lo + (hi - lo) / 2; // exact in double
    uint16_t even = (b % 2 == 0) ? b : static_cast<uint16_t>(b + 1);
    ASSERT_EQ(enc(mid), even) << "midpoint above pattern " << b;
    ASSERT_EQ(enc(-mid), static_cast<uint16_t>(even | 0x8000));
    ASSERT_EQ(enc(std::nextafter(mid, 0.0)), b);
    ASSERT_EQ(enc(std::nextafter(mid, HUGE_VAL)), static_cast<uint16_t>(b + 1));
  }
}

TEST(Codec, HalfExhaustiveRoundTripAndTiesToEven) {
  checkSmallFloatExhaustive(fromF16Bits, toF16Bits, 0x7C00);
  EXPECT_EQ(toF16Bits(65519.99), 0x7BFF);
  EXPECT_EQ(toF16Bits(65520.0), 0x7C00); // tie with 65536 -> even -> inf
  EXPECT_EQ(toF16Bits(1e300), 0x7C00);
  EXPECT_EQ(toF16Bits(-1e300), 0xFC00);
  EXPECT_EQ(toF16Bits(std::ldexp(1.0, -25)), 0x0000); // tie -> even (0)
  EXPECT_EQ(toF16Bits(std::ldexp(1.5, -25)), 0x0001);
  EXPECT_EQ(toF16Bits(1e-300), 0x0000);
  EXPECT_EQ(toF16Bits(-0.0), 0x8000);
  EXPECT_EQ(toF16Bits(std::numeric_limits<double>::quiet_NaN()) & 0x7C00, 0x7C00);
}

TEST(Codec, BF16ExhaustiveRoundTripAndTiesToEven) {
  checkSmallFloatExhaustive(fromBF16Bits, toBF16Bits, 0x7F80);
  EXPECT_EQ(toBF16Bits(1.0 + std::ldexp(1.0, -8)), 0x3F80); // tie -> even
  EXPECT_EQ(toBF16Bits(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);
  EXPECT_EQ(toBF16Bits(std::ldexp(511.0, 119)), 0x7F80); // tie above max -> inf
  EXPECT_EQ(toBF16Bits(3.0e38), 0x7F62);
  // direct double->bf16 rounding (no double rounding through f32)
  double justAboveTie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(toBF16Bits(justAboveTie), 0x3F81);
}
