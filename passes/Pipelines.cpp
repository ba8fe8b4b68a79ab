//===- Pipelines.cpp - the pass pipelines of dlc --------------------------===//

#include "passes/Passes.h"
#include "passes/TileRules.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace dlc {

void buildFusionPipeline(OpPassManager &graph) {
  graph.addPass(createCanonicalizerPass());
  graph.addPass(createDlcFoldConstants());
  graph.addPass(createCSEPass());
  graph.addPass(createDlcFuse());
}

void buildCompilePipeline(OpPassManager &pm) {
  OpPassManager &graph = pm.nest<func::FuncOp>();
  buildFusionPipeline(graph);
  graph.addPass(createDlcSchedule());
  graph.addPass(createDlcPlanMemory());
  graph.addPass(createDlcVerifyMemoryPlan());
}

void buildCudaCompilePipeline(OpPassManager &pm, StringRef target) {
  buildCompilePipeline(pm);
  DlcTileOptions options;
  options.target = target.str();
  pm.nest<func::FuncOp>().addPass(createDlcTile(options));
}

void registerDlcPassesAndPipelines() {
  registerDlcPasses();
  PassPipelineRegistration<>(
      "dlc-compile", "The graph-to-planned-kernels pipeline of `dlc compile`",
      buildCompilePipeline);
  PassPipelineRegistration<>(
      "dlc-compile-cuda",
      "dlc-compile, then dlc-tile for cuda:sm_90 (`dlc compile --target cuda`)",
      [](OpPassManager &pm) { buildCudaCompilePipeline(pm, "cuda:sm_90"); });
}

} // namespace dlc
