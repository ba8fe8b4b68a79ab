//===- RematerializeTest.cpp - recomputation changes no value -------------===//
//
// The train steps of the MNIST MLP, LeNet and a GPT-2 block with an MSE
// train block, evaluated by the oracle on the same seeded inputs and state:
// as dlc-differentiate and the graph clean-up leave them, and
//  * with every saved activation recomputed in the backward pass (every op
//    up to matmul and conv2d: passes/autodiff/Recompute.h), and
//  * through dlc-compile with a memory budget (dlc-rematerialize, then
//    fusion, scheduling and the plan),
// must give bit-identical results: the loss and every new state tensor.
//
//===----------------------------------------------------------------------===//

#include "frontend/text/MLIRGen.h"
#include "frontend/text/Parser.h"
#include "ir/ParamSpec.h"
#include "oracle/Interpreter.h"
#include "passes/Passes.h"
#include "passes/autodiff/Recompute.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

using namespace mlir;
using namespace dlc;

namespace {

/// The train block the GPT-2 block example lacks (test/e2e/grad_jax.py's).
const char *kGpt2Train = R"(
train gpt2_block(target: f32[B, T, 768]) {
  loss      = mse(y, target)
  optimizer = adam(lr=0.001)
}
)";

class RematerializeTest : public ::testing::Test {
protected:
  void SetUp() override { dlg::loadBuilderDialects(context); }

  /// The train step of `examples/<name>.dlg` (+ `extra`) at `dims`, after
  /// dlc-differentiate, canonicalisation, constant folding and CSE.
  OwningOpRef<ModuleOp> trainStep(const std::string &name,
                                  std::map<std::string, int64_t> dims,
                                  const std::string &extra = "") {
    const char *root = std::getenv("DLC_SOURCE_DIR");
    EXPECT_NE(root, nullptr) << "DLC_SOURCE_DIR is not set (lit sets it)";
    if (!root)
      return nullptr;
    std::ifstream file(std::string(root) + "/examples/" + name + ".dlg");
    std::stringstream source;
    source << file.rdbuf() << extra;
    dlg::Diagnostic error;
    auto ast = dlg::parseModule(source.str(), nullptr, error);
    EXPECT_TRUE(ast) << error.message;
    if (!ast)
      return nullptr;
    dlg::BuildOptions options;
    options.dims = std::move(dims);
    options.buildTraining = true;
    dlg::BuildResult built = dlg::buildModule(*ast, context, options);
    EXPECT_TRUE(built.module);
    if (!built.module)
      return nullptr;
    ModuleOp module = *built.module;
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (!func.getSymName().ends_with("_train"))
        func.erase();
    PassManager pm(&context);
    OpPassManager &graph = pm.nest<func::FuncOp>();
    graph.addPass(createDlcDifferentiate());
    graph.addPass(createCanonicalizerPass());
    graph.addPass(createDlcFoldConstants());
    graph.addPass(createCSEPass());
    EXPECT_TRUE(succeeded(pm.run(module)));
    return std::move(built.module);
  }

  /// Seeded inputs for every argument: normal floats, small integers.
  static std::vector<oracle::Tensor> inputsFor(func::FuncOp func) {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> normal(0, 1);
    std::uniform_int_distribution<int> small(0, 9);
    std::vector<oracle::Tensor> inputs;
    for (Type type : func.getArgumentTypes()) {
      auto tensor = cast<RankedTensorType>(type);
      DType dtype = dtypeOf(tensor.getElementType());
      std::vector<int64_t> shape(tensor.getShape().begin(),
                                 tensor.getShape().end());
      std::vector<double> values(oracle::shapeNumel(shape));
      for (double &v : values)
        v = isFloat(dtype) ? normal(rng) * 0.5 : small(rng);
      inputs.push_back(oracle::Tensor::fromValues(dtype, shape, values));
    }
    return inputs;
  }

  static std::vector<oracle::Tensor> evaluate(func::FuncOp func) {
    ParamStore params;
    auto results = oracle::evaluate(func, inputsFor(func), params);
    EXPECT_TRUE(succeeded(results));
    return succeeded(results) ? std::move(*results)
                              : std::vector<oracle::Tensor>{};
  }

  static void expectBitIdentical(const std::vector<oracle::Tensor> &want,
                                 const std::vector<oracle::Tensor> &got) {
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(want[i].shape, got[i].shape) << "result " << i;
      ASSERT_EQ(want[i].data.size(), got[i].data.size()) << "result " << i;
      EXPECT_EQ(std::memcmp(want[i].data.data(), got[i].data.data(),
                            want[i].data.size() * sizeof(double)),
                0)
          << "result " << i << " differs";
    }
  }

  /// Recomputes every saved activation of `func`, up to matmul and conv2d;
  /// returns how many.
  static unsigned recomputeAll(func::FuncOp func) {
    unsigned count = 0;
    for (bool again = true; again;) {
      again = false;
      TrainStepParts parts(func);
      for (Value saved : savedActivations(func, parts)) {
        RecomputeChain chain = recomputeChain(saved, 3, parts);
        EXPECT_TRUE(recompute(saved, chain, parts));
        ++count;
        again = true;
        break; // `parts` describes the function before this one
      }
    }
    return count;
  }

  /// Checks both ways of recomputing against the train step as it is;
  /// `budget` makes dlc-rematerialize recompute at least `minValues` values.
  void check(const std::string &name, std::map<std::string, int64_t> dims,
             int64_t budget, int64_t minValues, const std::string &extra = "") {
    OwningOpRef<ModuleOp> module = trainStep(name, dims, extra);
    ASSERT_TRUE(module);
    auto step = *module->getOps<func::FuncOp>().begin();
    std::vector<oracle::Tensor> want = evaluate(step);

    OwningOpRef<ModuleOp> all = module->clone();
    auto allStep = *all->getOps<func::FuncOp>().begin();
    EXPECT_GT(recomputeAll(allStep), 0u);
    ASSERT_TRUE(succeeded(verify(*all)));
    // Nothing is saved any more: the forward values the backward reads are
    // arguments, parameters and constants alone.
    EXPECT_TRUE(savedActivations(allStep, TrainStepParts(allStep)).empty());
    expectBitIdentical(want, evaluate(allStep));

    OwningOpRef<ModuleOp> compiled = module->clone();
    PassManager pm(&context);
    buildCompilePipeline(pm, budget);
    ASSERT_TRUE(succeeded(pm.run(*compiled)));
    auto compiledStep = *compiled->getOps<func::FuncOp>().begin();
    auto record =
        compiledStep->getAttrOfType<DictionaryAttr>("dlc.rematerialization");
    ASSERT_TRUE(record);
    EXPECT_GE(record.getAs<IntegerAttr>("values").getInt(), minValues);
    expectBitIdentical(want, evaluate(compiledStep));
  }

  MLIRContext context;
};

TEST_F(RematerializeTest, MnistMlp) { check("mnist_mlp", {{"N", 16}}, 1, 1); }

// LeNet's 2x2 pools take their gradient from a mask the forward kernel
// writes (tiledMaxPoolGrad), so at N = 32 no recomputation shrinks its
// arena any more; the Fashion-MNIST CNN's input normalisation still gives
// the pass work.
TEST_F(RematerializeTest, LeNet) { check("lenet", {{"N", 32}}, 1, 0); }
TEST_F(RematerializeTest, FashionCnn) { check("fashion_mnist/cnn", {{"N", 32}}, 1, 1); }

// At a size the oracle evaluates quickly no recomputation shrinks the
// block's arena (its peak is the backward's own gradients), so only the
// recompute-everything half has work to check here.
TEST_F(RematerializeTest, Gpt2BlockWithMse) {
  check("gpt2_block", {{"B", 1}, {"T", 4}}, 1, 0, kGpt2Train);
}

} // namespace
