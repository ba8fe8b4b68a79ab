//===- DriverSupport.cpp - what the dlc verbs share -----------------------===//
//
// Errors without a location, the entry graph's names, and the fusion and
// CUDA pipelines of compile and run; see DriverSupport.h.
//
//===----------------------------------------------------------------------===//

#include "driver/DriverSupport.h"

#include "passes/partition/Partition.h"

#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace dlc {

ExitCode fail(MLIRContext &context, ExitCode code, const Twine &message) {
  mlir::emitError(UnknownLoc::get(&context)) << message;
  return code;
}

func::FuncOp entryGraph(ModuleOp module) {
  return *module.getOps<func::FuncOp>().begin();
}

std::string argName(func::FuncOp func, unsigned i, bool result) {
  auto attr = result ? func.getResultAttrOfType<StringAttr>(i, "dlc.name")
                     : func.getArgAttrOfType<StringAttr>(i, "dlc.name");
  return attr ? attr.str() : (result ? "result" : "arg") + std::to_string(i);
}

LogicalResult runFusionPipeline(ModuleOp module) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  buildFusionPipeline(pm.nest<func::FuncOp>());
  return pm.run(module);
}

LogicalResult runCudaTile(ModuleOp module, const std::string &arch) {
  PassManager pm(module.getContext());
  DlcTileOptions tile;
  tile.target = "cuda:" + arch;
  pm.nest<func::FuncOp>().addPass(createDlcTile(tile));
  return pm.run(module);
}

FailureOr<codegen::CudaModule>
buildCuda(MLIRContext &context, ModuleOp module, func::FuncOp func,
          const std::vector<std::string> &archs, bool emulation, ExitCode &code) {
  code = kExitInternalError;
  if (failed(runCudaTile(module, archs.empty() ? "sm_90" : archs.back())))
    return failure();
  codegen::CudaBuildOptions options;
  options.archs = archs;
  options.emulation = emulation;
  codegen::CudaFailure failure;
  std::string message;
  auto built = codegen::buildCudaModule(func, options, failure, message);
  if (failed(built)) {
    code = failure == codegen::CudaFailure::Internal ? kExitInternalError
                                                     : kExitBadInput;
    if (!message.empty())
      fail(context, code, message);
  }
  return built;
}

FailureOr<func::FuncOp> trainingFunction(ModuleOp module, func::FuncOp graph,
                                         bool gradientsOnly) {
  auto loss = module.lookupSymbol<func::FuncOp>(graph.getSymName().str() +
                                                "_train");
  if (!loss)
    return graph.emitError("graph '")
           << graph.getSymName()
           << "' has no train block (its loss and optimizer)";
  for (auto other : llvm::to_vector(module.getOps<func::FuncOp>()))
    if (other != loss)
      other.erase();
  PassManager pm(module.getContext());
  DlcDifferentiateOptions options;
  options.gradientsOnly = gradientsOnly;
  pm.addNestedPass<func::FuncOp>(createDlcDifferentiate(options));
  if (failed(pm.run(module)))
    return failure();
  return loss;
}

ExitCode parseMeshOptions(MLIRContext &context, const MeshOptions &options,
                          PartitionOptions &out) {
  std::string error;
  if (!Mesh::parse(options.mesh, out.mesh, error))
    return fail(context, kExitBadInput, error);
  std::optional<ParallelPreset> preset = parseParallelPreset(options.parallel);
  if (!preset)
    return fail(context, kExitBadInput,
                "--parallel must be data, tensor or pipeline (or several, comma-separated), "
                "none or auto, not '" +
                    options.parallel + "'");
  out.preset = *preset;
  if (options.zero != 0 && options.zero != 1)
    return fail(context, kExitBadInput,
                "--zero " + std::to_string(options.zero) +
                    ": dlc splits the optimizer state (1) or not (0); stages 2 and 3 "
                    "(gradients, parameters) are not implemented");
  if (options.zero && (!out.preset.data || out.mesh.axisIndex("data") < 0))
    return fail(context, kExitBadInput, "--zero 1 splits the optimizer state over the "
                                        "'data' axis: use --parallel data");
  out.shardOptimizerState = options.zero == 1;
  return kExitSuccess;
}

ExitCode partitionForMesh(MLIRContext &context, func::FuncOp func,
                          const MeshOptions &options, Mesh *mesh, bool localArguments,
                          bool splitParameterState) {
  PartitionOptions partition;
  if (ExitCode c = parseMeshOptions(context, options, partition))
    return c;
  if (partition.preset.pipeline)
    return fail(context, kExitBadInput,
                "--parallel pipeline cuts the graph into stages as the ranks run it "
                "(mpirun -np P dlc run|train ... --mesh pipe=P); it is not one SPMD program "
                "to print or compile");
  partition.localArguments = localArguments;
  partition.splitParameterState = splitParameterState;
  if (failed(partitionFunction(func, partition)))
    return kExitBadInput;
  if (mesh)
    *mesh = partition.mesh;
  return kExitSuccess;
}

} // namespace dlc
