//===- InterpreterTest.cpp - the oracle evaluating dlc IR -----------------===//
//
// The kernels are tested alone (OracleKernelsTest); these tests check what
// the interpreter adds: attribute handling (negative axes, defaults,
// transposes), parameters, constants, and errors reported at the op.
//
//===----------------------------------------------------------------------===//

#include "ir/DlcDialect.h"
#include "oracle/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using dlc::DType;
using dlc::oracle::Tensor;

namespace {

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() { context.loadDialect<dlc::DlcDialect, func::FuncDialect>(); }

  /// Evaluates the single function of `ir`; on an error returns nothing and
  /// keeps the message in `lastError`.
  std::optional<std::vector<Tensor>> run(const std::string &ir,
                                         const std::vector<Tensor> &inputs) {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      lastError = d.str();
      return success();
    });
    module = parseSourceString<ModuleOp>(ir, &context);
    if (!module)
      return std::nullopt;
    auto func = *module->getOps<func::FuncOp>().begin();
    auto results = dlc::oracle::evaluate(func, inputs, params);
    if (failed(results))
      return std::nullopt;
    return *results;
  }

  static Tensor f32(std::vector<int64_t> shape, std::vector<double> values) {
    return Tensor::fromValues(DType::F32, std::move(shape), std::move(values));
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  dlc::ParamStore params;
  std::string lastError;
};

TEST_F(InterpreterTest, ReduceWithNegativeAxisAndKeepdims) {
  auto out = run(R"(
    func.func @f(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
      %0 = dlc.reduce_sum %x {axes = array<i64: -1>, keepdims = true} : tensor<2x3xf32> -> tensor<2x1xf32>
      return %0 : tensor<2x1xf32>
    })",
                 {f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(out) << lastError;
  EXPECT_EQ((*out)[0].shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ((*out)[0].data, (std::vector<double>{6, 15}));
}

TEST_F(InterpreterTest, EmptyAxesReduceNothing) {
  auto out = run(R"(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = dlc.reduce_max %x {axes = array<i64>} : tensor<2xf32> -> tensor<2xf32>
      return %0 : tensor<2xf32>
    })",
                 {f32({2}, {7, -1})});
  ASSERT_TRUE(out) << lastError;
  EXPECT_EQ((*out)[0].data, (std::vector<double>{7, -1}));
}

TEST_F(InterpreterTest, SoftmaxOverNegativeAxisSumsToOne) {
  auto out = run(R"(
    func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %0 = dlc.softmax %x {axis = -2 : i64} : tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })",
                 {f32({2, 2}, {0, 5, 0, 1})});
  ASSERT_TRUE(out) << lastError;
  // Along axis 0: column 0 is uniform, column 1 favours row 0.
  EXPECT_FLOAT_EQ((*out)[0].data[0], 0.5f);
  EXPECT_FLOAT_EQ((*out)[0].data[2], 0.5f);
  EXPECT_NEAR((*out)[0].data[1] + (*out)[0].data[3], 1.0, 1e-7);
  EXPECT_GT((*out)[0].data[1], 0.98);
}

TEST_F(InterpreterTest, TransposedMatmul) {
  // a^T b with a = [[1, 2], [3, 4]] (2x2), b = [[1], [1]].
  auto out = run(R"(
    func.func @f(%a: tensor<2x2xf32>, %b: tensor<2x1xf32>) -> tensor<2x1xf32> {
      %0 = dlc.matmul %a, %b {transpose_a = true} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
      return %0 : tensor<2x1xf32>
    })",
                 {f32({2, 2}, {1, 2, 3, 4}), f32({2, 1}, {1, 1})});
  ASSERT_TRUE(out) << lastError;
  EXPECT_EQ((*out)[0].data, (std::vector<double>{4, 6}));
}

TEST_F(InterpreterTest, ScalarConstantBroadcasts) {
  auto out = run(R"(
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %c = dlc.constant dense<0.5> : tensor<f32>
      %0 = dlc.mul %x, %c : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    })",
                 {f32({3}, {2, 4, -6})});
  ASSERT_TRUE(out) << lastError;
  EXPECT_EQ((*out)[0].data, (std::vector<double>{1, 2, -3}));
}

TEST_F(InterpreterTest, ParamsAreDeterministicAndStored) {
  const char *ir = R"(
    func.func @f() -> tensor<4x3xf32> {
      %w = dlc.param "w" {init = {kind = "he", seed = 7 : i64}} : tensor<4x3xf32>
      return %w : tensor<4x3xf32>
    })";
  auto first = run(ir, {});
  ASSERT_TRUE(first) << lastError;
  ASSERT_EQ(params.count("w"), 1u);
  params.clear();
  auto second = run(ir, {});
  ASSERT_TRUE(second) << lastError;
  EXPECT_EQ((*first)[0].data, (*second)[0].data);
  // A stored value is used instead of the initialiser.
  params["w"] = dlc::HostTensor(DType::F32, {4, 3});
  auto stored = run(ir, {});
  ASSERT_TRUE(stored) << lastError;
  EXPECT_EQ((*stored)[0].data, std::vector<double>(12, 0.0));
}

TEST_F(InterpreterTest, DataParamsAndConstantsKeepTheirBits) {
  // Inline data and constants come through as their bytes (bf16 0x3F81,
  // f16 0x3C01, i1 one byte each), then as exact doubles.
  auto out = run(R"(
    func.func @f() -> (tensor<2xbf16>, tensor<2xf16>, tensor<3xi1>) {
      %p = dlc.param "p" {init = {kind = "data", value = dense<[1.0078125, -2.5]> : tensor<2xbf16>}} : tensor<2xbf16>
      %c = dlc.constant dense<[1.0009765625, 65504.0]> : tensor<2xf16>
      %b = dlc.constant dense<[true, false, true]> : tensor<3xi1>
      return %p, %c, %b : tensor<2xbf16>, tensor<2xf16>, tensor<3xi1>
    })",
                 {});
  ASSERT_TRUE(out) << lastError;
  EXPECT_EQ((*out)[0].data, (std::vector<double>{1.0078125, -2.5}));
  EXPECT_EQ((*out)[1].data, (std::vector<double>{1.0009765625, 65504.0}));
  EXPECT_EQ((*out)[2].data, (std::vector<double>{1, 0, 1}));
  std::vector<uint8_t> bytes(params.at("p").data(), params.at("p").data() + 4);
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0x81, 0x3F, 0x20, 0xC0}));
}

TEST_F(InterpreterTest, MissingWeightFileIsReportedAtTheParam) {
  auto out = run(R"(
    func.func @f() -> tensor<2xf32> {
      %w = dlc.param "w" {init = {kind = "file", path = "/nonexistent/w.npy"}} : tensor<2xf32>
      return %w : tensor<2xf32>
    })",
                 {});
  ASSERT_FALSE(out);
  EXPECT_EQ(lastError, "parameter 'w': cannot open '/nonexistent/w.npy': No such file or "
                       "directory");
}

TEST_F(InterpreterTest, CausalMaskFromIotaCompareSelect) {
  auto out = run(R"(
    func.func @f(%s: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %r = dlc.iota 0 : tensor<2x2xi32>
      %c = dlc.iota 1 : tensor<2x2xi32>
      %m = dlc.compare ge, %r, %c : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi1>
      %n = dlc.constant dense<-1.0e9> : tensor<f32>
      %0 = dlc.select %m, %s, %n : (tensor<2x2xi1>, tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })",
                 {f32({2, 2}, {1, 2, 3, 4})});
  ASSERT_TRUE(out) << lastError;
  EXPECT_EQ((*out)[0].data, (std::vector<double>{1, -1e9, 3, 4}));
}

TEST_F(InterpreterTest, LayerNormWithoutBias) {
  auto out = run(R"(
    func.func @f(%x: tensor<1x2xf64>, %g: tensor<2xf64>) -> tensor<1x2xf64> {
      %0 = dlc.layer_norm %x, %g {axis = -1 : i64, epsilon = 0.0 : f64} : (tensor<1x2xf64>, tensor<2xf64>) -> tensor<1x2xf64>
      return %0 : tensor<1x2xf64>
    })",
                 {Tensor::fromValues(DType::F64, {1, 2}, {1, 3}),
                  Tensor::fromValues(DType::F64, {2}, {2, 2})});
  ASSERT_TRUE(out) << lastError;
  EXPECT_EQ((*out)[0].data, (std::vector<double>{-2, 2}));
}

TEST_F(InterpreterTest, IndexOutOfRangeIsReportedAtTheOp) {
  auto out = run(R"(
    func.func @f(%x: tensor<3xf32>, %i: tensor<1xi32>) -> tensor<1xf32> {
      %0 = dlc.gather %x, %i {axis = 0 : i64} : (tensor<3xf32>, tensor<1xi32>) -> tensor<1xf32> loc("model.dlg":4:7)
      return %0 : tensor<1xf32>
    })",
                 {f32({3}, {1, 2, 3}),
                  Tensor::fromValues(DType::I32, {1}, {5})});
  ASSERT_FALSE(out);
  EXPECT_NE(lastError.find("out of range"), std::string::npos) << lastError;
}

TEST_F(InterpreterTest, InputOfTheWrongShapeIsAnError) {
  auto out = run(R"(
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      return %x : tensor<3xf32>
    })",
                 {f32({4}, {1, 2, 3, 4})});
  ASSERT_FALSE(out);
  EXPECT_NE(lastError.find("f32[4]"), std::string::npos) << lastError;
  EXPECT_NE(lastError.find("f32[3]"), std::string::npos) << lastError;
}

} // namespace
