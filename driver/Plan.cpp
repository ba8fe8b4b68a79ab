//===- Plan.cpp - dlc plan: kernels, arena and weights of the plan --------===//
//
// Runs the dlc-compile pipeline (the plan verifier included) and prints the
// plan report of driver/PlanReport.h; `dlc compile --stats` prints the same.
// `dlc plan --train` plans the train step instead: the train block's loss
// graph through dlc-differentiate, then dlc-compile (with
// dlc-rematerialize under `--memory-budget`).
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"

#include "driver/DriverSupport.h"
#include "driver/ModelLoader.h"
#include "driver/PlanReport.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dlc {

/// `plan for <what> (<path>), one device, at N=64 (...)`.
static void printHeading(llvm::raw_ostream &os, const Twine &what,
                         const std::string &path, const LoadedModel &model) {
  os << "plan for " << what << " (" << path << "), one device";
  for (auto [i, dim] : llvm::enumerate(model.built.dims)) {
    os << (i ? ", " : ", at ") << dim.first << "=" << dim.second;
    if (llvm::is_contained(model.built.defaultedDims, dim.first))
      os << " (unbound, taken as 1)";
  }
  os << "\n";
}

/// The model, with its train blocks' loss graphs when `train`.
static std::optional<LoadedModel>
loadForPlan(const CommonOptions &options, bool defaultDims, bool train,
            MLIRContext &context, llvm::SourceMgr &sourceMgr, ExitCode &code) {
  dlg::BuildOptions build;
  build.dims = options.dims;
  build.defaultUnboundDimsToOne = defaultDims;
  build.buildTraining = train;
  return loadModel(options.modelPath, context, sourceMgr, build, code);
}

ExitCode planAndReport(const CommonOptions &options, bool defaultDims,
                       MLIRContext &context, llvm::SourceMgr &sourceMgr,
                       llvm::raw_ostream &os) {
  ExitCode code;
  auto model = loadForPlan(options, defaultDims, /*train=*/false, context,
                           sourceMgr, code);
  if (!model)
    return code;
  ModuleOp module = *model->built.module;
  func::FuncOp func = entryGraph(module);
  int64_t kernelsBefore = countKernels(func);
  if (failed(runCompilePipeline(module)))
    return kExitInternalError;
  printHeading(os, "graph " + func.getSymName(), options.modelPath, *model);
  printPlanReport(summarizePlan(func, kernelsBefore), os);
  return kExitSuccess;
}

/// `--train`: the entry graph's train step, planned, and its report.
static ExitCode planTrainStep(const CommonOptions &options,
                              const PlanOptions &plan, MLIRContext &context,
                              llvm::SourceMgr &sourceMgr,
                              llvm::raw_ostream &os) {
  ExitCode code;
  auto model = loadForPlan(options, /*defaultDims=*/true, /*train=*/true,
                           context, sourceMgr, code);
  if (!model)
    return code;
  ModuleOp module = *model->built.module;
  std::string graph = entryGraph(module).getSymName().str();
  auto step = trainingFunction(module, entryGraph(module), false);
  if (failed(step))
    return kExitBadInput;
  int64_t kernelsBefore = countKernels(*step);
  if (failed(runCompilePipeline(module, plan.memoryBudget.value_or(0))))
    return kExitInternalError;
  printHeading(os, "the train step of graph " + graph, options.modelPath,
               *model);
  printPlanReport(summarizePlan(*step, kernelsBefore), os);
  printTrainReport(summarizeTrainStep(*step), os);
  return kExitSuccess;
}

ExitCode runPlan(const CommonOptions &options, const PlanOptions &plan,
                 MLIRContext &context, llvm::SourceMgr &sourceMgr,
                 llvm::raw_ostream &os) {
  if (plan.memoryBudget && *plan.memoryBudget <= 0)
    return fail(context, kExitBadInput,
                "--memory-budget expects a number of bytes, at least 1");
  if (plan.memoryBudget && !plan.train)
    return fail(context, kExitBadInput,
                "--memory-budget applies to a train step: add --train");
  if (plan.train)
    return planTrainStep(options, plan, context, sourceMgr, os);
  return planAndReport(options, /*defaultDims=*/true, context, sourceMgr, os);
}

} // namespace dlc
