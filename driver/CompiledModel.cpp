//===- CompiledModel.cpp - a model ready to run on a device ---------------===//

#include "driver/CompiledModel.h"

#include "codegen/cpu/CpuBackend.h"
#include "driver/DriverSupport.h"
#include "driver/PlanReport.h"
#include "driver/Progress.h"
#include "ir/ParamSpec.h"
#include "passes/analysis/Liveness.h"

#include "llvm/Support/Path.h"

using namespace mlir;

namespace dlc {

bool isCudaDevice(llvm::StringRef device) {
  return device == "cuda-emu" || device == "cuda" || device.starts_with("cuda:");
}

Operation *kernelNamed(llvm::StringRef name, llvm::ArrayRef<Operation *> kernels) {
  unsigned index = 0;
  if (!name.consume_front("dlc_kernel_") || name.getAsInteger(10, index) ||
      index >= kernels.size())
    return nullptr;
  return kernels[index];
}

std::string kernelStage(func::FuncOp planned, bool cuda) {
  size_t kernels = kernelsOf(planned).size();
  return "generating and compiling " + std::to_string(kernels) + " kernels (" +
         (cuda ? "NVRTC and the host compiler" : "host compiler") + ", cached by content)";
}

std::string fusedOpNames(Operation *kernel) {
  std::string ops;
  kernel->walk([&](Operation *inner) {
    if (inner != kernel && !inner->hasTrait<OpTrait::IsTerminator>())
      ops += (ops.empty() ? "" : ",") + inner->getName().stripDialect().str();
  });
  return ops.empty() ? kernel->getName().stripDialect().str() : ops;
}

std::vector<ModuleTensorInfo> signatureOf(func::FuncOp func, bool results) {
  std::vector<ModuleTensorInfo> specs;
  TypeRange types = results ? func.getResultTypes() : func.getArgumentTypes();
  for (auto [i, type] : llvm::enumerate(types)) {
    auto tensor = cast<RankedTensorType>(type);
    specs.push_back({argName(func, i, results), dtypeOf(tensor.getElementType()),
                     std::vector<int64_t>(tensor.getShape().begin(), tensor.getShape().end())});
  }
  return specs;
}

ExitCode refuseDimsForModule(MLIRContext &context, const CommonOptions &options) {
  if (!options.dimsGiven)
    return kExitSuccess;
  return fail(context, kExitBadInput,
              "--dim binds a model's symbolic dimensions before it is compiled; '" +
                  options.modelPath +
                  "' is a compiled module, whose shapes are fixed (dlc check lists them)");
}

ExitCode chooseDynamicExtent(MLIRContext &context, const CommonOptions &options,
                             const std::map<std::string, oracle::Tensor> &given,
                             LoadedModule &module) {
  auto dim = module.dynamicDim();
  if (!dim)
    return refuseDimsForModule(context, options);
  std::string range = std::to_string(dim->min) + ".." + std::to_string(dim->max);
  for (const auto &[name, size] : options.dims)
    if (name != dim->name)
      return fail(context, kExitBadInput,
                  "--dim " + name + ": '" + options.modelPath +
                      "' is a compiled module; its one dimension chosen at run time is " +
                      dim->name + " (" + range + ")");
  int64_t extent = 0;
  if (auto it = options.dims.find(dim->name); it != options.dims.end()) {
    extent = it->second;
  } else {
    // From the given inputs: a dynamic input's outermost dimension is
    // rows-per-unit times N (the module's shapes are at N = max).
    for (const ModuleTensorInfo &input : module.inputs()) {
      auto t = given.find(input.name);
      if (!input.dynamic || t == given.end() || t->second.shape.empty())
        continue;
      int64_t perUnit = input.shape[0] / dim->max;
      if (t->second.shape[0] % perUnit == 0)
        extent = t->second.shape[0] / perUnit;
      break;
    }
    if (extent == 0)
      extent = dim->max;
  }
  if (extent < dim->min || extent > dim->max)
    return fail(context, kExitBadInput,
                "--dim " + dim->name + "=" + std::to_string(extent) + ": '" + options.modelPath +
                    "' was compiled for " + dim->name + " in " + range);
  module.setDynamicExtent(extent);
  return kExitSuccess;
}

ExitCode compileForDevice(const CommonOptions &options, const CompileForDevice &compile,
                          const std::map<std::string, oracle::Tensor> &given,
                          MLIRContext &context, llvm::SourceMgr &sourceMgr, CompiledModel &out) {
  out.isModule = llvm::sys::path::extension(options.modelPath) == ".dlcm";
  bool cuda = isCudaDevice(compile.device);
  if (compile.device != "cpu" && !cuda)
    return fail(context, kExitBadInput,
                "device '" + compile.device +
                    "' is not available: use --device cpu (the default), cuda-emu or cuda[:N]");
  if (out.isModule) {
    if (!compile.params.empty())
      return fail(context, kExitBadInput,
                  "--params replaces a model's parameter values before it is compiled: "
                  "give the .dlg or .onnx, not a compiled module");
    if (compile.afterFusion)
      return fail(context, kExitBadInput,
                  "'" + options.modelPath +
                      "' is a compiled module (kernels, no IR): give the .dlg or .onnx it "
                      "came from");
    std::string error;
    if (ExitCode code = LoadedModule::fromFile(options.modelPath, out.module, error))
      return fail(context, code, error);
    if (ExitCode code = chooseDynamicExtent(context, options, given, out.module))
      return code;
    out.inputs = out.module.inputs();
    out.outputs = out.module.outputs();
    return kExitSuccess;
  }

  CompileProgress progress(options.modelPath);
  progress.stage("building the graph");
  dlg::BuildOptions build = buildOptionsFor(options);
  for (auto &[name, tensor] : given)
    build.inputShapes[name] = tensor.shape;
  ExitCode code;
  out.model = loadModel(options.modelPath, context, sourceMgr, build, code);
  if (!out.model)
    return code;
  ModuleOp module = *out.model->built.module;
  if (!compile.params.empty()) {
    std::string error;
    if (!bindParameterFile(module, compile.params, error))
      return fail(context, kExitBadInput, "--params " + compile.params + ": " + error);
  }
  if (compile.afterLoad)
    compile.afterLoad(module);
  if (compile.afterFusion &&
      (failed(runFusionPipeline(module)) || failed(compile.afterFusion(entryGraph(module)))))
    return kExitInternalError;
  progress.stage("fusing, scheduling, planning memory");
  if (failed(runCompilePipeline(module, 0, /*cpuLayout=*/!isCudaDevice(compile.device))))
    return kExitInternalError;
  func::FuncOp func = entryGraph(module);
  out.planned = func;
  progress.stage(kernelStage(func, isCudaDevice(compile.device)));
  out.inputs = signatureOf(func, false);
  out.outputs = signatureOf(func, true);

  return buildAndLoad(context, module, func, compile.device, out.module, out.params);
}

ExitCode buildAndLoad(MLIRContext &context, ModuleOp module, func::FuncOp func,
                      const std::string &device, LoadedModule &loaded, ParamStore &params) {
  ExitCode code = kExitSuccess;
  std::vector<uint8_t> bytes;
  if (isCudaDevice(device)) {
    // cuda-emu needs only the host-compiled object; a GPU only NVRTC's.
    bool emu = device == "cuda-emu";
    std::vector<std::string> archs;
    if (!emu)
      archs = {"sm_80", "sm_90"};
    auto built = buildCuda(context, module, func, archs, emu, code);
    if (failed(built))
      return code;
    params = std::move(built->params);
    bytes = std::move(built->bytes);
  } else {
    codegen::CpuFailure failure;
    std::string message;
    auto built = codegen::buildCpuModule(func, failure, message);
    if (failed(built))
      return failure == codegen::CpuFailure::Internal
                 ? fail(context, kExitInternalError, message)
                 : kExitBadInput;
    params = std::move(built->params);
    bytes = std::move(built->bytes);
  }
  std::string error;
  if (LoadedModule::fromMemory(bytes, loaded, error) != kExitSuccess)
    return fail(context, kExitInternalError, "the module just compiled does not load: " + error);
  return kExitSuccess;
}

} // namespace dlc
