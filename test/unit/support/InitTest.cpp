//===- InitTest.cpp - the initialisers and parameter materialisation ------===//
//
// The initialisers must stay bit-exact (test/e2e/initialisers.py checks them
// against NumPy); materializeParam checks what a file or inline data holds.
//
//===----------------------------------------------------------------------===//

#include "support/Init.h"
#include "support/ParamSpec.h"
#include "support/weights/WeightFiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <unistd.h>

using namespace dlc;

namespace {
double sampleMean(const std::vector<double> &v) {
  double s = 0;
  for (double x : v)
    s += x;
  return s / static_cast<double>(v.size());
}
double sampleStd(const std::vector<double> &v) {
  double m = sampleMean(v), s = 0;
  for (double x : v)
    s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size()));
}
} // namespace

TEST(Init, SplitMix64ReferenceValues) {
  // Reference outputs of SplitMix64 with seed 0.
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(rng.next(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(rng.next(), 0x06C45D188009454Full);
}

TEST(Init, ZerosOnes) {
  HostTensor zeros = initParam(InitKind::Zeros, {}, DType::F32, {2, 2});
  EXPECT_EQ(zeros.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(zeros.toDoubles(), (std::vector<double>{0, 0, 0, 0}));
  HostTensor ones = initParam(InitKind::Ones, {}, DType::BF16, {3});
  EXPECT_EQ(ones.dtype(), DType::BF16);
  EXPECT_EQ(ones.toDoubles(), (std::vector<double>{1, 1, 1}));
}

TEST(Init, UniformFirstValueAndBounds) {
  InitOptions opt;
  opt.low = -2;
  opt.high = 3;
  opt.seed = 0;
  std::vector<double> t = initParam(InitKind::Uniform, opt, DType::F64, {1000}).toDoubles();
  const double u0 =
      static_cast<double>(0xE220A8397B1DCDAFull >> 11) * std::ldexp(1.0, -53);
  EXPECT_EQ(t[0], -2 + 5 * u0);
  for (double v : t) {
    EXPECT_GE(v, -2.0);
    EXPECT_LT(v, 3.0);
  }
}

TEST(Init, NormalFirstValue) {
  InitOptions opt;
  opt.mean = 1;
  opt.std = 2;
  opt.seed = 0;
  std::vector<double> t = initParam(InitKind::Normal, opt, DType::F64, {2}).toDoubles();
  const double u1 =
      static_cast<double>(0xE220A8397B1DCDAFull >> 11) * std::ldexp(1.0, -53);
  const double u2 =
      static_cast<double>(0x6E789E6AA1B965F4ull >> 11) * std::ldexp(1.0, -53);
  const double z = std::sqrt(-2 * std::log(1 - u1)) *
                   std::cos(2 * 3.14159265358979323846 * u2);
  EXPECT_EQ(t[0], 1 + 2 * z);
}

// A large tensor is filled by several threads, each from its place in the
// generator's sequence: the values are those of one sequential pass.
TEST(Init, LargeTensorsEqualTheSequentialAlgorithm) {
  InitOptions o;
  o.seed = 7;
  o.mean = 0.5;
  o.std = 0.02;
  const int64_t n = (int64_t(1) << 20) + 3;
  std::vector<double> normal = initParam(InitKind::Normal, o, DType::F32, {n}).toDoubles();
  std::vector<double> uniform = initParam(InitKind::Xavier, o, DType::F64, {n, 1}).toDoubles();
  SplitMix64 a(7), b(7);
  const double bound = std::sqrt(6.0 / (double(n) + 1.0));
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(normal[i], roundTo(DType::F32, 0.5 + 0.02 * a.normal())) << i;
    ASSERT_EQ(uniform[i], -bound + 2.0 * bound * b.uniform()) << i;
  }
}

TEST(Init, DeterministicPerSeed) {
  InitOptions a;
  a.seed = 42;
  InitOptions b;
  b.seed = 43;
  std::vector<double> x1 = initParam(InitKind::Normal, a, DType::F32, {4, 5}).toDoubles();
  std::vector<double> x2 = initParam(InitKind::Normal, a, DType::F32, {4, 5}).toDoubles();
  std::vector<double> y = initParam(InitKind::Normal, b, DType::F32, {4, 5}).toDoubles();
  EXPECT_EQ(x1, x2);
  EXPECT_NE(x1, y);
  int equal = 0;
  for (size_t i = 0; i < y.size(); ++i)
    equal += x1[i] == y[i];
  EXPECT_EQ(equal, 0);
  EXPECT_EQ(initParam(InitKind::He, a, DType::F64, {3, 3}).toDoubles(),
            initParam(InitKind::He, a, DType::F64, {3, 3}).toDoubles());
}

TEST(Init, NormalMeanStd) {
  InitOptions opt;
  opt.mean = 3;
  opt.std = 2;
  opt.seed = 7;
  std::vector<double> t = initParam(InitKind::Normal, opt, DType::F64, {100000}).toDoubles();
  EXPECT_NEAR(sampleMean(t), 3.0, 0.01 * 2.0);
  EXPECT_NEAR(sampleStd(t), 2.0, 0.01 * 2.0);
}

TEST(Init, HeStatistics) {
  // [in=100, out=1000] -> fan_in = 100, std = sqrt(2/100).
  InitOptions opt;
  opt.seed = 1234;
  std::vector<double> t = initParam(InitKind::He, opt, DType::F64, {100, 1000}).toDoubles();
  const double expectedStd = std::sqrt(2.0 / 100.0);
  EXPECT_NEAR(sampleMean(t), 0.0, 0.01 * expectedStd);
  EXPECT_NEAR(sampleStd(t), expectedStd, 0.01 * expectedStd);
}

TEST(Init, HeConvFanIn) {
  // OIHW [64, 8, 5, 5]: fan_in = 8 * 25 = 200 -> std = 0.1.
  InitOptions opt;
  opt.seed = 5;
  std::vector<double> t = initParam(InitKind::He, opt, DType::F64, {64, 8, 5, 5}).toDoubles();
  EXPECT_NEAR(sampleStd(t), 0.1, 0.03 * 0.1);
}

TEST(Init, XavierWithinBounds) {
  InitOptions opt;
  opt.seed = 99;
  // [20, 30]: a = sqrt(6 / 50)
  std::vector<double> t = initParam(InitKind::Xavier, opt, DType::F64, {20, 30}).toDoubles();
  const double a = std::sqrt(6.0 / 50.0);
  double lo = 1e9, hi = -1e9;
  for (double v : t) {
    EXPECT_GE(v, -a);
    EXPECT_LT(v, a);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_LT(lo, -0.9 * a); // 600 samples cover the range
  EXPECT_GT(hi, 0.9 * a);
  // Conv OIHW [4, 3, 3, 3]: fan_in = 27, fan_out = 36 -> a = sqrt(6/63).
  std::vector<double> c = initParam(InitKind::Xavier, opt, DType::F64, {4, 3, 3, 3}).toDoubles();
  const double ac = std::sqrt(6.0 / 63.0);
  for (double v : c)
    EXPECT_LE(std::fabs(v), ac);
}

TEST(Init, RoundsToDType) {
  InitOptions opt;
  opt.seed = 3;
  HostTensor t = initParam(InitKind::Normal, opt, DType::F16, {50});
  EXPECT_EQ(t.dtype(), DType::F16);
  for (double v : t.toDoubles())
    EXPECT_EQ(roundTo(DType::F16, v), v);
  // Integers as the oracle rounds them: truncated toward zero.
  opt.low = -3.9;
  opt.high = 3.9;
  for (double v : initParam(InitKind::Uniform, opt, DType::I32, {50}).toDoubles())
    EXPECT_EQ(v, std::trunc(v));
  HostTensor e = initParam(InitKind::Normal, opt, DType::F32, {0, 4});
  EXPECT_EQ(e.numel(), 0);
}

//===----------------------------------------------------------------------===//
// materializeParam
//===----------------------------------------------------------------------===//

TEST(ParamSpec, InitialiserDrawsAsInitParam) {
  ParamSpec spec;
  spec.init = InitKind::He;
  spec.options.seed = 9;
  HostTensor value;
  std::string error;
  ASSERT_TRUE(materializeParam(spec, DType::F32, {4, 3}, value, error)) << error;
  HostTensor expected = initParam(InitKind::He, spec.options, DType::F32, {4, 3});
  EXPECT_EQ(value.toDoubles(), expected.toDoubles());
}

TEST(ParamSpec, DataMustHoldTheShapesBytes) {
  ParamSpec spec;
  spec.source = ParamSpec::Source::Data;
  spec.data = {1, 0, 1};
  HostTensor value;
  std::string error;
  ASSERT_TRUE(materializeParam(spec, DType::I1, {3}, value, error)) << error;
  EXPECT_EQ(value.toDoubles(), (std::vector<double>{1, 0, 1}));
  EXPECT_FALSE(materializeParam(spec, DType::I32, {3}, value, error));
  EXPECT_EQ(error, "parameter data holds 3 bytes, 12 expected");
}

TEST(ParamSpec, FileMustHoldTheDeclaredType) {
  std::string path = (std::filesystem::path(::testing::TempDir()) /
                      ("dlc_param_" + std::to_string(::getpid()) + ".npy"))
                         .string();
  std::string error;
  ASSERT_TRUE(weights::writeNpy(path, HostTensor::fromDoubles(DType::F64, {2}, {1.5, -2}), error))
      << error;
  ParamSpec spec;
  spec.source = ParamSpec::Source::File;
  spec.path = path;
  HostTensor value;
  ASSERT_TRUE(materializeParam(spec, DType::F64, {2}, value, error)) << error;
  EXPECT_EQ(value.toDoubles(), (std::vector<double>{1.5, -2}));
  EXPECT_FALSE(materializeParam(spec, DType::F32, {2}, value, error));
  EXPECT_EQ(error, "the file holds f64[2], expected f32[2]");
  EXPECT_FALSE(materializeParam(spec, DType::F64, {1, 2}, value, error));
  EXPECT_EQ(error, "the file holds f64[2], expected f64[1, 2]");
  std::filesystem::remove(path);
  EXPECT_FALSE(materializeParam(spec, DType::F64, {2}, value, error));
  EXPECT_EQ(error, "cannot open '" + path + "': No such file or directory");
}
