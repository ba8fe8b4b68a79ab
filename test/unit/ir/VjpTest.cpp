//===- VjpTest.cpp - every derivative rule against finite differences -----===//
//
// For every op with a derivative rule (DifferentiableOpInterface), on its
// sample in test/ir/every-op.mlir turned to float64, and for the binary
// element-wise ops also on random broadcasting shapes: the rule's gradient
// of L = sum(result * W) (W random) must equal the central finite
// difference (L(x + h e_k) - L(x - h e_k)) / 2h of every input element k,
// both evaluated by the float64 oracle. Tolerance: |analytic - numeric| <=
// 1e-6 + 1e-6 |numeric| with h = 1e-6 (the truncation error of the central
// difference is O(h^2), its rounding error about 1e-16 / h).
//
//===----------------------------------------------------------------------===//

#include "ir/DlcDialect.h"
#include "ir/ParamSpec.h"
#include "ir/Vjp.h"
#include "oracle/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

using namespace mlir;
using namespace dlc;

namespace {

constexpr double kStep = 1e-6, kAbsTol = 1e-6, kRelTol = 1e-6;

class VjpTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<DlcDialect, func::FuncDialect>();
  }

  /// The op a sample function is about: the one named like it, else its
  /// only dlc op.
  static Operation *sampleOp(func::FuncOp func) {
    Operation *named = nullptr, *any = nullptr;
    func.walk([&](Operation *op) {
      if (!isa<DlcDialect>(op->getDialect()))
        return;
      any = op;
      if (op->getName().stripDialect() == func.getSymName())
        named = op;
    });
    return named ? named : any;
  }

  /// Checks the rule of `func`'s op against finite differences; `what`
  /// names the case in failures. Returns the number of elements checked.
  int64_t check(func::FuncOp func, const std::string &what);

  MLIRContext context;
  std::mt19937_64 rng{42};
};

/// Inputs where every sample is smooth: floats in [0.5, 1.5] (positive for
/// log, sqrt, pow), integers in {0, 1}.
static oracle::Tensor randomTensor(RankedTensorType type, std::mt19937_64 &rng) {
  DType dtype = dtypeOf(type.getElementType());
  std::uniform_real_distribution<double> real(0.5, 1.5);
  std::vector<double> values(type.getNumElements());
  for (double &v : values)
    v = isFloat(dtype) ? real(rng) : double(rng() % 2);
  return oracle::Tensor::fromValues(dtype, std::vector<int64_t>(type.getShape()),
                                    values);
}

int64_t VjpTest::check(func::FuncOp func, const std::string &what) {
  Operation *op = sampleOp(func);
  if (!op || !op->hasTrait<dlc::OpTrait::VjpRule>())
    return 0;
  // Gradients reach only floating-point results (dlc-differentiate).
  if (llvm::none_of(op->getResultTypes(), [](Type t) {
        return isa<FloatType>(cast<RankedTensorType>(t).getElementType());
      }))
    return 0;
  // 1. A function computing the rule's gradients: the sample's arguments,
  // then one seed (the gradient of L) per result; returns one gradient per
  // operand (zeros where the rule gives none).
  OpBuilder b(&context);
  SmallVector<Type> argTypes(func.getArgumentTypes());
  for (Type t : op->getResultTypes())
    argTypes.push_back(t);
  b.setInsertionPointAfter(func);
  auto vjp = b.create<func::FuncOp>(func.getLoc(), func.getSymName().str() + "_vjp",
                                    b.getFunctionType(argTypes, {}));
  Block *body = vjp.addEntryBlock();
  b.setInsertionPointToEnd(body);
  IRMapping map;
  for (auto [from, to] : llvm::zip(func.getArguments(), body->getArguments()))
    map.map(from, to);
  Operation *clone = b.clone(*op, map);
  SmallVector<Value> seeds(body->getArguments().drop_front(func.getNumArguments()));
  SmallVector<Value> grads;
  VjpBuilder vb(b, op->getLoc());
  EXPECT_TRUE(succeeded(cast<DifferentiableOpInterface>(clone).buildVjp(
      vb, seeds, grads)))
      << what;
  EXPECT_FALSE(vb.failed()) << what;
  EXPECT_EQ(grads.size(), clone->getNumOperands()) << what;
  SmallVector<Value> returned;
  for (auto [operand, grad] : llvm::zip(clone->getOperands(), grads)) {
    if (grad) {
      EXPECT_EQ(grad.getType(), operand.getType()) << what;
      returned.push_back(grad);
    } else {
      returned.push_back(vb.broadcastTo(vb.like(operand, 0),
                                        shapeOfValue(operand)));
    }
  }
  b.create<func::ReturnOp>(func.getLoc(), returned);
  vjp.setFunctionType(b.getFunctionType(argTypes, ValueRange(returned).getTypes()));

  // 2. The rule's gradients at random inputs, with random weights W.
  std::vector<oracle::Tensor> inputs, weights;
  for (Type t : func.getArgumentTypes())
    inputs.push_back(randomTensor(cast<RankedTensorType>(t), rng));
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  for (Type t : op->getResultTypes()) {
    auto type = cast<RankedTensorType>(t);
    std::vector<double> w(type.getNumElements());
    for (double &v : w)
      v = real(rng);
    weights.push_back(oracle::Tensor::fromValues(
        dtypeOf(type.getElementType()),
        std::vector<int64_t>(type.getShape()), w));
  }
  std::vector<oracle::Tensor> vjpInputs = inputs;
  vjpInputs.insert(vjpInputs.end(), weights.begin(), weights.end());
  ParamStore params;
  auto analytic = oracle::evaluate(vjp, vjpInputs, params);
  if (failed(analytic)) {
    ADD_FAILURE() << what << ": the oracle refused the rule's gradient ops";
    return 0;
  }

  // 3. Central differences of L, element by element of every float
  // operand (operands are the sample's arguments).
  auto loss = [&](const std::vector<oracle::Tensor> &x) {
    auto results = oracle::evaluate(func, x, params);
    EXPECT_TRUE(succeeded(results)) << what;
    double sum = 0;
    for (size_t r = 0; r < weights.size(); ++r)
      for (size_t k = 0; k < weights[r].data.size(); ++k)
        sum += (*results)[r].data[k] * weights[r].data[k];
    return sum;
  };
  int64_t checked = 0;
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    auto arg = dyn_cast<BlockArgument>(operand);
    if (!arg || !isFloat(inputs[arg.getArgNumber()].dtype))
      continue;
    unsigned a = arg.getArgNumber();
    for (size_t k = 0; k < inputs[a].data.size(); ++k) {
      std::vector<oracle::Tensor> plus = inputs, minus = inputs;
      plus[a].data[k] += kStep;
      minus[a].data[k] -= kStep;
      double numeric = (loss(plus) - loss(minus)) / (2 * kStep);
      double got = (*analytic)[i].data[k];
      EXPECT_LE(std::fabs(got - numeric), kAbsTol + kRelTol * std::fabs(numeric))
          << what << ": d/d operand " << i << "[" << k << "]: rule " << got
          << ", finite difference " << numeric;
      ++checked;
    }
  }
  return checked;
}

/// The samples of every op, in float64.
TEST_F(VjpTest, EveryRuleOnItsSample) {
  const char *root = std::getenv("DLC_SOURCE_DIR");
  ASSERT_NE(root, nullptr) << "DLC_SOURCE_DIR is not set (lit sets it)";
  std::ifstream file(std::string(root) + "/test/ir/every-op.mlir");
  std::stringstream text;
  text << file.rdbuf();
  std::string ir = text.str();
  for (const char *narrow : {"f32", "f16"})
    for (size_t at = 0; (at = ir.find(narrow, at)) != std::string::npos;)
      ir.replace(at, 3, "f64");
  auto module = parseSourceString<ModuleOp>(ir, &context);
  ASSERT_TRUE(module);
  int64_t rules = 0;
  for (auto func : llvm::to_vector(module->getOps<func::FuncOp>())) {
    int64_t checked = check(func, "@" + func.getSymName().str());
    rules += checked > 0;
  }
  EXPECT_GE(rules, 40);
}

/// Binary element-wise ops on random shapes that broadcast both ways.
TEST_F(VjpTest, BinaryRulesOnRandomBroadcasts) {
  const char *ops[] = {"add", "sub", "mul", "div", "pow", "max", "min"};
  auto text = [](const std::vector<int64_t> &s) {
    std::string t = "tensor<";
    for (int64_t d : s)
      t += std::to_string(d) + "x";
    return t + "f64>";
  };
  int64_t checked = 0;
  for (int trial = 0; trial < 4; ++trial) {
    // A shape of rank 1..3 with sizes 1..3; each operand keeps a suffix of
    // it with some dimensions set to 1; the result is their broadcast.
    int rank = 1 + rng() % 3;
    std::vector<int64_t> full;
    for (int d = 0; d < rank; ++d)
      full.push_back(1 + rng() % 3);
    auto operand = [&]() {
      int keep = rng() % (rank + 1);
      std::vector<int64_t> s(full.end() - keep, full.end());
      for (int64_t &d : s)
        if (rng() % 2)
          d = 1;
      return s;
    };
    std::vector<int64_t> a = operand(), c = operand();
    std::vector<int64_t> out(std::max(a.size(), c.size()), 1);
    for (size_t d = 0; d < a.size(); ++d)
      out[out.size() - a.size() + d] = a[d];
    for (size_t d = 0; d < c.size(); ++d)
      out[out.size() - c.size() + d] =
          std::max(out[out.size() - c.size() + d], c[d]);
    for (const char *name : ops) {
      std::string ir = "func.func @" + std::string(name) + "(%a: " + text(a) +
                       ", %b: " + text(c) + ") -> " + text(out) +
                       " {\n  %0 = dlc." + name + " %a, %b : (" + text(a) +
                       ", " + text(c) + ") -> " + text(out) +
                       "\n  return %0 : " + text(out) + "\n}\n";
      auto module = parseSourceString<ModuleOp>(ir, &context);
      ASSERT_TRUE(module) << ir;
      checked += check(*module->getOps<func::FuncOp>().begin(), ir);
    }
  }
  EXPECT_GT(checked, 0);
}

} // namespace
