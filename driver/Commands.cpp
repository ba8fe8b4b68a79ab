//===- Commands.cpp - the verbs of the dlc tool ---------------------------===//

#include "driver/Commands.h"

#include "driver/ModelLoader.h"
#include "driver/PlanReport.h"
#include "driver/TensorFiles.h"
#include "driver/TensorReport.h"
#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"
#include "oracle/Interpreter.h"
#include "oracle/kernels/Kernels.h"
#include "passes/FlopCount.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dlc {

/// An error with no source location (a command-line or file problem).
static ExitCode fail(MLIRContext &context, ExitCode code, const Twine &message) {
  mlir::emitError(UnknownLoc::get(&context)) << message;
  return code;
}

/// 1234567 -> "1,234,567".
static std::string withCommas(int64_t value) {
  std::string digits = std::to_string(value), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-')
      out += ',';
    out += digits[i];
  }
  return out;
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

ExitCode runCompile(const CommonOptions &options,
                    const CompileOptions &compile, MLIRContext &context,
                    llvm::SourceMgr &sourceMgr) {
  if (compile.stats && compile.emit.empty())
    return planAndReport(options, false, context, sourceMgr, llvm::outs());
  std::error_code ec;
  llvm::raw_fd_ostream out(compile.output, ec, llvm::sys::fs::OF_Text);
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
    model->built.module->print(out);
    out.flush();
    return compile.stats
               ? planAndReport(options, false, context, sourceMgr, llvm::outs())
               : kExitSuccess;
  }
  if (compile.emit.empty())
    return fail(context, kExitBadInput,
                "compile needs --emit=ast or --emit=mlir (writing .dlcm "
                "modules is not built yet)");
  return fail(context, kExitBadInput,
              "unknown --emit stage '" + compile.emit +
                  "' (expected ast, mlir or fused)");
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
static oracle::Tensor randomInput(RankedTensorType type, uint64_t seed,
                                  unsigned index) {
  oracle::DType dtype = oracle::dtypeOf(type.getElementType());
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  oracle::SplitMix64 rng(seed * 1000003ull + index);
  std::vector<double> values(type.getNumElements());
  for (double &v : values) {
    if (oracle::isFloat(dtype))
      v = rng.normal();
    else if (dtype == oracle::DType::I1)
      v = rng.uniform() < 0.5 ? 0 : 1;
    else
      v = std::floor(rng.uniform() * 10);
  }
  return oracle::Tensor::fromValues(dtype, shape, std::move(values));
}

ExitCode runRun(const CommonOptions &options, const RunOptions &run,
                MLIRContext &context, llvm::SourceMgr &sourceMgr,
                llvm::raw_ostream &os) {
  if (run.device != "reference")
    return fail(context, kExitBadInput,
                "device '" + run.device +
                    "' is not available yet: use --device reference (the "
                    "float64 oracle)");
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
    oracle::Tensor tensor;
    std::string error;
    if (!readTensorFile(path, name, tensor, error))
      return fail(context, kExitBadInput, "--input " + name + ": " + error);
    build.inputShapes[name] = tensor.shape;
    given.emplace(name, std::move(tensor));
  }
  ExitCode code;
  auto model = loadModel(options.modelPath, context, sourceMgr, build, code);
  if (!model)
    return code;
  if (run.stage == "fused" && failed(runFusionPipeline(*model->built.module)))
    return kExitInternalError;
  func::FuncOp func = entryGraph(*model->built.module);

  std::vector<oracle::Tensor> inputs;
  std::set<std::string> used;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = argName(func, i, false);
    auto type = cast<RankedTensorType>(func.getArgumentTypes()[i]);
    auto found = given.find(name);
    if (found == given.end()) {
      inputs.push_back(randomInput(type, run.seed, i));
      continue;
    }
    used.insert(name);
    oracle::DType expected = oracle::dtypeOf(type.getElementType());
    if (found->second.dtype != expected)
      return fail(context, kExitBadInput,
                  "--input " + name + ": the file holds " +
                      oracle::dtypeName(found->second.dtype) +
                      oracle::formatShape(found->second.shape) +
                      ", the graph expects " + formatType(type));
    inputs.push_back(found->second);
  }
  for (auto &[name, tensor] : given)
    if (!used.count(name))
      return fail(context, kExitBadInput,
                  "--input " + name + ": the graph has no input named '" +
                      name + "'");

  oracle::ParamStore params;
  auto outputs = oracle::evaluate(func, inputs, params);
  if (failed(outputs))
    return kExitRuntimeFault;

  if (!run.saveParams.empty()) {
    std::string error;
    if (!writeTensorArchive(run.saveParams, params, error))
      return fail(context, kExitBadInput, "--save-params: " + error);
  }
  std::map<std::string, const oracle::Tensor *> byName;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    byName[argName(func, i, true)] = &(*outputs)[i];
  for (auto &files : {outputFiles, expectedFiles})
    for (auto &[name, path] : files)
      if (!byName.count(name))
        return fail(context, kExitBadInput,
                    "the graph has no output named '" + name + "'");

  for (unsigned i = 0; i < func.getNumResults(); ++i)
    printTensorSummary(os, argName(func, i, true), (*outputs)[i],
                       run.showValues);
  for (auto &[name, path] : outputFiles) {
    std::string error;
    if (!writeTensorFile(path, name, *byName[name], error))
      return fail(context, kExitBadInput, "--output " + name + ": " + error);
  }
  bool allMatch = true;
  for (auto &[name, path] : expectedFiles) {
    oracle::Tensor expected;
    std::string error, report;
    if (!readTensorFile(path, name, expected, error))
      return fail(context, kExitBadInput,
                  "--expected-output " + name + ": " + error);
    bool match =
        compareTensors(*byName[name], expected, run.rtol, run.atol, report);
    os << name << ": " << (match ? "matches" : "DOES NOT MATCH") << " "
       << path << " (" << report << ")\n";
    allMatch &= match;
  }
  return allMatch ? kExitSuccess : kExitCheckFailed;
}

} // namespace dlc
