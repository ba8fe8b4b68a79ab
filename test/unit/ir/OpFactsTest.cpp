//===- OpFactsTest.cpp - every op says what it is, and runs everywhere ----===//
//
// Walks every op the dlc dialect registers and its sample in
// test/ir/every-op.mlir, and checks that the facts passes rely on are
// declared by the op (ir/DlcInterfaces.td), never defaulted: a role and a
// FLOP count for every op, FLOPs where it computes, a scalar function known
// to the oracle and the code generators for every element-wise op; then
// that the oracle and the CPU code generator both take every sample and
// agree on its values. A new op without a sample, or with a missing fact,
// fails here.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/ScalarFunctions.h"
#include "codegen/cpu/CpuBackend.h"
#include "codegen/cpu/CpuTarget.h"
#include "driver/ModuleRunner.h"
#include "ir/DlcDialect.h"
#include "ir/ParamSpec.h"
#include "oracle/Interpreter.h"
#include "oracle/kernels/Kernels.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <set>

using namespace mlir;
using namespace dlc;

namespace {

/// Ops the CPU code generator does not take, with the reason: the
/// collectives, which are communication the runtime's comm carries out
/// between the kernels of a partitioned program (issue 12), not kernels.
const char *const kCollective =
    "a collective: communication between ranks, not a kernel";
const std::map<std::string, std::string> kOracleOnly = {
    {"dlc.all_reduce", kCollective},  {"dlc.all_gather", kCollective},
    {"dlc.reduce_scatter", kCollective}, {"dlc.all_to_all", kCollective},
    {"dlc.broadcast", kCollective},   {"dlc.shard", kCollective},
    {"dlc.send", kCollective},        {"dlc.recv", kCollective}};

class OpFactsTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<DlcDialect, func::FuncDialect>();
    const char *root = std::getenv("DLC_SOURCE_DIR");
    ASSERT_NE(root, nullptr) << "DLC_SOURCE_DIR is not set (lit sets it)";
    path = std::string(root) + "/test/ir/every-op.mlir";
    module = parseSourceFile<ModuleOp>(path, &context);
    ASSERT_TRUE(module) << "cannot parse " << path;
  }

  /// The op each sample is about: the one named like its function, or
  /// for a variant sample `@<op>_<variant>` (`@cast_from_u8`), that op.
  Operation *sampleOp(func::FuncOp func) {
    Operation *found = nullptr;
    StringRef sample = func.getSymName();
    func.walk([&](Operation *op) {
      StringRef name = op->getName().stripDialect();
      if (isa<DlcDialect>(op->getDialect()) &&
          (sample == name ||
           (sample.starts_with(name) && sample[name.size()] == '_' &&
            (!found || name.size() > found->getName().stripDialect().size()))))
        found = op;
    });
    return found;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string path;
};

TEST_F(OpFactsTest, EveryRegisteredOpHasASample) {
  std::set<std::string> sampled;
  module->walk([&](Operation *op) {
    sampled.insert(op->getName().getStringRef().str());
  });
  auto *dialect = context.getLoadedDialect<DlcDialect>();
  unsigned count = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (&name.getDialect() != dialect)
      continue;
    ++count;
    EXPECT_TRUE(sampled.count(name.getStringRef().str()))
        << name.getStringRef().str() << " has no sample in " << path;
  }
  EXPECT_GT(count, 50u);
}

TEST_F(OpFactsTest, EveryOpDeclaresItsRoleAndCost) {
  auto *dialect = context.getLoadedDialect<DlcDialect>();
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (&name.getDialect() != dialect)
      continue;
    std::string op = name.getStringRef().str();
    EXPECT_TRUE(name.hasInterface<KernelOpInterface>()) << op;
    EXPECT_TRUE(name.hasInterface<CostOpInterface>()) << op;
  }
  module->walk([&](Operation *op) {
    if (!isa<DlcDialect>(op->getDialect()))
      return;
    std::string what = op->getName().getStringRef().str();
    KernelRole role = kernelRoleOf(op);
    if (role == KernelRole::Row)
      EXPECT_TRUE(isa<RowOpInterface>(op)) << what << " is a row op";
    if (role == KernelRole::Elementwise && op->getNumOperands() > 0)
      EXPECT_TRUE(isa<ElementwiseOpInterface>(op))
          << what << " is element-wise but names no scalar function";
    if (isa<ElementwiseOpInterface>(op))
      EXPECT_EQ(role, KernelRole::Elementwise) << what;
  });
}

TEST_F(OpFactsTest, EveryOpHasAShardingRule) {
  // The partitioner asks every op how its dimensions split; a rule must
  // name one factor or -1 for every dimension of every operand and result.
  for (auto func : module->getOps<func::FuncOp>()) {
    Operation *op = sampleOp(func);
    ASSERT_TRUE(op);
    auto ruled = dyn_cast<ShardingRuleOpInterface>(op);
    ASSERT_TRUE(ruled) << op->getName().getStringRef().str() << " has no sharding rule";
    ShardingRule rule = ruled.getShardingRule();
    ASSERT_EQ(rule.operands.size(), op->getNumOperands()) << op->getName().getStringRef().str();
    ASSERT_EQ(rule.results.size(), op->getNumResults()) << op->getName().getStringRef().str();
    auto check = [&](ValueRange values, const auto &dims) {
      for (auto [v, d] : llvm::zip(values, dims)) {
        auto shape = cast<RankedTensorType>(v.getType()).getShape();
        ASSERT_EQ(d.size(), shape.size()) << op->getName().getStringRef().str();
        for (auto [size, f] : llvm::zip(shape, d))
          if (f >= 0)
            EXPECT_EQ(rule.factorSizes[f] == 0 ? 0 : size % rule.factorSizes[f], 0)
                << op->getName().getStringRef().str() << ": a dim of " << size
                << " is a factor of size " << rule.factorSizes[f];
      }
    };
    check(op->getOperands(), rule.operands);
    check(op->getResults(), rule.results);
  }
}

TEST_F(OpFactsTest, FlopsWhereAnOpComputes) {
  module->walk([&](Operation *op) {
    auto cost = dyn_cast<CostOpInterface>(op);
    if (!cost)
      return;
    std::string what = op->getName().getStringRef().str();
    KernelRole role = kernelRoleOf(op);
    bool computes = computesValues(role) && op->getNumOperands() > 0;
    if (computes)
      EXPECT_GT(cost.getFlops(), 0) << what << " computes but counts 0 FLOPs";
    else if (role != KernelRole::Structure)
      EXPECT_EQ(cost.getFlops(), 0) << what << " moves data but counts FLOPs";
    EXPECT_EQ(cost.getBytesRead(), tensorBytes(op->getOperandTypes())) << what;
    EXPECT_EQ(cost.getBytesWritten(), tensorBytes(op->getResultTypes()))
        << what;
  });
}

TEST_F(OpFactsTest, ScalarFunctionsAreKnownToTheOracleAndTheCodeGenerators) {
  codegen::CpuTarget target;
  module->walk([&](ElementwiseOpInterface op) {
    if (isa<CastOp>(op)) // converts between dtypes: its own rule in both
      return;
    std::string fn = op.getScalarFunction().str();
    EXPECT_TRUE(oracle::hasScalarFunction(fn)) << "oracle: no '" << fn << "'";
    std::vector<std::string> args(op->getNumOperands(), "x");
    EXPECT_TRUE(codegen::scalarExpression(target, fn, args, DType::F32))
        << "codegen: no '" << fn << "'";
  });
}

/// Seeded inputs in the ranges every sample is defined on.
static oracle::Tensor inputFor(RankedTensorType type, std::mt19937_64 &rng) {
  DType dtype = dtypeOf(type.getElementType());
  std::vector<int64_t> shape(type.getShape());
  std::vector<double> values(type.getNumElements());
  std::uniform_real_distribution<double> real(0.5, 1.5);
  for (double &v : values)
    v = isFloat(dtype) ? real(rng) : double(rng() % 2);
  return oracle::Tensor::fromValues(dtype, shape, values);
}

TEST_F(OpFactsTest, OracleAndCpuAgreeOnEverySample) {
  // 1. One function that computes every sample, each on its own inputs.
  OpBuilder b(&context);
  SmallVector<Type> argTypes, resultTypes;
  SmallVector<func::FuncOp> samples;
  for (auto func : module->getOps<func::FuncOp>()) {
    Operation *op = sampleOp(func);
    ASSERT_TRUE(op) << "@" << func.getSymName().str() << " has no op of its name";
    if (kOracleOnly.count(op->getName().getStringRef().str()))
      continue;
    samples.push_back(func);
    llvm::append_range(argTypes, func.getArgumentTypes());
    llvm::append_range(resultTypes, func.getResultTypes());
  }
  OwningOpRef<ModuleOp> combined = ModuleOp::create(UnknownLoc::get(&context));
  b.setInsertionPointToEnd(combined->getBody());
  auto all = b.create<func::FuncOp>(UnknownLoc::get(&context), "every_op",
                                    b.getFunctionType(argTypes, resultTypes));
  Block *body = all.addEntryBlock();
  b.setInsertionPointToEnd(body);
  SmallVector<Value> results;
  unsigned nextArg = 0;
  for (func::FuncOp func : samples) {
    IRMapping map;
    for (BlockArgument arg : func.getArguments())
      map.map(arg, body->getArgument(nextArg++));
    for (Operation &op : func.getBody().front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (Value v : ret.getOperands())
          results.push_back(map.lookup(v));
        continue;
      }
      b.clone(op, map);
    }
  }
  b.create<func::ReturnOp>(UnknownLoc::get(&context), results);
  for (unsigned i = 0; i < all.getNumArguments(); ++i)
    all.setArgAttr(i, "dlc.name", b.getStringAttr("in" + std::to_string(i)));
  for (unsigned i = 0; i < all.getNumResults(); ++i)
    all.setResultAttr(i, "dlc.name", b.getStringAttr("out" + std::to_string(i)));

  // 2. The oracle on the IR as written.
  std::mt19937_64 rng(1234);
  std::vector<oracle::Tensor> inputs;
  for (Type type : argTypes)
    inputs.push_back(inputFor(cast<RankedTensorType>(type), rng));
  ParamStore params;
  auto expected = oracle::evaluate(all, inputs, params);
  ASSERT_TRUE(succeeded(expected)) << "the oracle refused a sample";

  // 3. The CPU backend: compile, build the module, run it through the
  // runtime.
  PassManager pm(&context);
  buildCompilePipeline(pm);
  ASSERT_TRUE(succeeded(pm.run(*combined))) << "dlc-compile failed";
  codegen::CpuFailure failure;
  std::string message;
  auto built = codegen::buildCpuModule(all, failure, message);
  ASSERT_TRUE(succeeded(built)) << message;
  LoadedModule loaded;
  std::string error;
  ASSERT_EQ(LoadedModule::fromMemory(built->bytes, loaded, error), kExitSuccess)
      << error;
  std::vector<oracle::Tensor> actual;
  ASSERT_EQ(loaded.run("cpu", inputs, actual, error), kExitSuccess) << error;

  // 4. Output by output, named by its sample.
  ASSERT_EQ(actual.size(), expected->size());
  unsigned r = 0;
  for (func::FuncOp func : samples) {
    for (unsigned k = 0; k < func.getNumResults(); ++k, ++r) {
      const oracle::Tensor &want = (*expected)[r], &got = actual[r];
      std::string what = "@" + func.getSymName().str();
      ASSERT_EQ(got.shape, want.shape) << what;
      double rtol = want.dtype == DType::F16 ? 1e-3 : 1e-5;
      for (size_t i = 0; i < want.data.size(); ++i) {
        double w = want.data[i], g = got.data[i];
        if (std::isnan(w)) {
          EXPECT_TRUE(std::isnan(g)) << what << "[" << i << "]";
          continue;
        }
        EXPECT_LE(std::fabs(g - w), 1e-6 + rtol * std::fabs(w))
            << what << "[" << i << "]: cpu " << g << ", oracle " << w;
      }
    }
  }
}

} // namespace
