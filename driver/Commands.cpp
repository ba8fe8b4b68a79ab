//===- Commands.cpp - the verbs of the dlc tool ---------------------------===//

#include "driver/Commands.h"

#include "codegen/cpu/CpuBackend.h"
#include "codegen/cuda/CudaBackend.h"
#include "driver/ModelLoader.h"
#include "driver/ModuleRunner.h"
#include "driver/PlanReport.h"
#include "driver/TensorFiles.h"
#include "driver/TensorReport.h"
#include "ir/DlcDialect.h"
#include "ir/ParamSpec.h"
#include "ir/ShapeUtils.h"
#include "oracle/Interpreter.h"
#include "passes/FlopCount.h"
#include "passes/Passes.h"
#include "support/Init.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dlc {

/// An error with no source location (a command-line or file problem).
static ExitCode fail(MLIRContext &context, ExitCode code, const Twine &message) {
  mlir::emitError(UnknownLoc::get(&context)) << message;
  return code;
}


/// 1.93e9 -> "1.93 G".
static std::string humanCount(double value) {
  const char *units[] = {" ", " K", " M", " G", " T", " P"};
  int unit = 0;
  while (value >= 1000 && unit < 5) {
    value /= 1000;
    ++unit;
  }
  return llvm::formatv("{0:F2}{1}", value, units[unit]).str();
}

static func::FuncOp entryGraph(ModuleOp module) {
  return *module.getOps<func::FuncOp>().begin();
}

static std::string argName(func::FuncOp func, unsigned i, bool result) {
  auto attr = result ? func.getResultAttrOfType<StringAttr>(i, "dlc.name")
                     : func.getArgAttrOfType<StringAttr>(i, "dlc.name");
  return attr ? attr.str() : (result ? "result" : "arg") + std::to_string(i);
}

static int64_t byteSize(RankedTensorType type) {
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * (bits == 1 ? 1 : bits / 8);
}

//===----------------------------------------------------------------------===//
// check
//===----------------------------------------------------------------------===//

ExitCode runCheck(const CommonOptions &options, MLIRContext &context,
                  llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os) {
  dlg::BuildOptions build;
  build.dims = options.dims;
  build.defaultUnboundDimsToOne = true;
  ExitCode code;
  auto model = loadModel(options.modelPath, context, sourceMgr, build, code);
  if (!model)
    return code;
  ModuleOp module = *model->built.module;
  func::FuncOp func = entryGraph(module);
  os << "graph " << func.getSymName() << " (" << options.modelPath << ")\n";
  if (!model->built.dims.empty()) {
    os << "dimensions:";
    for (auto &[name, size] : model->built.dims) {
      os << " " << name << "=" << size;
      if (llvm::is_contained(model->built.defaultedDims, name))
        os << " (unbound, taken as 1)";
    }
    os << "\n";
  }
  os << "inputs:\n";
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    os << "  " << argName(func, i, false) << ": "
       << formatType(func.getArgumentTypes()[i]) << "\n";
  os << "outputs:\n";
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    os << "  " << argName(func, i, true) << ": "
       << formatType(func.getResultTypes()[i]) << "\n";
  int64_t count = 0, values = 0, bytes = 0;
  func.walk([&](ParamOp param) {
    ++count;
    values += param.getType().getNumElements();
    bytes += byteSize(param.getType());
  });
  os << "parameters: " << withCommas(values) << " in " << count
     << " tensors, " << withCommas(bytes) << " bytes\n";
  func.walk([&](ParamOp param) {
    os << "  " << param.getName() << ": " << formatType(param.getType())
       << " = " << param.getInit().getAs<StringAttr>("kind").getValue()
       << "\n";
  });
  FlopCount flops = countFlops(func);
  os << "FLOPs per run: " << withCommas(flops.total()) << " ("
     << humanCount(double(flops.total())) << "FLOP; matmul and conv "
     << withCommas(flops.contraction) << ", other " << withCommas(flops.other)
     << ")";
  if (!model->built.dims.empty()) {
    os << " at";
    for (auto &[name, size] : model->built.dims)
      os << " " << name << "=" << size;
  }
  os << "\n";
  for (const dlg::TrainBlock &train : model->ast.trains)
    os << "train block for " << train.graphName << " with "
       << train.inputs.size() << " extra input(s) (training is compiled by "
       << "`dlc train`)\n";
  return kExitSuccess;
}

//===----------------------------------------------------------------------===//
// compile
//===----------------------------------------------------------------------===//

/// Builds the model, runs the dlc-compile pipeline and prints the plan
/// report; `defaultDims` binds unbound dimensions to 1 (and says so).
static ExitCode planAndReport(const CommonOptions &options, bool defaultDims,
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

/// Runs the graph → kernels passes (buildFusionPipeline) on `module`, with
/// MLIR's pass-manager flags; errors go to the diagnostic handler.
static LogicalResult runFusionPipeline(ModuleOp module) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  buildFusionPipeline(pm.nest<func::FuncOp>());
  return pm.run(module);
}

/// dlc-tile for `arch` on every function: the CUDA schedules.
static LogicalResult runCudaTile(ModuleOp module, const std::string &arch) {
  PassManager pm(module.getContext());
  DlcTileOptions tile;
  tile.target = "cuda:" + arch;
  pm.nest<func::FuncOp>().addPass(createDlcTile(tile));
  return pm.run(module);
}

/// Builds the CUDA module of a planned `func`: sources for the newest of
/// `archs` (NVRTC compiles them for each), plus the cuda-emu object when
/// `emulation`.
static FailureOr<codegen::CudaModule>
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

ExitCode runCompile(const CommonOptions &options,
                    const CompileOptions &compile, MLIRContext &context,
                    llvm::SourceMgr &sourceMgr) {
  if (compile.stats && compile.emit.empty())
    return planAndReport(options, false, context, sourceMgr, llvm::outs());
  std::error_code ec;
  llvm::raw_fd_ostream out(compile.output, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail(context, kExitBadInput,
                "cannot write '" + compile.output + "': " + ec.message());
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
  if (compile.emit == "mlir" || compile.emit == "fused") {
    dlg::BuildOptions build;
    build.dims = options.dims;
    ExitCode code;
    auto model = loadModel(options.modelPath, context, sourceMgr, build, code);
    if (!model)
      return code;
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
                    "' (expected ast, mlir, fused, cpp or cuda)");
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
  dlg::BuildOptions build;
  build.dims = options.dims;
  ExitCode code;
  auto model = loadModel(options.modelPath, context, sourceMgr, build, code);
  if (!model)
    return code;
  ModuleOp module = *model->built.module;
  if (failed(runCompilePipeline(module)))
    return kExitInternalError;
  func::FuncOp func = entryGraph(module);
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
  auto compiled = codegen::buildCpuModule(func, failure, message);
  if (failed(compiled))
    return failure == codegen::CpuFailure::Internal
               ? fail(context, kExitInternalError, message)
               : kExitBadInput;
  out.write(reinterpret_cast<const char *>(compiled->bytes.data()),
            compiled->bytes.size());
  out.flush();
  return kExitSuccess;
}

//===----------------------------------------------------------------------===//
// run
//===----------------------------------------------------------------------===//

/// Splits `NAME=@file` arguments into a map, reporting the first bad one.
static bool parseNamedFiles(MLIRContext &context,
                            const std::vector<std::string> &arguments,
                            const char *flag,
                            std::map<std::string, std::string> &out) {
  for (const std::string &argument : arguments) {
    std::string name, path, error;
    if (!parseNamedFile(argument, name, path, error)) {
      fail(context, kExitBadInput, Twine("--") + flag + ": " + error);
      return false;
    }
    out[name] = path;
  }
  return true;
}

/// A seeded random input: standard normal floats, integers in [0, 10),
/// booleans with probability 1/2. Each input has its own stream.
static oracle::Tensor randomInput(DType dtype,
                                  std::vector<int64_t> shape, uint64_t seed,
                                  unsigned index) {
  SplitMix64 rng(seed * 1000003ull + index);
  std::vector<double> values(oracle::shapeNumel(shape));
  for (double &v : values) {
    if (isFloat(dtype))
      v = rng.normal();
    else if (dtype == DType::I1)
      v = rng.uniform() < 0.5 ? 0 : 1;
    else
      v = std::floor(rng.uniform() * 10);
  }
  return oracle::Tensor::fromValues(dtype, shape, std::move(values));
}

ExitCode runRun(const CommonOptions &options, const RunOptions &run,
                MLIRContext &context, llvm::SourceMgr &sourceMgr,
                llvm::raw_ostream &os) {
  bool isModule = llvm::sys::path::extension(options.modelPath) == ".dlcm";
  bool cudaDevice = run.device == "cuda-emu" || run.device == "cuda" ||
                    llvm::StringRef(run.device).starts_with("cuda:");
  if (run.device != "reference" && run.device != "cpu" && !cudaDevice)
    return fail(context, kExitBadInput,
                "device '" + run.device +
                    "' is not available: use --device cpu (compiled, the "
                    "default), cuda-emu, cuda[:N] or reference (the float64 "
                    "oracle)");
  if (isModule && run.device == "reference")
    return fail(context, kExitBadInput,
                "--device reference evaluates a model's IR with the oracle, "
                "and '" + options.modelPath +
                    "' is a compiled module (kernels, no IR): run it with "
                    "--device cpu, or give the .dlg or .onnx it came from");
  if (isModule && !run.saveParams.empty())
    return fail(context, kExitBadInput,
                "--save-params needs the model's source (.dlg or .onnx), not "
                "a compiled module");
  if (run.device != "reference" && run.stage != "graph")
    return fail(context, kExitBadInput,
                "--stage selects the IR of --device reference (the oracle); "
                "--device " + run.device + " runs the compiled kernels");
  if (run.stage != "graph" && run.stage != "fused")
    return fail(context, kExitBadInput,
                "--stage must be graph or fused, not '" + run.stage + "'");
  std::map<std::string, std::string> inputFiles, outputFiles, expectedFiles;
  if (!parseNamedFiles(context, run.inputs, "input", inputFiles) ||
      !parseNamedFiles(context, run.outputs, "output", outputFiles) ||
      !parseNamedFiles(context, run.expectedOutputs, "expected-output",
                       expectedFiles))
    return kExitBadInput;

  // Read the given inputs first: their shapes bind symbolic dimensions.
  std::map<std::string, oracle::Tensor> given;
  dlg::BuildOptions build;
  build.dims = options.dims;
  for (auto &[name, path] : inputFiles) {
    HostTensor tensor;
    std::string error;
    if (!readTensorFile(path, name, tensor, error))
      return fail(context, kExitBadInput, "--input " + name + ": " + error);
    build.inputShapes[name] = tensor.shape();
    given.emplace(name, oracle::Tensor::fromHost(tensor));
  }

  // The signature: from the module, or from the graph built from the source.
  std::vector<ModuleTensorInfo> inputSpecs, outputSpecs;
  LoadedModule compiled;
  std::optional<LoadedModel> model;
  func::FuncOp func;
  if (isModule) {
    std::string error;
    ExitCode code = LoadedModule::fromFile(options.modelPath, compiled, error);
    if (code != kExitSuccess)
      return fail(context, code, error);
    inputSpecs = compiled.inputs();
    outputSpecs = compiled.outputs();
  } else {
    ExitCode code;
    model = loadModel(options.modelPath, context, sourceMgr, build, code);
    if (!model)
      return code;
    if (run.device == "reference" && run.stage == "fused" &&
        failed(runFusionPipeline(*model->built.module)))
      return kExitInternalError;
    func = entryGraph(*model->built.module);
    auto spec = [](const std::string &name, Type type) {
      auto tensor = cast<RankedTensorType>(type);
      return ModuleTensorInfo{name, dtypeOf(tensor.getElementType()),
                              {tensor.getShape().begin(), tensor.getShape().end()}};
    };
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      inputSpecs.push_back(spec(argName(func, i, false), func.getArgumentTypes()[i]));
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      outputSpecs.push_back(spec(argName(func, i, true), func.getResultTypes()[i]));
  }

  std::vector<oracle::Tensor> inputs;
  std::set<std::string> used;
  for (auto [i, spec] : llvm::enumerate(inputSpecs)) {
    auto found = given.find(spec.name);
    if (found == given.end()) {
      inputs.push_back(randomInput(spec.dtype, spec.shape, run.seed, i));
      continue;
    }
    used.insert(spec.name);
    if (found->second.dtype != spec.dtype || found->second.shape != spec.shape)
      return fail(context, kExitBadInput,
                  "--input " + spec.name + ": the file holds " +
                      dtypeName(found->second.dtype) +
                      formatShape(found->second.shape) +
                      (isModule ? ", the module expects " : ", the graph expects ") +
                      dtypeName(spec.dtype) +
                      formatShape(spec.shape));
    inputs.push_back(found->second);
  }
  for (auto &[name, tensor] : given)
    if (!used.count(name))
      return fail(context, kExitBadInput,
                  "--input " + name + ": the module has no input named '" +
                      name + "'");

  ParamStore params;
  std::vector<oracle::Tensor> results;
  if (run.device == "reference") {
    auto outputs = oracle::evaluate(func, inputs, params);
    if (failed(outputs))
      return kExitRuntimeFault;
    results = std::move(*outputs);
  } else {
    if (!isModule) {
      // Compile in memory: the module bytes `dlc compile -o` would write.
      if (failed(runCompilePipeline(*model->built.module)))
        return kExitInternalError;
      if (cudaDevice) {
        // cuda-emu needs only the host-compiled object; a GPU only NVRTC's.
        bool emu = run.device == "cuda-emu";
        std::vector<std::string> archs;
        if (!emu)
          archs = {"sm_80", "sm_90"};
        ExitCode code;
        auto built = buildCuda(context, *model->built.module, func, archs, emu, code);
        if (failed(built))
          return code;
        params = std::move(built->params);
        std::string error;
        code = LoadedModule::fromMemory(built->bytes, compiled, error);
        if (code != kExitSuccess)
          return fail(context, kExitInternalError,
                      "the module just compiled does not load: " + error);
      }
    }
    if (!isModule && !cudaDevice) {
      codegen::CpuFailure failure;
      std::string message;
      auto built = codegen::buildCpuModule(func, failure, message);
      if (failed(built))
        return failure == codegen::CpuFailure::Internal
                   ? fail(context, kExitInternalError, message)
                   : kExitBadInput;
      params = std::move(built->params);
      std::string error;
      ExitCode code = LoadedModule::fromMemory(built->bytes, compiled, error);
      if (code != kExitSuccess)
        return fail(context, kExitInternalError,
                    "the module just compiled does not load: " + error);
    }
    std::string error;
    ExitCode code = compiled.run(run.device, inputs, results, error);
    if (code != kExitSuccess)
      return fail(context, code, error);
  }

  if (!run.saveParams.empty()) {
    std::string error;
    if (!writeTensorArchive(run.saveParams, params, error))
      return fail(context, kExitBadInput, "--save-params: " + error);
  }
  std::map<std::string, const oracle::Tensor *> byName;
  for (auto [i, spec] : llvm::enumerate(outputSpecs))
    byName[spec.name] = &results[i];
  for (auto &files : {outputFiles, expectedFiles})
    for (auto &[name, path] : files)
      if (!byName.count(name))
        return fail(context, kExitBadInput,
                    (isModule ? "the module" : "the graph") +
                        std::string(" has no output named '") + name + "'");

  for (auto [i, spec] : llvm::enumerate(outputSpecs))
    printTensorSummary(os, spec.name, results[i], run.showValues);
  for (auto &[name, path] : outputFiles) {
    std::string error;
    if (!writeTensorFile(path, name, byName[name]->toHost(), error))
      return fail(context, kExitBadInput, "--output " + name + ": " + error);
  }
  bool allMatch = true;
  for (auto &[name, path] : expectedFiles) {
    HostTensor expected;
    std::string error, report;
    if (!readTensorFile(path, name, expected, error))
      return fail(context, kExitBadInput,
                  "--expected-output " + name + ": " + error);
    bool match = compareTensors(*byName[name], oracle::Tensor::fromHost(expected),
                                run.rtol, run.atol, report);
    os << name << ": " << (match ? "matches" : "DOES NOT MATCH") << " "
       << path << " (" << report << ")\n";
    allMatch &= match;
  }
  return allMatch ? kExitSuccess : kExitCheckFailed;
}

} // namespace dlc
