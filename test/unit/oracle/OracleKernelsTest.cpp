//===- OracleKernelsTest.cpp - hand-computed checks of the oracle ---------===//

#include "oracle/kernels/Kernels.h"
#include "oracle/kernels/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace dlc;
using namespace dlc::oracle;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor T(DType dtype, std::vector<int64_t> shape, std::vector<double> values) {
  return Tensor::fromValues(dtype, std::move(shape), std::move(values));
}
Tensor F(std::vector<int64_t> shape, std::vector<double> values) {
  return T(DType::F64, std::move(shape), std::move(values));
}
Tensor I(std::vector<int64_t> shape, std::vector<double> values) {
  return T(DType::I64, std::move(shape), std::move(values));
}

void expectTensor(const Tensor &t, const std::vector<int64_t> &shape,
                  const std::vector<double> &values, double tol = 0.0) {
  ASSERT_EQ(t.shape, shape) << "got shape " << formatShape(t.shape);
  ASSERT_EQ(t.data.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i]))
      EXPECT_TRUE(std::isnan(t.data[i])) << "element " << i;
    else if (tol == 0.0)
      EXPECT_EQ(t.data[i], values[i]) << "element " << i;
    else
      EXPECT_NEAR(t.data[i], values[i], tol) << "element " << i;
  }
}

// The 3x3 image used by the conv / pool tests:
//   1 2 3
//   4 5 6
//   7 8 9
Tensor image3x3() { return F({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}); }
// The 2x2 kernel used by the conv tests:
//   1 2
//   3 4
Tensor kernel2x2() { return F({1, 1, 2, 2}, {1, 2, 3, 4}); }

} // namespace

//===----------------------------------------------------------------------===//
// Tensor (DType and roundTo are support/DType.h, tested in test/unit/support)
//===----------------------------------------------------------------------===//

TEST(OracleTensor, BasicsAndFormatShape) {
  Tensor s = Tensor::scalar(DType::F32, 0.1);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.data[0], roundTo(DType::F32, 0.1));
  Tensor z = Tensor::zeros(DType::I32, {2, 3});
  EXPECT_EQ(z.numel(), 6);
  expectTensor(z, {2, 3}, {0, 0, 0, 0, 0, 0});
  EXPECT_EQ(Tensor::zeros(DType::F32, {4, 0, 2}).numel(), 0);
  EXPECT_EQ(formatShape({2, 3}), "[2, 3]");
  EXPECT_EQ(formatShape({}), "[]");
  EXPECT_EQ(contiguousStrides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
}

TEST(OracleTensor, HostTensorsInAndOut) {
  Tensor t = T(DType::BF16, {2}, {1.5, -3});
  HostTensor host = t.toHost();
  EXPECT_EQ(host.dtype(), DType::BF16);
  EXPECT_EQ(host.shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(host.getDouble(1), -3.0);
  Tensor back = Tensor::fromHost(host);
  EXPECT_EQ(back.dtype, DType::BF16);
  EXPECT_EQ(back.data, t.data);
}

TEST(OracleTensor, BroadcastShapes) {
  EXPECT_EQ(broadcastShapes({3, 1}, {1, 4}), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(broadcastShapes({}, {2, 3}), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(broadcastShapes({5, 1, 3}, {4, 1}),
            (std::vector<int64_t>{5, 4, 3}));
  EXPECT_EQ(broadcastShapes({0, 1}, {1, 3}), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(broadcastIndexMap({2, 3}, {3}),
            (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(broadcastIndexMap({2, 3}, {2, 1}),
            (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

TEST(OracleUnary, NegAbsRelu) {
  Tensor x = F({4}, {-2, -0.5, 0, 3});
  expectTensor(unary("neg", x), {4}, {2, 0.5, 0, -3});
  expectTensor(unary("abs", x), {4}, {2, 0.5, 0, 3});
  expectTensor(unary("relu", x), {4}, {0, 0, 0, 3});
  expectTensor(unary("relu", F({1}, {kNaN})), {1}, {kNaN});
}

TEST(OracleUnary, ExpLogSqrtRsqrtTanh) {
  Tensor x = F({3}, {0, 1, 4});
  expectTensor(unary("exp", x), {3}, {1, std::exp(1.0), std::exp(4.0)}, 1e-12);
  expectTensor(unary("log", F({2}, {1, std::exp(1.0)})), {2}, {0, 1}, 1e-15);
  expectTensor(unary("sqrt", x), {3}, {0, 1, 2});
  expectTensor(unary("rsqrt", F({2}, {4, 0.25})), {2}, {0.5, 2});
  expectTensor(unary("tanh", F({2}, {0, 0.5})), {2},
               {0, 0.46211715726000974}, 1e-15);
  expectTensor(unary("log", F({1}, {0})), {1}, {-kInf});
}

TEST(OracleUnary, SigmoidIsStable) {
  Tensor x = F({4}, {0, 2, -1000, 1000});
  expectTensor(unary("sigmoid", x), {4},
               {0.5, 0.8807970779778823, 0, 1}, 1e-15);
  // exp(-1000) underflows to 0 instead of producing NaN.
  EXPECT_FALSE(std::isnan(unary("sigmoid", x).data[2]));
}

TEST(OracleUnary, GeluAndSilu) {
  Tensor x = F({3}, {-1, 0, 1});
  // 0.5 x (1 + erf(x/sqrt2)) = x * Phi(x); Phi(1) = 0.8413447460685429.
  expectTensor(unary("gelu", x), {3},
               {-0.15865525393145707, 0, 0.8413447460685429}, 1e-14);
  expectTensor(unary("gelu_tanh", x), {3},
               {-0.15880800939172324, 0, 0.8411919906082768}, 1e-14);
  // The left tail, where 1 + erf and 1 + tanh cancel: gelu(-8) =
  // -8 Phi(-8) = -4.9767684594174555e-15; gelu_tanh(-8) = -8 / (1 +
  // exp(-2u)) = -3.107782937501113e-21 (the textbook forms give 0 and
  // values off by orders of magnitude here).
  Tensor tail = F({1}, {-8});
  EXPECT_NEAR(unary("gelu", tail).data[0] / -4.9767684594174555e-15, 1, 1e-12);
  EXPECT_NEAR(unary("gelu_tanh", tail).data[0] / -3.107782937501113e-21, 1, 1e-12);
  // silu(1) = sigmoid(1) = 0.7310585786300049; silu(-1) = -sigmoid(-1).
  expectTensor(unary("silu", x), {3},
               {-0.2689414213699951, 0, 0.7310585786300049}, 1e-15);
}

TEST(OracleUnary, RoundsOutputToDType) {
  Tensor x = T(DType::F32, {1}, {1});
  Tensor y = unary("exp", x);
  EXPECT_EQ(y.dtype, DType::F32);
  EXPECT_EQ(y.data[0], static_cast<double>(static_cast<float>(std::exp(1.0))));
  Tensor h = unary("sqrt", T(DType::F16, {1}, {2}));
  EXPECT_EQ(h.data[0], 1.4140625); // sqrt(2) in binary16
}

TEST(OracleUnary, IntegerNegWraps) {
  Tensor x = T(DType::I32, {3}, {-2147483648.0, 5, -7});
  expectTensor(unary("neg", x), {3}, {-2147483648.0, -5, 7});
  expectTensor(unary("abs", x), {3}, {-2147483648.0, 5, 7});
}

TEST(OracleUnary, ZeroSizeAndScalar) {
  expectTensor(unary("exp", F({0, 3}, {})), {0, 3}, {});
  expectTensor(unary("neg", Tensor::scalar(DType::F64, 2)), {}, {-2});
}

//===----------------------------------------------------------------------===//
// Binary, compare, select, cast
//===----------------------------------------------------------------------===//

TEST(OracleBinary, SameShape) {
  Tensor a = F({2, 2}, {1, 2, 3, 4});
  Tensor b = F({2, 2}, {10, 20, 30, 40});
  expectTensor(binary("add", a, b), {2, 2}, {11, 22, 33, 44});
  expectTensor(binary("sub", a, b), {2, 2}, {-9, -18, -27, -36});
  expectTensor(binary("mul", a, b), {2, 2}, {10, 40, 90, 160});
  expectTensor(binary("div", b, a), {2, 2}, {10, 10, 10, 10});
  expectTensor(binary("max", a, F({2, 2}, {0, 5, 3, -1})), {2, 2},
               {1, 5, 3, 4});
  expectTensor(binary("min", a, F({2, 2}, {0, 5, 3, -1})), {2, 2},
               {0, 2, 3, -1});
}

TEST(OracleBinary, ScalarWithMatrix) {
  Tensor s = Tensor::scalar(DType::F64, 10);
  Tensor m = F({2, 2}, {1, 2, 3, 4});
  expectTensor(binary("sub", s, m), {2, 2}, {9, 8, 7, 6});
  expectTensor(binary("sub", m, s), {2, 2}, {-9, -8, -7, -6});
}

TEST(OracleBinary, ColumnWithRow) {
  Tensor col = F({3, 1}, {1, 2, 3});
  Tensor row = F({1, 4}, {1, 10, 100, 1000});
  expectTensor(binary("mul", col, row), {3, 4},
               {1, 10, 100, 1000, 2, 20, 200, 2000, 3, 30, 300, 3000});
  // Rank-1 rhs is right-aligned: [2,3] + [3].
  expectTensor(binary("add", F({2, 3}, {0, 0, 0, 1, 1, 1}),
                      F({3}, {1, 2, 3})),
               {2, 3}, {1, 2, 3, 2, 3, 4});
}

TEST(OracleBinary, FloatDivAndPow) {
  expectTensor(binary("div", F({3}, {1, -1, 0}), F({3}, {0, 0, 0})),
               {3}, {kInf, -kInf, kNaN});
  expectTensor(binary("pow", F({3}, {2, 4, 9}), F({3}, {3, 0.5, -1})),
               {3}, {8, 2, 1.0 / 9.0}, 1e-15);
}

TEST(OracleBinary, IntegerDivTruncates) {
  Tensor a = I({4}, {7, -7, 7, -7});
  Tensor b = I({4}, {2, 2, -2, -2});
  expectTensor(binary("div", a, b), {4}, {3, -3, -3, 3});
}

TEST(OracleBinary, IntegerDivByZeroThrows) {
  EXPECT_THROW(binary("div", I({2}, {1, 2}), I({2}, {1, 0})),
               EvalError);
  try {
    binary("div", T(DType::I32, {1}, {5}), T(DType::I32, {1}, {0}));
    FAIL() << "expected EvalError";
  } catch (const EvalError &e) {
    EXPECT_NE(std::string(e.what()).find("division by zero"),
              std::string::npos);
  }
}

TEST(OracleBinary, IntegerPow) {
  expectTensor(binary("pow", I({4}, {2, 3, -2, 5}),
                      I({4}, {10, 0, 3, 1})),
               {4}, {1024, 1, -8, 5});
  EXPECT_THROW(binary("pow", I({1}, {2}), I({1}, {-1})), EvalError);
  // 3^21 = 10460353203 wraps modulo 2^32 to 1870418611 in i32.
  expectTensor(binary("pow", T(DType::I32, {1}, {3}),
                      T(DType::I32, {1}, {21})),
               {1}, {1870418611});
}

TEST(OracleBinary, Int32OverflowWraps) {
  Tensor a = T(DType::I32, {2}, {2147483647, 65536});
  Tensor b = T(DType::I32, {2}, {1, 65536});
  expectTensor(binary("add", a, b), {2},
               {-2147483648.0, 65536 + 65536});
  expectTensor(binary("mul", a, b), {2}, {2147483647, 0});
  // 46341^2 = 2147488281 -> wraps to -2147479015.
  Tensor c = T(DType::I32, {1}, {46341});
  expectTensor(binary("mul", c, c), {1}, {-2147479015.0});
}

TEST(OracleBinary, MaxMinPropagateNaN) {
  Tensor a = F({3}, {kNaN, 1, 2});
  Tensor b = F({3}, {0, kNaN, 3});
  expectTensor(binary("max", a, b), {3}, {kNaN, kNaN, 3});
  expectTensor(binary("min", a, b), {3}, {kNaN, kNaN, 2});
}

TEST(OracleBinary, RoundsOnceToF16) {
  // 1 + 2^-11 is exactly halfway between two f16 values: ties to even -> 1.
  Tensor a = T(DType::F16, {1}, {1});
  Tensor b = T(DType::F16, {1}, {std::ldexp(1.0, -11)});
  EXPECT_EQ(b.data[0], std::ldexp(1.0, -11));
  expectTensor(binary("add", a, b), {1}, {1});
  EXPECT_EQ(binary("add", a, b).dtype, DType::F16);
}

TEST(OracleBinary, ZeroSizeBroadcast) {
  expectTensor(binary("add", F({0, 1}, {}), F({1, 3}, {1, 2, 3})),
               {0, 3}, {});
}

TEST(OracleCompare, PredicatesWithBroadcast) {
  Tensor a = F({3}, {1, 2, 3});
  Tensor s = Tensor::scalar(DType::F64, 2);
  Tensor lt = binary("lt", a, s);
  EXPECT_EQ(lt.dtype, DType::I1);
  expectTensor(lt, {3}, {1, 0, 0});
  expectTensor(binary("le", a, s), {3}, {1, 1, 0});
  expectTensor(binary("gt", a, s), {3}, {0, 0, 1});
  expectTensor(binary("ge", a, s), {3}, {0, 1, 1});
  expectTensor(binary("eq", a, s), {3}, {0, 1, 0});
  expectTensor(binary("ne", a, s), {3}, {1, 0, 1});
  expectTensor(binary("lt", F({2, 1}, {1, 5}),
                       F({1, 2}, {2, 3})),
               {2, 2}, {1, 1, 0, 0});
}

TEST(OracleCompare, NaNComparesUnordered) {
  Tensor n = F({1}, {kNaN});
  expectTensor(binary("eq", n, n), {1}, {0});
  expectTensor(binary("ne", n, n), {1}, {1});
  expectTensor(binary("lt", n, F({1}, {0})), {1}, {0});
}

TEST(OracleSelect, BroadcastsAllThree) {
  Tensor cond = T(DType::I1, {2, 1}, {1, 0});
  Tensor a = F({2, 2}, {1, 2, 3, 4});
  Tensor b = Tensor::scalar(DType::F64, -1);
  expectTensor(select(cond, a, b), {2, 2}, {1, 2, -1, -1});
  expectTensor(select(T(DType::I1, {2}, {0, 1}), F({1}, {7}), F({2, 1}, {8, 9})),
               {2, 2}, {8, 7, 9, 7});
}

TEST(OracleCast, FloatToIntAndF16) {
  Tensor x = F({4}, {1.7, -1.7, 2147483648.0, kNaN});
  Tensor y = cast(x, DType::I32);
  EXPECT_EQ(y.dtype, DType::I32);
  expectTensor(y, {4}, {1, -1, -2147483648.0, 0});
  expectTensor(cast(F({2}, {1.0 / 3.0, 70000}), DType::F16), {2},
               {0.333251953125, kInf});
  expectTensor(cast(F({3}, {0, -0.5, 3}), DType::I1), {3}, {0, 1, 1});
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

// a = [[1,2,3],[4,5,6]], b = [[7,8],[9,10],[11,12]]
// a@b = [[1*7+2*9+3*11, 1*8+2*10+3*12], [4*7+5*9+6*11, 4*8+5*10+6*12]]
//     = [[58, 64], [139, 154]]
TEST(OracleMatmul, Basic) {
  Tensor a = F({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = F({3, 2}, {7, 8, 9, 10, 11, 12});
  expectTensor(matmul(a, b), {2, 2}, {58, 64, 139, 154});
}

TEST(OracleMatmul, Transposed) {
  Tensor a = F({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor aT = F({3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor b = F({3, 2}, {7, 8, 9, 10, 11, 12});
  Tensor bT = F({2, 3}, {7, 9, 11, 8, 10, 12});
  expectTensor(matmul(aT, b, true, false), {2, 2}, {58, 64, 139, 154});
  expectTensor(matmul(a, bT, false, true), {2, 2}, {58, 64, 139, 154});
  expectTensor(matmul(aT, bT, true, true), {2, 2}, {58, 64, 139, 154});
}

TEST(OracleMatmul, BatchedRank3WithRank2) {
  // a0 = [[1,2]], a1 = [[3,4]]; b = [[1,2],[3,4]]
  // a0@b = [7, 10]; a1@b = [15, 22]
  Tensor a = F({2, 1, 2}, {1, 2, 3, 4});
  Tensor b = F({2, 2}, {1, 2, 3, 4});
  expectTensor(matmul(a, b), {2, 1, 2}, {7, 10, 15, 22});
}

TEST(OracleMatmul, BroadcastBatchDims) {
  // a batch [2,1]: a0 = [[1,2]], a1 = [[3,4]]
  // b batch [3]:   b0 = [[1],[1]], b1 = [[1],[0]], b2 = [[0],[1]]
  // out batch [2,3]: [[3,1,2],[7,3,4]]
  Tensor a = F({2, 1, 1, 2}, {1, 2, 3, 4});
  Tensor b = F({3, 2, 1}, {1, 1, 1, 0, 0, 1});
  expectTensor(matmul(a, b), {2, 3, 1, 1}, {3, 1, 2, 7, 3, 4});
}

TEST(OracleMatmul, BatchedTransposeB) {
  // b stored [2, N=1, K=2]; logical b_i = stored_i^T.
  Tensor a = F({2, 1, 2}, {1, 2, 3, 4});
  Tensor b = F({2, 1, 2}, {10, 1, 1, 10});
  // [1,2].[10,1] = 12 ; [3,4].[1,10] = 43
  expectTensor(matmul(a, b, false, true), {2, 1, 1}, {12, 43});
}

TEST(OracleMatmul, ZeroContractionDim) {
  expectTensor(matmul(F({2, 0}, {}), F({0, 3}, {})), {2, 3},
               {0, 0, 0, 0, 0, 0});
}

TEST(OracleMatmul, AccumulatesInDouble) {
  // In float32, 1e8 + 1 == 1e8, so a float accumulator would give 0.
  Tensor a = T(DType::F32, {1, 3}, {1e8, 1, -1e8});
  Tensor b = T(DType::F32, {3, 1}, {1, 1, 1});
  Tensor c = matmul(a, b);
  EXPECT_EQ(c.dtype, DType::F32);
  expectTensor(c, {1, 1}, {1});
}

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

// Valid 2x2 conv of the 3x3 image with [[1,2],[3,4]]:
//   (0,0): 1*1 + 2*2 + 4*3 + 5*4 = 37    (0,1): 2*1 + 3*2 + 5*3 + 6*4 = 47
//   (1,0): 4*1 + 5*2 + 7*3 + 8*4 = 67    (1,1): 5*1 + 6*2 + 8*3 + 9*4 = 77
TEST(OracleConv, ValidNoPadding) {
  Tensor y = conv2d(image3x3(), kernel2x2(), nullptr, {1, 1}, {0, 0, 0, 0},
                    {1, 1}, 1);
  expectTensor(y, {1, 1, 2, 2}, {37, 47, 67, 77});
}

TEST(OracleConv, Bias) {
  Tensor bias = F({1}, {1});
  Tensor y = conv2d(image3x3(), kernel2x2(), &bias, {1, 1}, {0, 0, 0, 0},
                    {1, 1}, 1);
  expectTensor(y, {1, 1, 2, 2}, {38, 48, 68, 78});
}

// Padding 1 on every side, stride 2: OH = (3 + 2 - 1 - 1)/2 + 1 = 2.
// Padded image rows: 0 0 0 0 0 / 0 1 2 3 0 / 0 4 5 6 0 / 0 7 8 9 0 / 0 0 0 0 0
//   (0,0): [[0,0],[0,1]] -> 1*4 = 4
//   (0,1): [[0,0],[2,3]] -> 2*3 + 3*4 = 18
//   (1,0): [[0,4],[0,7]] -> 4*2 + 7*4 = 36
//   (1,1): [[5,6],[8,9]] -> 5 + 12 + 24 + 36 = 77
TEST(OracleConv, PaddedStrided) {
  Tensor y = conv2d(image3x3(), kernel2x2(), nullptr, {2, 2}, {1, 1, 1, 1},
                    {1, 1}, 1);
  expectTensor(y, {1, 1, 2, 2}, {4, 18, 36, 77});
}

// Dilation 2: the 2x2 kernel taps (0,0),(0,2),(2,0),(2,2):
//   1*1 + 3*2 + 7*3 + 9*4 = 64;  OH = (3 - 2*1 - 1)/1 + 1 = 1.
TEST(OracleConv, Dilated) {
  Tensor y = conv2d(image3x3(), kernel2x2(), nullptr, {1, 1}, {0, 0, 0, 0},
                    {2, 2}, 1);
  expectTensor(y, {1, 1, 1, 1}, {64});
}

// Padding only on the left (top=0,left=1,bottom=0,right=0): OH=2, OW=3.
//   row 0: [[0,1],[0,4]] -> 2 + 16 = 18, then 37, 47
//   row 1: [[0,4],[0,7]] -> 8 + 28 = 36, then 67, 77
TEST(OracleConv, AsymmetricPadding) {
  Tensor y = conv2d(image3x3(), kernel2x2(), nullptr, {1, 1}, {0, 1, 0, 0},
                    {1, 1}, 1);
  expectTensor(y, {1, 1, 2, 3}, {18, 37, 47, 36, 67, 77});
}

// x channels: c0 = [[1,2],[3,4]], c1 = [[5,6],[7,8]].
TEST(OracleConv, GroupedDepthwise) {
  Tensor x = F({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor w = F({2, 1, 1, 1}, {2, -1}); // out0 = 2*c0, out1 = -c1
  Tensor y = conv2d(x, w, nullptr, {1, 1}, {0, 0, 0, 0}, {1, 1}, 2);
  expectTensor(y, {1, 2, 2, 2}, {2, 4, 6, 8, -5, -6, -7, -8});
}

TEST(OracleConv, MultiChannelAndGroupsOfTwo) {
  // x [1, 4, 1, 1] = [1, 2, 3, 4]; groups=2: group0 sees (1,2), group1 (3,4).
  Tensor x = F({1, 4, 1, 1}, {1, 2, 3, 4});
  // w [O=4, C/g=2, 1, 1]: outputs 0,1 -> group0, outputs 2,3 -> group1.
  Tensor w = F({4, 2, 1, 1}, {1, 1, 1, -1, 10, 0, 0, 10});
  // out0 = 1+2 = 3, out1 = 1-2 = -1, out2 = 10*3 = 30, out3 = 10*4 = 40
  Tensor y = conv2d(x, w, nullptr, {1, 1}, {0, 0, 0, 0}, {1, 1}, 2);
  expectTensor(y, {1, 4, 1, 1}, {3, -1, 30, 40});
  // groups=1 with w [1, 4, 1, 1] = all ones sums every channel.
  Tensor y1 = conv2d(x, F({1, 4, 1, 1}, {1, 1, 1, 1}), nullptr, {1, 1},
                     {0, 0, 0, 0}, {1, 1}, 1);
  expectTensor(y1, {1, 1, 1, 1}, {10});
}

TEST(OracleConv, BatchOfTwo) {
  Tensor x = F({2, 1, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
  Tensor w = F({1, 1, 2, 2}, {1, 1, 1, 1});
  expectTensor(conv2d(x, w, nullptr, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1),
               {2, 1, 1, 1}, {10, 100});
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

TEST(OraclePool, MaxPoolValid) {
  expectTensor(maxPool2d(image3x3(), {2, 2}, {1, 1}, {0, 0, 0, 0}),
               {1, 1, 2, 2}, {5, 6, 8, 9});
}

// Negated image, pad 1, kernel 2, stride 2: padding is -inf, not 0.
//   (0,0): {-1} -> -1     (0,1): {-2,-3} -> -2
//   (1,0): {-4,-7} -> -4  (1,1): {-5,-6,-8,-9} -> -5
TEST(OraclePool, MaxPoolPaddingIsNegInf) {
  Tensor x = F({1, 1, 3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -9});
  expectTensor(maxPool2d(x, {2, 2}, {2, 2}, {1, 1, 1, 1}), {1, 1, 2, 2},
               {-1, -2, -4, -5});
}

// Valid 2x2 average, stride 1: (1+2+4+5)/4 = 3, 4, 6, 7.
TEST(OraclePool, AvgPoolValid) {
  expectTensor(avgPool2d(image3x3(), {2, 2}, {1, 1}, {0, 0, 0, 0}, true),
               {1, 1, 2, 2}, {3, 4, 6, 7});
}

// Pad 1, kernel 2, stride 2; window sums {1}, {2,3}, {4,7}, {5,6,8,9}
// = 1, 5, 11, 28 over 1, 2, 2, 4 real elements.
TEST(OraclePool, AvgPoolCountIncludePad) {
  expectTensor(avgPool2d(image3x3(), {2, 2}, {2, 2}, {1, 1, 1, 1}, true),
               {1, 1, 2, 2}, {0.25, 1.25, 2.75, 7});
}

TEST(OraclePool, AvgPoolExcludePad) {
  expectTensor(avgPool2d(image3x3(), {2, 2}, {2, 2}, {1, 1, 1, 1}, false),
               {1, 1, 2, 2}, {1, 2.5, 5.5, 7});
}

TEST(OraclePool, AvgPoolExcludePadAllPaddingWindowThrows) {
  EXPECT_THROW(avgPool2d(image3x3(), {1, 1}, {1, 1}, {1, 1, 1, 1}, false),
               EvalError);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

TEST(OracleReduce, SumAxes) {
  Tensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  expectTensor(reduce(ReduceOp::Sum, x, {0}, false), {3}, {5, 7, 9});
  expectTensor(reduce(ReduceOp::Sum, x, {1}, false), {2}, {6, 15});
  expectTensor(reduce(ReduceOp::Sum, x, {0, 1}, false), {}, {21});
}

TEST(OracleReduce, KeepDims) {
  Tensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  expectTensor(reduce(ReduceOp::Sum, x, {1}, true), {2, 1}, {6, 15});
  expectTensor(reduce(ReduceOp::Max, x, {0, 1}, true), {1, 1}, {6});
}

TEST(OracleReduce, EmptyAxesIsCopy) {
  Tensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  expectTensor(reduce(ReduceOp::Sum, x, {}, false), {2, 3},
               {1, 2, 3, 4, 5, 6});
  expectTensor(reduce(ReduceOp::Mean, x, {}, true), {2, 3},
               {1, 2, 3, 4, 5, 6});
  expectTensor(reduce(ReduceOp::Max, Tensor::scalar(DType::F64, 3), {}, false),
               {}, {3});
}

TEST(OracleReduce, MeanMaxMin) {
  Tensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  expectTensor(reduce(ReduceOp::Mean, x, {1}, false), {2}, {2, 5});
  expectTensor(reduce(ReduceOp::Max, x, {0}, false), {3}, {4, 5, 6});
  expectTensor(reduce(ReduceOp::Min, x, {0, 1}, false), {}, {1});
  expectTensor(reduce(ReduceOp::Max, F({2}, {-kInf, -kInf}), {0}, false), {},
               {-kInf});
}

// x[i][j][k] = 4i + 2j + k (values 0..7).
TEST(OracleReduce, NonAdjacentAxesRank3) {
  Tensor x = F({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  // over j: [[0+2, 1+3], [4+6, 5+7]]
  expectTensor(reduce(ReduceOp::Sum, x, {1}, false), {2, 2}, {2, 4, 10, 12});
  // over i,k: j=0: 0+1+4+5 = 10; j=1: 2+3+6+7 = 18
  expectTensor(reduce(ReduceOp::Sum, x, {0, 2}, false), {2}, {10, 18});
  expectTensor(reduce(ReduceOp::Sum, x, {0, 2}, true), {1, 2, 1}, {10, 18});
}

TEST(OracleReduce, SizeOneDim) {
  Tensor x = F({1, 3}, {1, 2, 3});
  expectTensor(reduce(ReduceOp::Mean, x, {0}, false), {3}, {1, 2, 3});
}

TEST(OracleReduce, ZeroElements) {
  Tensor x = F({2, 0}, {});
  expectTensor(reduce(ReduceOp::Sum, x, {1}, false), {2}, {0, 0});
  EXPECT_THROW(reduce(ReduceOp::Mean, x, {1}, false), EvalError);
  EXPECT_THROW(reduce(ReduceOp::Max, x, {1}, false), EvalError);
  EXPECT_THROW(reduce(ReduceOp::Min, x, {0, 1}, false), EvalError);
  // Reducing the non-empty axis gives an empty result: nothing to fail on.
  expectTensor(reduce(ReduceOp::Max, x, {0}, false), {0}, {});
}

TEST(OracleReduce, MaxPropagatesNaN) {
  Tensor x = F({2, 2}, {1, kNaN, 3, 4});
  expectTensor(reduce(ReduceOp::Max, x, {1}, false), {2}, {kNaN, 4});
  expectTensor(reduce(ReduceOp::Min, x, {0}, false), {2}, {1, kNaN});
}

TEST(OracleReduce, SumAccumulatesInDouble) {
  Tensor x = T(DType::F32, {3}, {1e8, 1, -1e8});
  expectTensor(reduce(ReduceOp::Sum, x, {0}, false), {}, {1});
  // Integer mean truncates when rounded to the integer dtype: (1+2)/2 = 1.5.
  expectTensor(reduce(ReduceOp::Mean, I({2}, {1, 2}), {0}, false), {}, {1});
}

//===----------------------------------------------------------------------===//
// Softmax / normalisation
//===----------------------------------------------------------------------===//

// softmax([1,2,3]) = e^{x-3} / (e^-2 + e^-1 + 1)
TEST(OracleSoftmax, KnownValuesAndRowsSumToOne) {
  Tensor x = F({2, 3}, {1, 2, 3, 0, 0, 0});
  Tensor y = softmax(x, 1);
  expectTensor(y, {2, 3},
               {0.09003057317038046, 0.24472847105479764, 0.6652409557748218,
                1.0 / 3, 1.0 / 3, 1.0 / 3},
               1e-15);
  EXPECT_NEAR(y.data[0] + y.data[1] + y.data[2], 1.0, 1e-15);
}

TEST(OracleSoftmax, StableForLargeValuesAndAxis0) {
  expectTensor(softmax(F({2}, {1000, 1000}), 0), {2}, {0.5, 0.5});
  expectTensor(softmax(F({2}, {-1000, 0}), 0), {2}, {0, 1}, 1e-300);
  // Axis 0 of [[1, 0], [1, 0]]: each column is uniform.
  expectTensor(softmax(F({2, 2}, {1, 0, 1, 0}), 0), {2, 2},
               {0.5, 0.5, 0.5, 0.5});
}

TEST(OracleSoftmax, LogSoftmax) {
  // x - 3 - log(e^-2 + e^-1 + 1); log(...) = 0.4076059644443804
  expectTensor(logSoftmax(F({3}, {1, 2, 3}), 0), {3},
               {-2.4076059644443806, -1.4076059644443804, -0.4076059644443804},
               1e-14);
  // Stable: no -inf/NaN for large gaps.
  expectTensor(logSoftmax(F({2}, {0, 2000}), 0), {2}, {-2000, 0});
}

// Row [1,2,3,4]: mean 2.5, biased var (2.25+0.25+0.25+2.25)/4 = 1.25,
// normalised = (x - 2.5)/sqrt(1.25) = [-1.3416.., -0.4472.., 0.4472.., 1.3416..]
TEST(OracleNorm, LayerNormRow) {
  Tensor x = F({1, 4}, {1, 2, 3, 4});
  Tensor scale = F({4}, {1, 1, 2, 2});
  Tensor bias = F({4}, {0, 1, 0, 1});
  const double a = 1.5 / std::sqrt(1.25), b = 0.5 / std::sqrt(1.25);
  expectTensor(layerNorm(x, scale, nullptr, 1, 0.0), {1, 4}, {-a, -b, 2 * b, 2 * a},
               1e-15);
  expectTensor(layerNorm(x, scale, &bias, 1, 0.0), {1, 4},
               {-a, -b + 1, 2 * b, 2 * a + 1}, 1e-15);
  EXPECT_NEAR(a, 1.3416407864998738, 1e-15);
}

// Axis 0 over the whole [[1,3],[5,7]]: mean 4, var (9+1+1+9)/4 = 5;
// with eps = 4, sqrt(var + eps) = 3 -> [-1, -1/3, 1/3, 1].
TEST(OracleNorm, LayerNormWholeTensorWithEpsilon) {
  Tensor x = F({2, 2}, {1, 3, 5, 7});
  Tensor scale = F({2, 2}, {1, 1, 1, 1});
  expectTensor(layerNorm(x, scale, nullptr, 0, 4.0), {2, 2},
               {-1, -1.0 / 3, 1.0 / 3, 1}, 1e-15);
}

TEST(OracleNorm, LayerNormPerRow) {
  // Two rows normalised independently; a constant row gives 0 (eps > 0).
  Tensor x = F({2, 2}, {0, 2, 5, 5});
  Tensor scale = F({2}, {1, 1});
  expectTensor(layerNorm(x, scale, nullptr, 1, 0.0 + 1e-300), {2, 2},
               {-1, 1, 0, 0}, 1e-12);
}

TEST(OracleNorm, RmsNorm) {
  // mean(x^2) = 4 -> rms 2; x/2 * scale
  expectTensor(rmsNorm(F({4}, {2, -2, 2, -2}), F({4}, {1, 2, 3, 4}), 0, 0.0),
               {4}, {1, -2, 3, -4});
  // mean([3,-3]^2) = 9, eps 16 -> sqrt(25) = 5 -> [0.6, -0.6]
  expectTensor(rmsNorm(F({1, 2}, {3, -3}), F({2}, {1, 1}), 1, 16.0), {1, 2},
               {0.6, -0.6}, 1e-15);
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

// Row 0 logits [1,2,3], label 2: -log_softmax = log(e^-2+e^-1+1) = 0.40760596
// Row 1 logits [1,1,1], label 0: log 3 = 1.0986122886681098
TEST(OracleLoss, CrossEntropyReductions) {
  Tensor logits = F({2, 3}, {1, 2, 3, 1, 1, 1});
  Tensor labels = I({2}, {2, 0});
  expectTensor(crossEntropy(logits, labels, Reduction::None, DType::F64), {2},
               {0.4076059644443804, 1.0986122886681098}, 1e-14);
  expectTensor(crossEntropy(logits, labels, Reduction::Sum, DType::F64), {},
               {1.5062182531124901}, 1e-14);
  expectTensor(crossEntropy(logits, labels, Reduction::Mean, DType::F64), {},
               {0.7531091265562451}, 1e-14);
}

TEST(OracleLoss, CrossEntropyMatchesLogSoftmax) {
  Tensor logits = F({2, 2, 3}, {0.5, -1, 2, 3, 3, -3, 0, 0, 1, -2, 4, 4});
  Tensor labels = I({2, 2}, {1, 0, 2, 2});
  Tensor ls = logSoftmax(logits, 2);
  Tensor ce = crossEntropy(logits, labels, Reduction::None, DType::F64);
  expectTensor(ce, {2, 2}, {-ls.data[1], -ls.data[3], -ls.data[8], -ls.data[11]},
               1e-14);
}

TEST(OracleLoss, CrossEntropyOutputDTypeAndRank1) {
  Tensor ce = crossEntropy(F({3}, {1, 1, 1}), Tensor::scalar(DType::I32, 1),
                           Reduction::None, DType::F32);
  EXPECT_EQ(ce.dtype, DType::F32);
  expectTensor(ce, {}, {roundTo(DType::F32, std::log(3.0))});
}

TEST(OracleLoss, CrossEntropyLabelOutOfRange) {
  Tensor logits = F({2, 3}, {1, 2, 3, 1, 1, 1});
  EXPECT_THROW(crossEntropy(logits, I({2}, {0, 3}), Reduction::Mean,
                            DType::F64),
               EvalError);
  EXPECT_THROW(crossEntropy(logits, I({2}, {-1, 0}), Reduction::None,
                            DType::F64),
               EvalError);
}

// Label smoothing e: (1 - e) nll + e mean_c(-log_softmax[c]). Row 0: the
// mean is lse - mean(x) = 1.40760596444438, so with e = 0.3 the loss is
// 0.40760596444438 + 0.3 (1.40760596444438 - 0.40760596444438). Row 1:
// every class has log 3, whatever e.
TEST(OracleLoss, CrossEntropyLabelSmoothing) {
  Tensor logits = F({2, 3}, {1, 2, 3, 1, 1, 1});
  Tensor labels = I({2}, {2, 0});
  expectTensor(crossEntropy(logits, labels, Reduction::None, DType::F64, 0.3),
               {2}, {0.7076059644443804, 1.0986122886681098}, 1e-14);
  expectTensor(crossEntropy(logits, labels, Reduction::Mean, DType::F64, 0.3),
               {}, {(0.7076059644443804 + 1.0986122886681098) / 2}, 1e-14);
}

// A position labelled ignore_index has loss 0 and is not counted by the
// mean, even where the label is outside [0, C); every position ignored
// gives NaN.
TEST(OracleLoss, CrossEntropyIgnoreIndex) {
  Tensor logits = F({2, 3}, {1, 2, 3, 1, 1, 1});
  Tensor labels = I({2}, {2, 7});
  expectTensor(crossEntropy(logits, labels, Reduction::None, DType::F64, 0, 7),
               {2}, {0.4076059644443804, 0}, 1e-14);
  expectTensor(crossEntropy(logits, labels, Reduction::Mean, DType::F64, 0, 7),
               {}, {0.4076059644443804}, 1e-14);
  expectTensor(crossEntropy(logits, labels, Reduction::Sum, DType::F64, 0.3, 7),
               {}, {0.7076059644443804}, 1e-14);
  Tensor none = crossEntropy(logits, I({2}, {7, 7}), Reduction::Mean,
                             DType::F64, 0, 7);
  EXPECT_TRUE(std::isnan(none.data[0]));
  EXPECT_THROW(crossEntropy(logits, I({2}, {7, 3}), Reduction::Mean,
                            DType::F64, 0, 7),
               EvalError);
}

TEST(OracleLoss, Mse) {
  Tensor p = F({3}, {1, 2, 3});
  Tensor t = F({3}, {1, 0, 5});
  expectTensor(mse(p, t, Reduction::None), {3}, {0, 4, 4});
  expectTensor(mse(p, t, Reduction::Sum), {}, {8});
  expectTensor(mse(p, t, Reduction::Mean), {}, {8.0 / 3});
  EXPECT_THROW(mse(F({0}, {}), F({0}, {}), Reduction::Mean), EvalError);
  expectTensor(mse(F({0}, {}), F({0}, {}), Reduction::Sum), {}, {0});
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST(OracleData, Reshape) {
  Tensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  expectTensor(reshape(x, {3, 2}), {3, 2}, {1, 2, 3, 4, 5, 6});
  expectTensor(reshape(F({1}, {7}), {}), {}, {7});
}

TEST(OracleData, Transpose) {
  Tensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  expectTensor(transpose(x, {1, 0}), {3, 2}, {1, 4, 2, 5, 3, 6});
  // x[0][j][k] = 3j + k; out[k][0][j] = x[0][j][k]
  Tensor y = F({1, 2, 3}, {0, 1, 2, 3, 4, 5});
  expectTensor(transpose(y, {2, 0, 1}), {3, 1, 2}, {0, 3, 1, 4, 2, 5});
  expectTensor(transpose(y, {0, 1, 2}), {1, 2, 3}, {0, 1, 2, 3, 4, 5});
}

TEST(OracleData, BroadcastTo) {
  expectTensor(broadcastTo(F({3}, {1, 2, 3}), {2, 3}), {2, 3},
               {1, 2, 3, 1, 2, 3});
  expectTensor(broadcastTo(F({2, 1}, {1, 2}), {2, 3}), {2, 3},
               {1, 1, 1, 2, 2, 2});
  expectTensor(broadcastTo(Tensor::scalar(DType::F64, 5), {2, 2}), {2, 2},
               {5, 5, 5, 5});
  expectTensor(broadcastTo(F({1}, {5}), {0}), {0}, {});
}

TEST(OracleData, Concat) {
  Tensor a = F({2, 2}, {1, 2, 3, 4});
  Tensor b = F({1, 2}, {5, 6});
  expectTensor(concat(std::vector<const Tensor *>{&a, &b}, 0), {3, 2},
               {1, 2, 3, 4, 5, 6});
  Tensor c = F({2, 1}, {9, 8});
  expectTensor(concat(std::vector<Tensor>{a, c, a}, 1), {2, 5},
               {1, 2, 9, 1, 2, 3, 4, 8, 3, 4});
}

TEST(OracleData, ConcatWithEmptyInput) {
  Tensor a = F({2, 0}, {});
  Tensor b = F({2, 2}, {1, 2, 3, 4});
  expectTensor(concat(std::vector<Tensor>{a, b, a}, 1), {2, 2}, {1, 2, 3, 4});
}

TEST(OracleData, SliceWithStrides) {
  // x[i][j] = 5i + j
  Tensor x = F({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  // cols 1, 3 (ceil((5-1)/2) = 2)
  expectTensor(slice(x, {0, 1}, {2, 5}, {1, 2}), {2, 2}, {1, 3, 6, 8});
  // rows 0; cols 0, 3 (ceil(5/3) = 2)
  expectTensor(slice(x, {0, 0}, {2, 5}, {2, 3}), {1, 2}, {0, 3});
  expectTensor(slice(x, {1, 2}, {2, 4}, {1, 1}), {1, 2}, {7, 8});
  // Empty: start == limit.
  expectTensor(slice(x, {0, 3}, {2, 3}, {1, 1}), {2, 0}, {});
}

TEST(OracleData, GatherAxis0NegativeIndex) {
  Tensor x = F({3, 2}, {1, 2, 3, 4, 5, 6});
  expectTensor(gather(x, I({2}, {-1, 0}), 0), {2, 2}, {5, 6, 1, 2});
  expectTensor(gather(x, I({1}, {-3}), 0), {1, 2}, {1, 2});
}

TEST(OracleData, GatherAxis1MatrixIndices) {
  // out[i][a][b] = x[i][idx[a][b]]
  Tensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor idx = I({2, 2}, {0, 2, 1, 1});
  expectTensor(gather(x, idx, 1), {2, 2, 2}, {1, 3, 2, 2, 4, 6, 5, 5});
}

TEST(OracleData, GatherScalarIndexDropsAxis) {
  Tensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  expectTensor(gather(x, Tensor::scalar(DType::I32, 2), 1), {2}, {3, 6});
  expectTensor(gather(x, I({0}, {}), 0), {0, 3}, {});
}

TEST(OracleData, GatherOutOfRange) {
  Tensor x = F({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  try {
    gather(x, I({1}, {7}), 1);
    FAIL() << "expected EvalError";
  } catch (const EvalError &e) {
    EXPECT_STREQ(e.what(), "gather: index 7 out of range for axis 1 of size 5");
  }
  EXPECT_THROW(gather(x, I({1}, {-6}), 1), EvalError);
  EXPECT_THROW(gather(x, I({1}, {5}), 1), EvalError);
}

TEST(OracleData, Embedding) {
  Tensor table = F({3, 2}, {0, 1, 10, 11, 20, 21});
  expectTensor(embedding(table, I({1, 2}, {2, 0})), {1, 2, 2},
               {20, 21, 0, 1});
  expectTensor(embedding(table, Tensor::scalar(DType::I32, 1)), {2}, {10, 11});
  EXPECT_THROW(embedding(table, I({1}, {3})), EvalError);
  EXPECT_THROW(embedding(table, I({1}, {-1})), EvalError); // no wrapping
}

TEST(OracleData, Pad) {
  Tensor x = F({2, 2}, {1, 2, 3, 4});
  expectTensor(pad(x, {1, 0}, {0, 1}, 9), {3, 3},
               {9, 9, 9, 1, 2, 9, 3, 4, 9});
  expectTensor(pad(F({0}, {}), {1}, {1}, -1), {2}, {-1, -1});
  // The fill value is rounded to the tensor dtype.
  expectTensor(pad(T(DType::I32, {1}, {5}), {1}, {0}, 2.7), {2}, {2, 5});
}

TEST(OracleData, Iota) {
  Tensor a = iota({2, 3}, 1, DType::I32);
  EXPECT_EQ(a.dtype, DType::I32);
  expectTensor(a, {2, 3}, {0, 1, 2, 0, 1, 2});
  expectTensor(iota({2, 3}, 0, DType::F32), {2, 3}, {0, 0, 0, 1, 1, 1});
  expectTensor(iota({3, 0}, 0, DType::I64), {3, 0}, {});
}
