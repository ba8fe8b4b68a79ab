//===- SpmdTest.cpp - the oracle's simulation of collectives on a mesh ----===//
//
// Meshes and groups; every collective's values against hand-computed ones
// on a 2x2 mesh, over each axis and both; then hand-partitioned MLPs (data
// parallel, Megatron tensor parallel, and both on data=2 x model=2) against
// the unpartitioned graph on the oracle.
//
//===----------------------------------------------------------------------===//

#include "ir/DlcDialect.h"
#include "oracle/Interpreter.h"
#include "oracle/Spmd.h"
#include "oracle/kernels/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir;
using dlc::DType;
using dlc::Mesh;
using dlc::oracle::Tensor;

namespace {

Mesh mesh(const std::string &spec) {
  Mesh m;
  std::string error;
  EXPECT_TRUE(Mesh::parse(spec, m, error)) << error;
  return m;
}

TEST(MeshTest, RanksAndGroups) {
  Mesh m = mesh("data=2,model=3");
  EXPECT_EQ(m.size(), 6);
  EXPECT_EQ(m.coordinates(4), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(m.rankOf({1, 2}), 5);
  // Over model: the ranks of one data index; over data: of one model index.
  EXPECT_EQ(m.group(4, {"model"}), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(m.group(4, {"data"}), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(m.group(4, {"data", "model"}), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(m.group(4, {"model", "data"}), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(m.positionInGroup(4, {"model"}), 1);
  EXPECT_EQ(m.positionInGroup(4, {"model", "data"}), 3);
  EXPECT_EQ(m.str(), "data=2,model=3");
  Mesh bad;
  std::string error;
  EXPECT_FALSE(Mesh::parse("data=0", bad, error));
  EXPECT_NE(error.find("sizes of at least 1"), std::string::npos) << error;
  EXPECT_FALSE(Mesh::parse("data=2,data=2", bad, error));
  EXPECT_NE(error.find("names axis 'data' twice"), std::string::npos) << error;
}

class SpmdTest : public ::testing::Test {
protected:
  SpmdTest() { context.loadDialect<dlc::DlcDialect, func::FuncDialect>(); }

  /// Runs the function of `ir` on every rank of `spec`.
  std::optional<std::vector<std::vector<Tensor>>>
  run(const std::string &ir, const std::string &spec,
      const std::vector<std::vector<Tensor>> &inputs) {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      lastError = d.str();
      return success();
    });
    module = parseSourceString<ModuleOp>(ir, &context);
    if (!module)
      return std::nullopt;
    auto func = *module->getOps<func::FuncOp>().begin();
    auto results = dlc::oracle::evaluateSpmd(func, mesh(spec), inputs, params);
    if (failed(results))
      return std::nullopt;
    return *results;
  }

  /// Rank r holds [r*10 + 0, r*10 + 1, ...] of `shape`.
  static std::vector<std::vector<Tensor>> perRank(int64_t ranks, std::vector<int64_t> shape) {
    std::vector<std::vector<Tensor>> inputs;
    for (int64_t r = 0; r < ranks; ++r) {
      std::vector<double> v(dlc::oracle::shapeNumel(shape));
      for (size_t i = 0; i < v.size(); ++i)
        v[i] = r * 10.0 + double(i);
      inputs.push_back({Tensor::fromValues(DType::F32, shape, v)});
    }
    return inputs;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  dlc::ParamStore params;
  std::string lastError;
};

TEST_F(SpmdTest, AllReduceOverEachAxisAndBoth) {
  // data=2, model=2: ranks 0,1 (data 0) and 2,3 (data 1).
  auto out = run(R"(
    func.func @f(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
      %0 = dlc.all_reduce %x {kind = #dlc<collective_reduction sum>, mesh_axes = ["model"], group_size = 2 : i64} : tensor<2xf32>
      %1 = dlc.all_reduce %x {kind = #dlc<collective_reduction max>, mesh_axes = ["data"], group_size = 2 : i64} : tensor<2xf32>
      %2 = dlc.all_reduce %x {kind = #dlc<collective_reduction avg>, mesh_axes = ["data", "model"], group_size = 4 : i64} : tensor<2xf32>
      %3 = dlc.all_reduce %x {kind = #dlc<collective_reduction min>, mesh_axes = ["model"], group_size = 2 : i64} : tensor<2xf32>
      return %0, %1, %2, %3 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
    })",
                 "data=2,model=2", perRank(4, {2}));
  ASSERT_TRUE(out) << lastError;
  // Rank r holds [10r, 10r + 1].
  EXPECT_EQ((*out)[0][0].data, (std::vector<double>{10, 12}));  // ranks 0+1
  EXPECT_EQ((*out)[3][0].data, (std::vector<double>{50, 52}));  // ranks 2+3
  EXPECT_EQ((*out)[1][1].data, (std::vector<double>{30, 31}));  // max(rank 1, rank 3)
  EXPECT_EQ((*out)[2][2].data, (std::vector<double>{15, 16}));  // mean of all four
  EXPECT_EQ((*out)[3][3].data, (std::vector<double>{20, 21}));  // min(rank 2, rank 3)
}

TEST_F(SpmdTest, GatherScatterAllToAllBroadcastShard) {
  auto out = run(R"(
    func.func @f(%x: tensor<2x2xf32>) -> (tensor<2x4xf32>, tensor<1x2xf32>, tensor<4x1xf32>, tensor<2x2xf32>, tensor<1x2xf32>) {
      %0 = dlc.all_gather %x {axis = 1 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<2x2xf32> -> tensor<2x4xf32>
      %1 = dlc.reduce_scatter %x {kind = #dlc<collective_reduction sum>, axis = 0 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<2x2xf32> -> tensor<1x2xf32>
      %2 = dlc.all_to_all %x {split_axis = 1 : i64, concat_axis = 0 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<2x2xf32> -> tensor<4x1xf32>
      %3 = dlc.broadcast %x {root = 1 : i64, mesh_axes = ["data"], group_size = 2 : i64} : tensor<2x2xf32>
      %4 = dlc.shard %x {axis = 0 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<2x2xf32> -> tensor<1x2xf32>
      return %0, %1, %2, %3, %4 : tensor<2x4xf32>, tensor<1x2xf32>, tensor<4x1xf32>, tensor<2x2xf32>, tensor<1x2xf32>
    })",
                 "data=2,model=2", perRank(4, {2, 2}));
  ASSERT_TRUE(out) << lastError;
  // Rank 0: [[0,1],[2,3]]; rank 1: [[10,11],[12,13]].
  EXPECT_EQ((*out)[0][0].data, (std::vector<double>{0, 1, 10, 11, 2, 3, 12, 13}));
  EXPECT_EQ((*out)[0][1].data, (std::vector<double>{10, 12}));  // row 0 of the sum
  EXPECT_EQ((*out)[1][1].data, (std::vector<double>{14, 16}));  // row 1 of the sum
  EXPECT_EQ((*out)[0][2].data, (std::vector<double>{0, 2, 10, 12}));  // column 0 of each
  EXPECT_EQ((*out)[1][2].data, (std::vector<double>{1, 3, 11, 13}));  // column 1 of each
  EXPECT_EQ((*out)[0][3].data, (std::vector<double>{20, 21, 22, 23}));  // rank 2's (data 1)
  EXPECT_EQ((*out)[1][3].data, (std::vector<double>{30, 31, 32, 33}));  // rank 3's
  EXPECT_EQ((*out)[1][4].data, (std::vector<double>{12, 13}));  // its own row 1
}

TEST_F(SpmdTest, SendRecvShiftAlongAnAxis) {
  // pipe=4: rank i sends to i + 1 and receives from i - 1 (rank 0: zeros);
  // then what it received goes 2 back.
  auto out = run(R"(
    func.func @f(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
      dlc.send %x {shift = 1 : i64, mesh_axes = ["pipe"], group_size = 4 : i64} : tensor<2xf32>
      %0 = dlc.recv {shift = 1 : i64, mesh_axes = ["pipe"], group_size = 4 : i64} : tensor<2xf32>
      dlc.send %0 {shift = -2 : i64, mesh_axes = ["pipe"], group_size = 4 : i64} : tensor<2xf32>
      %1 = dlc.recv {shift = -2 : i64, mesh_axes = ["pipe"], group_size = 4 : i64} : tensor<2xf32>
      return %0, %1 : tensor<2xf32>, tensor<2xf32>
    })",
                 "pipe=4", perRank(4, {2}));
  ASSERT_TRUE(out) << lastError;
  EXPECT_EQ((*out)[0][0].data, (std::vector<double>{0, 0}));    // no rank before 0
  EXPECT_EQ((*out)[1][0].data, (std::vector<double>{0, 1}));    // rank 0's
  EXPECT_EQ((*out)[3][0].data, (std::vector<double>{20, 21}));  // rank 2's
  EXPECT_EQ((*out)[0][1].data, (std::vector<double>{10, 11}));  // rank 2's first receive
  EXPECT_EQ((*out)[1][1].data, (std::vector<double>{20, 21}));  // rank 3's
  EXPECT_EQ((*out)[2][1].data, (std::vector<double>{0, 0}));    // no rank 4
}

TEST_F(SpmdTest, SendRecvStayInTheirGroup) {
  // data=2, pipe=2: pipe groups {0, 1} and {2, 3}.
  auto out = run(R"(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      dlc.send %x {shift = 1 : i64, mesh_axes = ["pipe"], group_size = 2 : i64} : tensor<2xf32>
      %0 = dlc.recv {shift = 1 : i64, mesh_axes = ["pipe"], group_size = 2 : i64} : tensor<2xf32>
      return %0 : tensor<2xf32>
    })",
                 "data=2,pipe=2", perRank(4, {2}));
  ASSERT_TRUE(out) << lastError;
  EXPECT_EQ((*out)[1][0].data, (std::vector<double>{0, 1}));
  EXPECT_EQ((*out)[2][0].data, (std::vector<double>{0, 0}));
  EXPECT_EQ((*out)[3][0].data, (std::vector<double>{20, 21}));
}

TEST_F(SpmdTest, ReceivingWhatWasNotSentIsAnError) {
  auto out = run(R"(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = dlc.recv {shift = 1 : i64, mesh_axes = ["pipe"], group_size = 2 : i64} : tensor<2xf32>
      dlc.send %x {shift = 1 : i64, mesh_axes = ["pipe"], group_size = 2 : i64} : tensor<2xf32>
      return %0 : tensor<2xf32>
    })",
                 "pipe=2", perRank(2, {2}));
  EXPECT_FALSE(out);
  EXPECT_NE(lastError.find("rank 1 receives from rank 0, which has sent nothing"),
            std::string::npos)
      << lastError;
}

TEST_F(SpmdTest, GroupSizeMustMatchTheMesh) {
  auto out = run(R"(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = dlc.all_reduce %x {kind = #dlc<collective_reduction sum>, mesh_axes = ["data"], group_size = 4 : i64} : tensor<2xf32>
      return %0 : tensor<2xf32>
    })",
                 "data=2", perRank(2, {2}));
  EXPECT_FALSE(out);
  EXPECT_NE(lastError.find("has group_size 4, but its axes span 2 ranks of the mesh data=2"),
            std::string::npos)
      << lastError;
}

TEST_F(SpmdTest, SingleProcessEvaluationNamesTheSimulation) {
  module = parseSourceString<ModuleOp>(R"(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = dlc.all_reduce %x {kind = #dlc<collective_reduction sum>, mesh_axes = ["data"], group_size = 2 : i64} : tensor<2xf32>
      return %0 : tensor<2xf32>
    })",
                                       &context);
  ASSERT_TRUE(module);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    lastError = d.str();
    return success();
  });
  auto func = *module->getOps<func::FuncOp>().begin();
  EXPECT_TRUE(failed(dlc::oracle::evaluate(func, perRank(1, {2})[0], params)));
  EXPECT_NE(lastError.find("runs on a group of 2 ranks"), std::string::npos) << lastError;
}

// ----- Partitioned MLPs against the unpartitioned one

/// y = relu(x @ w1 + b1) @ w2 + b2 with x [8, 16], w1 [16, 12], w2 [12, 4].
const char *kMlp = R"(
  func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x12xf32>, %b1: tensor<12xf32>,
                 %w2: tensor<12x4xf32>, %b2: tensor<4xf32>) -> tensor<8x4xf32> {
    %h = dlc.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x12xf32>) -> tensor<8x12xf32>
    %hb = dlc.add %h, %b1 : (tensor<8x12xf32>, tensor<12xf32>) -> tensor<8x12xf32>
    %a = dlc.relu %hb : tensor<8x12xf32>
    %y = dlc.matmul %a, %w2 : (tensor<8x12xf32>, tensor<12x4xf32>) -> tensor<8x4xf32>
    %yb = dlc.add %y, %b2 : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
    return %yb : tensor<8x4xf32>
  })";

/// Data parallel over `data` (D ranks): each rank takes its rows of x,
/// computes its rows of y, and all-gathers them.
std::string dataParallelMlp(int64_t d) {
  std::string rows = std::to_string(8 / d), g = std::to_string(d);
  return R"(
  func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x12xf32>, %b1: tensor<12xf32>,
                 %w2: tensor<12x4xf32>, %b2: tensor<4xf32>) -> tensor<8x4xf32> {
    %xs = dlc.shard %x {axis = 0 : i64, mesh_axes = ["data"], group_size = )" + g +
         R"( : i64} : tensor<8x16xf32> -> tensor<)" + rows + R"(x16xf32>
    %h = dlc.matmul %xs, %w1 : (tensor<)" + rows + R"(x16xf32>, tensor<16x12xf32>) -> tensor<)" + rows + R"(x12xf32>
    %hb = dlc.add %h, %b1 : (tensor<)" + rows + R"(x12xf32>, tensor<12xf32>) -> tensor<)" + rows + R"(x12xf32>
    %a = dlc.relu %hb : tensor<)" + rows + R"(x12xf32>
    %y = dlc.matmul %a, %w2 : (tensor<)" + rows + R"(x12xf32>, tensor<12x4xf32>) -> tensor<)" + rows + R"(x4xf32>
    %yb = dlc.add %y, %b2 : (tensor<)" + rows + R"(x4xf32>, tensor<4xf32>) -> tensor<)" + rows + R"(x4xf32>
    %all = dlc.all_gather %yb {axis = 0 : i64, mesh_axes = ["data"], group_size = )" + g +
         R"( : i64} : tensor<)" + rows + R"(x4xf32> -> tensor<8x4xf32>
    return %all : tensor<8x4xf32>
  })";
}

/// Megatron over `model` (2 ranks): w1 column-parallel (each rank 6 of the
/// 12 hidden units, with their bias), w2 row-parallel (the matching 6
/// rows); the partial sums of y meet in one all_reduce, then b2.
const char *kTensorParallelMlp = R"(
  func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x12xf32>, %b1: tensor<12xf32>,
                 %w2: tensor<12x4xf32>, %b2: tensor<4xf32>) -> tensor<8x4xf32> {
    %w1s = dlc.shard %w1 {axis = 1 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<16x12xf32> -> tensor<16x6xf32>
    %b1s = dlc.shard %b1 {axis = 0 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<12xf32> -> tensor<6xf32>
    %w2s = dlc.shard %w2 {axis = 0 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<12x4xf32> -> tensor<6x4xf32>
    %h = dlc.matmul %x, %w1s : (tensor<8x16xf32>, tensor<16x6xf32>) -> tensor<8x6xf32>
    %hb = dlc.add %h, %b1s : (tensor<8x6xf32>, tensor<6xf32>) -> tensor<8x6xf32>
    %a = dlc.relu %hb : tensor<8x6xf32>
    %partial = dlc.matmul %a, %w2s : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
    %y = dlc.all_reduce %partial {kind = #dlc<collective_reduction sum>, mesh_axes = ["model"], group_size = 2 : i64} : tensor<8x4xf32>
    %yb = dlc.add %y, %b2 : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
    return %yb : tensor<8x4xf32>
  })";

/// data=2 x model=2: rows over data, Megatron over model, rows gathered.
const char *kHybridMlp = R"(
  func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x12xf32>, %b1: tensor<12xf32>,
                 %w2: tensor<12x4xf32>, %b2: tensor<4xf32>) -> tensor<8x4xf32> {
    %xs = dlc.shard %x {axis = 0 : i64, mesh_axes = ["data"], group_size = 2 : i64} : tensor<8x16xf32> -> tensor<4x16xf32>
    %w1s = dlc.shard %w1 {axis = 1 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<16x12xf32> -> tensor<16x6xf32>
    %b1s = dlc.shard %b1 {axis = 0 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<12xf32> -> tensor<6xf32>
    %w2s = dlc.shard %w2 {axis = 0 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<12x4xf32> -> tensor<6x4xf32>
    %h = dlc.matmul %xs, %w1s : (tensor<4x16xf32>, tensor<16x6xf32>) -> tensor<4x6xf32>
    %hb = dlc.add %h, %b1s : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
    %a = dlc.relu %hb : tensor<4x6xf32>
    %partial = dlc.matmul %a, %w2s : (tensor<4x6xf32>, tensor<6x4xf32>) -> tensor<4x4xf32>
    %y = dlc.all_reduce %partial {kind = #dlc<collective_reduction sum>, mesh_axes = ["model"], group_size = 2 : i64} : tensor<4x4xf32>
    %yb = dlc.add %y, %b2 : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
    %all = dlc.all_gather %yb {axis = 0 : i64, mesh_axes = ["data"], group_size = 2 : i64} : tensor<4x4xf32> -> tensor<8x4xf32>
    return %all : tensor<8x4xf32>
  })";

class PartitionedMlpTest : public SpmdTest {
protected:
  void SetUp() override {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> normal;
    auto draw = [&](std::vector<int64_t> shape) {
      std::vector<double> v(dlc::oracle::shapeNumel(shape));
      for (double &e : v)
        e = normal(rng);
      return Tensor::fromValues(DType::F32, shape, v);
    };
    inputs = {draw({8, 16}), draw({16, 12}), draw({12}), draw({12, 4}), draw({4})};
    OwningOpRef<ModuleOp> single = parseSourceString<ModuleOp>(kMlp, &context);
    ASSERT_TRUE(single);
    auto func = *single->getOps<func::FuncOp>().begin();
    auto y = dlc::oracle::evaluate(func, inputs, params);
    ASSERT_TRUE(succeeded(y));
    expected = (*y)[0];
  }

  /// Every rank's output equals the unpartitioned one (relative 1e-6: the
  /// all_reduce adds the partial sums in another order).
  void expectEqual(const std::string &ir, const std::string &spec) {
    int64_t ranks = mesh(spec).size();
    auto out = run(ir, spec, std::vector<std::vector<Tensor>>(ranks, inputs));
    ASSERT_TRUE(out) << lastError;
    for (int64_t r = 0; r < ranks; ++r) {
      const Tensor &y = (*out)[r][0];
      ASSERT_EQ(y.shape, expected.shape);
      double worst = 0, scale = 0;
      for (size_t i = 0; i < y.data.size(); ++i) {
        worst = std::max(worst, std::abs(y.data[i] - expected.data[i]));
        scale = std::max(scale, std::abs(expected.data[i]));
      }
      EXPECT_LE(worst, 1e-6 * scale) << spec << ", rank " << r;
    }
  }

  std::vector<Tensor> inputs;
  Tensor expected;
};

TEST_F(PartitionedMlpTest, DataParallelOnTwoAndFourRanks) {
  expectEqual(dataParallelMlp(2), "data=2");
  expectEqual(dataParallelMlp(4), "data=4");
}

TEST_F(PartitionedMlpTest, MegatronTensorParallel) {
  expectEqual(kTensorParallelMlp, "model=2");
}

TEST_F(PartitionedMlpTest, DataTimesModel) {
  expectEqual(kHybridMlp, "data=2,model=2");
}

} // namespace
