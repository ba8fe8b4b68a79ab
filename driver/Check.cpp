//===- Check.cpp - dlc check: a model's signature, parameters and FLOPs ---===//
//
// Builds the model (unbound dimensions taken as 1) and prints its inputs,
// outputs, parameters (count, bytes) and FLOPs per run, without compiling.
// A compiled module (.dlcm) is loaded and validated through the runtime's
// C API, as an embedder would, and its signature printed.
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"

#include "driver/CompiledModel.h"
#include "driver/DriverSupport.h"
#include "driver/ModelLoader.h"
#include "driver/ModuleRunner.h"
#include "driver/PlanReport.h"
#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"
#include "passes/FlopCount.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dlc {

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

static int64_t byteSize(RankedTensorType type) {
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * (bits == 1 ? 1 : bits / 8);
}

/// `dlc check M.dlcm`: the module validated (every section's checksum,
/// the header's bounds) and its signature.
static ExitCode checkModule(const CommonOptions &options, MLIRContext &context,
                            llvm::raw_ostream &os) {
  LoadedModule module;
  std::string error;
  if (ExitCode c = LoadedModule::fromFile(options.modelPath, module, error))
    return fail(context, c, error);
  if (ExitCode c = chooseDynamicExtent(context, options, {}, module))
    return c;
  auto print = [&](const char *title, const std::vector<ModuleTensorInfo> &tensors) {
    os << title << ":\n";
    for (const ModuleTensorInfo &t : tensors)
      os << "  " << t.name << ": " << dtypeName(t.dtype) << formatShape(t.shape) << "\n";
  };
  os << "module " << module.name() << " (" << options.modelPath << "): valid\n";
  if (auto dim = module.dynamicDim())
    os << "dynamic dimension: " << dim->name << " in " << dim->min << ".." << dim->max
       << " (chosen per run; shapes at " << dim->name << "="
       << (options.dims.count(dim->name) ? options.dims.at(dim->name) : dim->max) << ")\n";
  print("inputs", module.inputs());
  print("outputs", module.outputs());
  return kExitSuccess;
}

ExitCode runCheck(const CommonOptions &options, MLIRContext &context,
                  llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os) {
  if (llvm::StringRef(options.modelPath).ends_with(".dlcm"))
    return checkModule(options, context, os);
  dlg::BuildOptions build = buildOptionsFor(options);
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
  // Counts saturate at INT64_MAX (FlopCount.h): say so rather than print it.
  auto flopText = [](int64_t n) {
    return n == INT64_MAX ? std::string("over 2^63") : withCommas(n);
  };
  os << "FLOPs per run: " << flopText(flops.total()) << " ("
     << humanCount(double(flops.total())) << "FLOP; matmul and conv "
     << flopText(flops.contraction) << ", other " << flopText(flops.other)
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

} // namespace dlc
