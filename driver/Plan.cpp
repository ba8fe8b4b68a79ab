//===- Plan.cpp - dlc plan: kernels, arena and weights of the plan --------===//
//
// Runs the dlc-compile pipeline (the plan verifier included) and prints the
// plan report of driver/PlanReport.h; `dlc compile --stats` prints the same.
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"

#include "driver/DriverSupport.h"
#include "driver/ModelLoader.h"
#include "driver/PlanReport.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dlc {

ExitCode planAndReport(const CommonOptions &options, bool defaultDims,
                       MLIRContext &context, llvm::SourceMgr &sourceMgr,
                       llvm::raw_ostream &os) {
  dlg::BuildOptions build;
  build.dims = options.dims;
  build.defaultUnboundDimsToOne = defaultDims;
  ExitCode code;
  auto model = loadModel(options.modelPath, context, sourceMgr, build, code);
  if (!model)
    return code;
  ModuleOp module = *model->built.module;
  func::FuncOp func = entryGraph(module);
  int64_t kernelsBefore = countKernels(func);
  if (failed(runCompilePipeline(module)))
    return kExitInternalError;
  os << "plan for graph " << func.getSymName() << " (" << options.modelPath
     << "), one device";
  for (auto [i, dim] : llvm::enumerate(model->built.dims)) {
    os << (i ? ", " : ", at ") << dim.first << "=" << dim.second;
    if (llvm::is_contained(model->built.defaultedDims, dim.first))
      os << " (unbound, taken as 1)";
  }
  os << "\n";
  printPlanReport(summarizePlan(func, kernelsBefore), os);
  return kExitSuccess;
}

ExitCode runPlan(const CommonOptions &options, MLIRContext &context,
                 llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os) {
  return planAndReport(options, /*defaultDims=*/true, context, sourceMgr, os);
}

} // namespace dlc
