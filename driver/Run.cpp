//===- Run.cpp - dlc run: a model on given or seeded random inputs --------===//
//
// Runs a .dlcm, or a .dlg/.onnx compiled in memory, on the cpu or a CUDA
// device through the runtime, or the IR on the float64 oracle
// (`--device reference`); prints, saves or checks the outputs.
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"

#include "driver/CompiledModel.h"
#include "driver/DriverSupport.h"
#include "driver/Inputs.h"
#include "driver/ModelLoader.h"
#include "driver/ModuleRunner.h"
#include "driver/PipelineStep.h"
#include "driver/SpmdRunner.h"
#include "driver/PlanReport.h"
#include "driver/TensorFiles.h"
#include "driver/TensorReport.h"
#include "oracle/Interpreter.h"
#include "oracle/Spmd.h"
#include "passes/partition/Partition.h"
#include "passes/Passes.h"
#include "ir/ParamSpec.h"
#include "ir/ShapeUtils.h"
#include "support/Init.h"
#include "support/weights/WeightFiles.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <set>

#include <unistd.h>

using namespace mlir;

namespace dlc {

/// Bytes of this machine's memory (0 when unknown).
static double physicalMemory() {
  return double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
}

/// A value larger than this machine's memory is refused (exit 3), named at
/// its location, before anything is compiled or allocated: the oracle
/// holds 8 bytes an element, a device the element type's width.
static ExitCode refuseOversizedValues(func::FuncOp func, bool oracle) {
  const double memory = physicalMemory();
  if (memory <= 0)
    return kExitSuccess;
  ExitCode code = kExitSuccess;
  auto check = [&](Value value, Location loc, const std::string &what) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (code != kExitSuccess || !type)
      return;
    double bytes = oracle ? 8 : std::max<double>(1, type.getElementTypeBitWidth() / 8);
    for (int64_t d : type.getShape())
      bytes *= double(d);
    if (bytes <= memory)
      return;
    mlir::emitError(loc) << what << " (" << formatType(type) << ") needs "
                         << uint64_t(bytes) << " bytes, more than this machine's "
                         << uint64_t(memory) << " bytes of memory";
    code = kExitRuntimeFault;
  };
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      check(result, op->getLoc(),
            "the result of '" + op->getName().stripDialect().str() + "'");
  });
  return code;
}

/// The same for a compiled module's outputs.
static ExitCode refuseOversizedOutputs(MLIRContext &context,
                                       const std::vector<ModuleTensorInfo> &outputs) {
  const double memory = physicalMemory();
  for (const ModuleTensorInfo &spec : outputs) {
    double bytes = double(elementSize(spec.dtype));
    for (int64_t d : spec.shape)
      bytes *= double(d);
    if (memory > 0 && bytes > memory)
      return fail(context, kExitRuntimeFault,
                  "output " + spec.name + " (" + dtypeName(spec.dtype) +
                      formatShape(spec.shape) + ") needs " + std::to_string(uint64_t(bytes)) +
                      " bytes, more than this machine's " + std::to_string(uint64_t(memory)) +
                      " bytes of memory");
  }
  return kExitSuccess;
}

ExitCode runRun(const CommonOptions &options, const RunOptions &run,
                MLIRContext &context, llvm::SourceMgr &sourceMgr,
                llvm::raw_ostream &os) {
  bool isModule = llvm::sys::path::extension(options.modelPath) == ".dlcm";
  if (!run.mesh.mesh.empty() && run.device != "reference" && run.device != "cpu")
    return fail(context, kExitBadInput,
                "--mesh runs the partitioned program on CPU ranks (--device cpu, "
                "under mpirun) or on the oracle (--device reference); device '" +
                    run.device + "' does not run collectives yet (issue 12)");
  if (!run.mesh.mesh.empty() && isModule)
    return fail(context, kExitBadInput,
                "--mesh partitions a model's source (.dlg or .onnx), not a .dlcm");
  if (!run.mesh.parallel.empty() && run.mesh.mesh.empty())
    return fail(context, kExitBadInput, "--parallel needs --mesh");
  bool cudaDevice = isCudaDevice(run.device);
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
  if (isModule && !run.params.empty())
    return fail(context, kExitBadInput,
                "--params replaces a model's parameter values before it is "
                "compiled: give the .dlg or .onnx, not a compiled module");
  if (isModule && !run.gradients.empty())
    return fail(context, kExitBadInput,
                "--gradients differentiates the model's train block: give "
                "the .dlg, not a compiled module");
  if (run.device != "reference" && run.stage != "graph")
    return fail(context, kExitBadInput,
                "--stage selects the IR of --device reference (the oracle); "
                "--device " + run.device + " runs the compiled kernels");
  if (run.stage != "graph" && run.stage != "fused")
    return fail(context, kExitBadInput,
                "--stage must be graph or fused, not '" + run.stage + "'");
  std::map<std::string, std::string> outputFiles, expectedFiles;
  if (ExitCode code = parseNamedFiles(context, run.outputs, "output", outputFiles))
    return code;
  if (ExitCode code =
          parseNamedFiles(context, run.expectedOutputs, "expected-output", expectedFiles))
    return code;

  // Read the given inputs first: their shapes bind symbolic dimensions.
  std::map<std::string, oracle::Tensor> given;
  if (ExitCode code = readInputFiles(context, run.inputs, given))
    return code;
  dlg::BuildOptions build = buildOptionsFor(options);
  build.buildTraining = !run.gradients.empty();
  for (auto &[name, tensor] : given)
    build.inputShapes[name] = tensor.shape;

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
    if (ExitCode c = chooseDynamicExtent(context, options, given, compiled))
      return c;
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
    if (!run.params.empty()) {
      std::string error;
      if (!bindParameterFile(*model->built.module, run.params, error))
        return fail(context, kExitBadInput, "--params " + run.params + ": " + error);
    }
    if (!run.gradients.empty()) {
      auto differentiated =
          trainingFunction(*model->built.module, func, /*gradientsOnly=*/true);
      if (failed(differentiated))
        return kExitBadInput;
      func = *differentiated;
    }
    inputSpecs = signatureOf(func, /*results=*/false);
    outputSpecs = signatureOf(func, /*results=*/true);
  }

  std::vector<oracle::Tensor> inputs;
  if (ExitCode code = assembleInputs(context, inputSpecs, given, run.inputs,
                                     /*randomByDefault=*/false,
                                     isModule ? "the module" : "the graph", inputs))
    return code;

  // The inputs are held (assembleInputs refuses those too large, by name);
  // every other value the run would hold is checked before it starts.
  if (ExitCode code = func ? refuseOversizedValues(func, run.device == "reference")
                            : refuseOversizedOutputs(context, outputSpecs))
    return code;

  ParamStore params;
  std::vector<oracle::Tensor> results;
  if (run.device == "reference" && !run.mesh.mesh.empty()) {
    // The partitioned program on every rank of the mesh, each given the
    // whole inputs; its outputs are whole on every rank.
    Mesh mesh;
    if (ExitCode code = partitionForMesh(context, func, run.mesh, &mesh))
      return code;
    auto outputs = oracle::evaluateSpmd(
        func, mesh, std::vector<std::vector<oracle::Tensor>>(mesh.size(), inputs), params);
    if (failed(outputs))
      return kExitRuntimeFault;
    for (int64_t r = 1; r < mesh.size(); ++r)
      for (size_t i = 0; i < (*outputs)[0].size(); ++i)
        if ((*outputs)[r][i].data != (*outputs)[0][i].data)
          return fail(context, kExitInternalError,
                      "the partitioned program's output " + std::to_string(i) +
                          " differs between rank 0 and rank " + std::to_string(r));
    results = std::move((*outputs)[0]);
  } else if (!run.mesh.mesh.empty() &&
             parseParallelPreset(run.mesh.parallel).value_or(ParallelPreset{}).pipeline) {
    // This process is one stage of the graph cut into stages.
    int rank = 0;
    if (ExitCode code = runPipelineOnRanks(context, func, run.mesh, inputs, results, rank))
      return code;
    if (rank != 0)
      return kExitSuccess;
  } else if (!run.mesh.mesh.empty()) {
    // This process is one rank (mpirun -np N): its part of the partitioned
    // program on the CPU, collectives through runtime/comm; rank 0 reports.
    Mesh mesh;
    if (ExitCode code = partitionForMesh(context, func, run.mesh, &mesh))
      return code;
    int rank = 0;
    if (ExitCode code = runPartitionedOnRanks(context, func, mesh, inputs, results, rank,
                                              run.mesh.collectiveTimeout))
      return code;
    if (rank != 0)
      return kExitSuccess;
  } else if (run.device == "reference") {
    auto outputs = oracle::evaluate(func, inputs, params);
    if (failed(outputs))
      return kExitRuntimeFault;
    results = std::move(*outputs);
  } else {
    if (!isModule) {
      // Compile in memory: the module bytes `dlc compile -o` would write.
      if (failed(runCompilePipeline(*model->built.module, 0,
                                    /*cpuLayout=*/!isCudaDevice(run.device))))
        return kExitInternalError;
      if (ExitCode code = buildAndLoad(context, *model->built.module, func, run.device,
                                       compiled, params))
        return code;
    }
    std::string error;
    ExitCode code = compiled.run(run.device, inputs, results, error);
    if (code != kExitSuccess)
      return fail(context, code, error);
    // A module partitioned for a mesh (mpirun -np N dlc run M.dlcm): its
    // outputs are whole on every rank; rank 0 reports and writes them.
    if (compiled.rank() != 0)
      return kExitSuccess;
  }

  if (!run.saveParams.empty()) {
    std::string error;
    if (!writeTensorArchive(run.saveParams, params, error))
      return fail(context, kExitBadInput, "--save-params: " + error);
  }
  if (!run.gradients.empty()) {
    std::map<std::string, HostTensor> saved;
    for (auto [i, spec] : llvm::enumerate(outputSpecs))
      saved[spec.name] = results[i].toHost();
    std::string error;
    if (!writeTensorArchive(run.gradients, saved, error))
      return fail(context, kExitBadInput, "--gradients: " + error);
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
  // Outputs named to one archive (.npz, .safetensors) are written together:
  // each file once, holding every output given to it.
  std::map<std::string, std::map<std::string, HostTensor>> byFile;
  for (auto &[name, path] : outputFiles)
    byFile[path][name] = byName[name]->toHost();
  for (auto &[path, tensors] : byFile) {
    std::string error;
    bool written = tensors.size() == 1
                       ? writeTensorFile(path, tensors.begin()->first,
                                         tensors.begin()->second, error)
                       : writeTensorArchive(path, tensors, error);
    if (!written)
      return fail(context, kExitBadInput,
                  "--output " + tensors.begin()->first + ": " + error);
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
