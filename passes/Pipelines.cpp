//===- Pipelines.cpp - the pass pipelines of dlc --------------------------===//

#include "passes/Passes.h"
#include "passes/TileRules.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace dlc {

/// The precision policy (`--precision`, a no-op for f32), then
/// canonicalise, fold constants, CSE: the graph before fusion.
static void buildSimplifyPipeline(OpPassManager &graph) {
  graph.addPass(createDlcPrecision());
  graph.addPass(createCanonicalizerPass());
  graph.addPass(createDlcFoldConstants());
  graph.addPass(createCSEPass());
}

void buildFusionPipeline(OpPassManager &graph) {
  buildSimplifyPipeline(graph);
  graph.addPass(createDlcFuse());
}

void buildCompilePipeline(OpPassManager &pm, int64_t memoryBudget, bool cpuLayout) {
  OpPassManager *graph = &pm.nest<func::FuncOp>();
  buildSimplifyPipeline(*graph);
  if (cpuLayout) {
    // Its transposes of one value (a block input read by two convolutions)
    // become one.
    graph->addPass(createDlcCpuLayout());
    graph->addPass(createCSEPass());
  }
  if (memoryBudget > 0) {
    // After CSE, which would merge the clones back; it measures fusion and
    // the rest on copies.
    pm.addPass(createDlcRematerialize(DlcRematerializeOptions{memoryBudget}));
    graph = &pm.nest<func::FuncOp>();
  }
  graph->addPass(createDlcFuse());
  graph->addPass(createDlcSchedule());
  graph->addPass(createDlcPlanMemory());
  graph->addPass(createDlcVerifyMemoryPlan());
}

void buildCudaCompilePipeline(OpPassManager &pm, StringRef target) {
  buildCompilePipeline(pm);
  DlcTileOptions options;
  options.target = target.str();
  pm.nest<func::FuncOp>().addPass(createDlcTile(options));
}

namespace {
struct CompilePipelineOptions
    : public PassPipelineOptions<CompilePipelineOptions> {
  Option<int64_t> memoryBudget{
      *this, "memory-budget",
      llvm::cl::desc("Rematerialise train steps to fit an arena of this many "
                     "bytes (dlc-rematerialize; 0: no budget)"),
      llvm::cl::init(0)};
};
} // namespace

void registerDlcPassesAndPipelines() {
  registerDlcPasses();
  PassPipelineRegistration<CompilePipelineOptions>(
      "dlc-compile", "The graph-to-planned-kernels pipeline of `dlc compile`",
      [](OpPassManager &pm, const CompilePipelineOptions &options) {
        buildCompilePipeline(pm, options.memoryBudget);
      });
  PassPipelineRegistration<>(
      "dlc-compile-cuda",
      "dlc-compile, then dlc-tile for cuda:sm_90 (`dlc compile --target cuda`)",
      [](OpPassManager &pm) { buildCudaCompilePipeline(pm, "cuda:sm_90"); });
}

} // namespace dlc
