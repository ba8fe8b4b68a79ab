//===- Compile.cpp - dlc compile: a stage of the pipeline, or a module ----===//
//
// `--emit=ast|mlir|fused|cpp|cuda` prints a stage; without it, the model is
// planned and compiled for `--target` (cpu, or CUDA with the cuda-emu
// object) and the module is written to `-o`.
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"

#include "codegen/cpu/CpuBackend.h"
#include "codegen/common/HostCompiler.h"
#include "codegen/common/ModuleLowering.h"
#include "codegen/cuda/CudaBackend.h"
#include "driver/CompiledModel.h"
#include "driver/DriverSupport.h"
#include "driver/ModelLoader.h"
#include "driver/ModuleCache.h"
#include "driver/PlanReport.h"
#include "driver/Progress.h"
#include "passes/TileRules.h"
#include "passes/analysis/DynamicRows.h"
#include "passes/analysis/Liveness.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dlc {

/// `--dim N=MIN..MAX`: marks `atMax` (the model built at N = MAX) as
/// serving every N of the range (passes/analysis/DynamicRows.h), after
/// building the model a second time at another N to compare.
static LogicalResult markDynamicDim(const CommonOptions &options, const CompileOptions &compile,
                                    MLIRContext &context, llvm::SourceMgr &sourceMgr,
                                    func::FuncOp atMax, ExitCode &code) {
  code = kExitBadInput;
  if (options.dimRanges.size() != 1)
    return fail(context, kExitBadInput,
                "--dim: a module has one dimension chosen at run time; give a size to the "
                "others"), failure();
  const auto &[name, bounds] = *options.dimRanges.begin();
  DynamicDimRange range{name, bounds.first, bounds.second};
  std::string option = "--dim " + name + "=" + std::to_string(range.min) + ".." +
                       std::to_string(range.max);
  if (compile.train || !compile.mesh.mesh.empty())
    return fail(context, kExitBadInput,
                option + ": a range is for inference modules on one device (not with --train "
                         "or --mesh)"), failure();
  if (range.min == range.max)
    return success(); // one size: an ordinary module
  // The second size: below MAX, and 2 or more where the range allows, so
  // that no dimension becomes 1 (broadcasting may build other ops there).
  int64_t probe = range.max - 1 >= 2 ? range.max - 1 : range.min;
  dlg::BuildOptions build = buildOptionsFor(options);
  build.dims[name] = probe;
  auto other = loadModel(options.modelPath, context, sourceMgr, build, code);
  if (!other)
    return failure();
  if (failed(markDynamicRows(atMax, entryGraph(*other->built.module), range, probe)))
    return failure();
  code = kExitSuccess;
  return success();
}

/// The model as `compile` asks for it: built at --dim, its parameters
/// from --params, and with --train the train step as the entry graph.
static std::optional<LoadedModel> loadForCompile(const CommonOptions &options,
                                                 const CompileOptions &compile,
                                                 MLIRContext &context,
                                                 llvm::SourceMgr &sourceMgr,
                                                 ExitCode &code) {
  dlg::BuildOptions build = buildOptionsFor(options);
  build.buildTraining = compile.train;
  auto model = loadModel(options.modelPath, context, sourceMgr, build, code);
  if (!model)
    return std::nullopt;
  ModuleOp module = *model->built.module;
  if (compile.drawParams) // read by the module's lowering (codegen/common/ModuleLowering.h)
    module->setAttr(codegen::kDrawParamsAttr, UnitAttr::get(&context));
  std::string error;
  if (!compile.params.empty() && !bindParameterFile(module, compile.params, error)) {
    code = fail(context, kExitBadInput, "--params " + compile.params + ": " + error);
    return std::nullopt;
  }
  if (compile.train && failed(trainingFunction(module, entryGraph(module), false))) {
    code = kExitBadInput;
    return std::nullopt;
  }
  if (!options.dimRanges.empty() && failed(markDynamicDim(options, compile, context, sourceMgr,
                                                          entryGraph(module), code)))
    return std::nullopt;
  return model;
}

static ExitCode writeOutput(const CommonOptions &options, const CompileOptions &compile,
                           MLIRContext &context, llvm::SourceMgr &sourceMgr,
                           llvm::raw_fd_ostream &out);

ExitCode runCompile(const CommonOptions &options,
                    const CompileOptions &compile, MLIRContext &context,
                    llvm::SourceMgr &sourceMgr) {
  if (compile.memoryBudget && (*compile.memoryBudget <= 0 || !compile.train))
    return fail(context, kExitBadInput,
                "--memory-budget expects a number of bytes, at least 1, "
                "and applies to a train step (--train)");
  if (!compile.params.empty() &&
      llvm::sys::path::extension(options.modelPath) == ".dlcm")
    return fail(context, kExitBadInput,
                "--params replaces a model's parameter values before it is "
                "compiled: give the model's source (.dlg or .onnx), not a "
                ".dlcm");
  // --stats alone prints the plan; with -o it also writes the module and
  // says whether its kernels came from the kernel cache.
  if (compile.stats && compile.emit.empty()) {
    ExitCode code = planAndReport(options, false, context, sourceMgr, llvm::outs());
    if (code != kExitSuccess || compile.output == "-")
      return code;
  }
  std::error_code ec;
  llvm::raw_fd_ostream out(compile.output, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail(context, kExitBadInput,
                "cannot write '" + compile.output + "': " + ec.message());
  ExitCode code = writeOutput(options, compile, context, sourceMgr, out);
  // A failed write (a full disk) is reported, never LLVM's fatal error on
  // the stream's destruction, and leaves no partial module behind.
  if (compile.output == "-")
    out.flush(); // standard output stays open: --stats prints after
  else
    out.close();
  if (out.has_error()) {
    std::string reason = out.error().message();
    out.clear_error();
    if (compile.output != "-" && llvm::sys::fs::is_regular_file(compile.output))
      llvm::sys::fs::remove(compile.output);
    return fail(context, kExitRuntimeFault,
                "cannot write '" + compile.output + "': " + reason);
  }
  // Nor does a compile that failed after opening it.
  if (code != kExitSuccess && compile.output != "-" &&
      llvm::sys::fs::is_regular_file(compile.output))
    llvm::sys::fs::remove(compile.output);
  return code;
}

/// The rest of runCompile: the stage or the module, written to `out`.
static ExitCode writeOutput(const CommonOptions &options, const CompileOptions &compile,
                           MLIRContext &context, llvm::SourceMgr &sourceMgr,
                           llvm::raw_fd_ostream &out) {
  if (compile.emit == "ast") {
    ExitCode code;
    auto ast = parseModelFile(options.modelPath, context, sourceMgr, code);
    if (!ast)
      return code;
    out << dlg::dumpModule(*ast);
    out.flush();
    return compile.stats
               ? planAndReport(options, false, context, sourceMgr, llvm::outs())
               : kExitSuccess;
  }
  std::vector<std::string> cudaArchs;
  bool cuda = codegen::parseCudaTarget(compile.target, cudaArchs);
  for (const std::string &arch : cudaArchs)
    if (!cudaArch(arch)) // a usage error, before any work
      return fail(context, kExitBadInput,
                  "--target " + compile.target + ": unknown CUDA architecture '" + arch +
                      "' (dlc schedules sm_80 and sm_90)");
  if (compile.emit == "mlir-partitioned") {
    if (compile.mesh.mesh.empty())
      return fail(context, kExitBadInput,
                  "--emit=mlir-partitioned needs --mesh (and --parallel data|tensor)");
    ExitCode code;
    auto model = loadForCompile(options, compile, context, sourceMgr, code);
    if (!model)
      return code;
    if (ExitCode c = partitionForMesh(context, entryGraph(*model->built.module),
                                      compile.mesh))
      return c;
    model->built.module->print(out);
    out.flush();
    return kExitSuccess;
  }
  if (compile.emit == "mlir" || compile.emit == "fused") {
    ExitCode code;
    auto model = loadForCompile(options, compile, context, sourceMgr, code);
    if (!model)
      return code;
    if (!compile.mesh.mesh.empty())
      if (ExitCode c = partitionForMesh(context, entryGraph(*model->built.module), compile.mesh,
                                        nullptr, /*localArguments=*/true))
        return c;
    if (compile.emit == "fused" &&
        failed(runFusionPipeline(*model->built.module)))
      return kExitInternalError;
    // For a CUDA target, the planned IR with each kernel's dlc.schedule.
    if (compile.emit == "mlir" && cuda &&
        (failed(runCompilePipeline(*model->built.module)) ||
         failed(runCudaTile(*model->built.module, cudaArchs.back()))))
      return kExitInternalError;
    model->built.module->print(out);
    out.flush();
    return compile.stats
               ? planAndReport(options, false, context, sourceMgr, llvm::outs())
               : kExitSuccess;
  }
  if (compile.emit != "cpp" && compile.emit != "cuda" && !compile.emit.empty())
    return fail(context, kExitBadInput,
                "unknown --emit stage '" + compile.emit +
                    "' (expected ast, mlir, mlir-partitioned, fused, cpp or cuda)");
  if (compile.target != "cpu" && !cuda)
    return fail(context, kExitBadInput,
                "unknown --target '" + compile.target +
                    "' (expected cpu, cuda or cuda:sm_80,sm_90)");
  if ((compile.emit == "cuda") != cuda && !compile.emit.empty())
    return fail(context, kExitBadInput,
                "--emit=" + compile.emit + " needs --target " +
                    (cuda ? "cpu" : "cuda:sm_XY"));
  if (compile.emit.empty() && compile.output == "-")
    return fail(context, kExitBadInput,
                "compile needs -o FILE.dlcm to write a module, or --emit=STAGE "
                "to print one (ast, mlir, fused, cpp)");
  CompileProgress progress(options.modelPath);
  progress.stage("building the graph");
  ExitCode code;
  auto model = loadForCompile(options, compile, context, sourceMgr, code);
  if (!model)
    return code;
  ModuleOp module = *model->built.module;
  // A module compiled before from the same model, options and compiler is
  // copied from the module cache (driver/ModuleCache.h).
  std::string cacheDirectory, cacheKey;
  if (compile.emit.empty() && compile.output != "-")
    cacheDirectory = moduleCacheDirectory();
  if (!cacheDirectory.empty()) {
    cacheKey = moduleCacheKey(module, compile);
    if (copyCachedModule(cacheDirectory, cacheKey, compile.output)) {
      if (compile.stats)
        llvm::outs() << "module: from the module cache (" << cacheDirectory
                     << "), nothing compiled\n";
      return kExitSuccess;
    }
  }
  // With --mesh, the module runs on every rank of the mesh (SPMD): the
  // partitioned graph, its split inputs given as each rank's block, its
  // collectives executed by the runtime through the session's communicator.
  if (!compile.mesh.mesh.empty()) {
    MeshOptions mesh = compile.mesh;
    if (ExitCode c = partitionForMesh(context, entryGraph(module), mesh, nullptr,
                                      /*localArguments=*/true))
      return c;
  }
  progress.stage("fusing, scheduling, planning memory");
  if (failed(runCompilePipeline(module, compile.memoryBudget.value_or(0), /*cpuLayout=*/!cuda)))
    return kExitInternalError;
  func::FuncOp func = entryGraph(module);
  progress.stage(kernelStage(func, cuda));
  if (cuda) {
    if (compile.emit == "cuda") {
      if (failed(runCudaTile(module, cudaArchs.back())))
        return kExitInternalError;
      auto source = codegen::emitCudaSource(func);
      if (failed(source))
        return kExitInternalError;
      out << *source;
      out.flush();
      return kExitSuccess;
    }
    ExitCode code;
    auto built = buildCuda(context, module, func, cudaArchs, true, code);
    if (failed(built))
      return code;
    out.write(reinterpret_cast<const char *>(built->bytes.data()),
              built->bytes.size());
    out.flush();
    if (!cacheKey.empty() && !out.has_error())
      storeCachedModule(cacheDirectory, cacheKey, built->bytes);
    return kExitSuccess;
  }
  if (compile.emit == "cpp") {
    auto source = codegen::emitCpuSource(func);
    if (failed(source))
      return kExitBadInput;
    out << *source;
    out.flush();
    return kExitSuccess;
  }
  codegen::CpuFailure failure;
  std::string message;
  uint64_t compilerRuns = codegen::hostCompilerRuns();
  auto compiled = codegen::buildCpuModule(func, failure, message, /*keepParams=*/false);
  if (failed(compiled))
    return failure == codegen::CpuFailure::Internal
               ? fail(context, kExitInternalError, message)
               : kExitBadInput;
  out.write(reinterpret_cast<const char *>(compiled->bytes.data()),
            compiled->bytes.size());
  out.flush();
  if (!cacheKey.empty() && !out.has_error())
    storeCachedModule(cacheDirectory, cacheKey, compiled->bytes);
  if (compile.stats) {
    std::string cache = codegen::kernelCacheDirectory("cpu");
    llvm::outs() << "kernels: " << kernelsOf(func).size() << ", host compiler runs: "
                 << codegen::hostCompilerRuns() - compilerRuns << " (kernel cache "
                 << (cache.empty() ? "off" : cache) << ")\n";
  }
  return kExitSuccess;
}

} // namespace dlc
