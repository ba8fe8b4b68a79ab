//===- CompiledStep.cpp - dlc train's step on compiled modules ------------===//
//
// 1. Compile: build the .dlg with its loss graph at a batch size, derive the
//    evaluation graph from it, differentiate the loss graph into the train
//    step, run the compile pipeline, generate the device's code.
// 2. Run: each module in a session of the runtime (C API); the train
//    step's session owns the state, an evaluation session gets the
//    parameters copied in before each evaluation.
//
//===----------------------------------------------------------------------===//

#include "driver/CompiledStep.h"

#include "codegen/cpu/CpuBackend.h"
#include "driver/DriverSupport.h"
#include "driver/ModelLoader.h"
#include "driver/PlanReport.h"
#include "driver/TensorFiles.h"
#include "driver/train/ModuleStep.h"
#include "driver/train/TrainingJob.h"
#include "ir/DlcDialect.h"
#include "passes/Passes.h"
#include "passes/autodiff/TrainingGraphs.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"

#include <map>
#include <set>

using namespace mlir;

namespace dlc {

using train::Status;

namespace {

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

/// What stays the same across batch sizes: the parsed model, the options,
/// and what the compiled graphs said about themselves.
class Compiler {
public:
  Compiler(const CommonOptions &options, const TrainOptions &train,
           MLIRContext &context, dlg::Module ast, std::string batchDim)
      : options(options), train(train), context(context), ast(std::move(ast)),
        batchDim(std::move(batchDim)) {}

  /// Compiles the train step and evaluation modules for `batch` rows.
  ExitCode compile(int64_t batch, train::ModulePair &out);
  /// What the step needs beyond the modules (set by the first compile).
  train::ModuleStepInfo info() const;

  const CommonOptions &options;
  const TrainOptions &train;
  MLIRContext &context;
  dlg::Module ast;
  std::string batchDim;
  // Read from the IR when the first variant compiles.
  std::string modelName, lossKind;
  train::OptimizerInfo optimizer;
  bool lossIsMean = true;
  int64_t ranks = 1;

private:
  FailureOr<std::vector<uint8_t>> codegen(ModuleOp module, func::FuncOp func,
                                          ExitCode &code);
  void applyOverrides(func::FuncOp loss);
};

void Compiler::applyOverrides(func::FuncOp loss) {
  auto dict = loss->getAttrOfType<DictionaryAttr>("dlc.optimizer");
  OpBuilder b(&context);
  NamedAttrList entries(dict);
  if (!train.optimizer.empty() &&
      dict.getAs<StringAttr>("kind").getValue() != train.optimizer) {
    // Another optimizer: its own defaults (passes/autodiff/Optimizers.h).
    entries = NamedAttrList();
    entries.set("kind", b.getStringAttr(train.optimizer));
  }
  if (train.learningRate)
    entries.set("lr", b.getF64FloatAttr(*train.learningRate));
  loss->setAttr("dlc.optimizer", entries.getDictionary(&context));
}

FailureOr<std::vector<uint8_t>> Compiler::codegen(ModuleOp module, func::FuncOp func,
                                                  ExitCode &code) {
  code = kExitInternalError;
  if (train.device == "cpu") {
    codegen::CpuFailure why;
    std::string message;
    auto built = codegen::buildCpuModule(func, why, message);
    if (failed(built)) {
      code = why == codegen::CpuFailure::Internal ? kExitInternalError
                                                  : kExitBadInput;
      if (!message.empty())
        fail(context, code, message);
      return failure();
    }
    return std::move(built->bytes);
  }
  bool emu = train.device == "cuda-emu";
  std::vector<std::string> archs;
  if (!emu)
    archs = {"sm_80", "sm_90"};
  auto built = buildCuda(context, module, func, archs, emu, code);
  if (failed(built))
    return failure();
  return std::move(built->bytes);
}

train::ModuleStepInfo Compiler::info() const {
  train::ModuleStepInfo info;
  info.modelName = modelName;
  info.lossKind = lossKind;
  info.optimizer = optimizer;
  info.lossIsMean = lossIsMean;
  info.device = train.device;
  info.batchSize = train.batchSize;
  info.mesh = train.mesh.mesh;
  info.ranks = ranks;
  return info;
}

ExitCode Compiler::compile(int64_t batch, train::ModulePair &out) {
  // 1. The model with the loss graph, the batch dimension bound.
  dlg::BuildOptions build = buildOptionsFor(options);
  if (!batchDim.empty())
    build.dims[batchDim] = batch;
  build.buildTraining = true;
  build.baseDir = llvm::sys::path::parent_path(options.modelPath).str();
  dlg::BuildResult built = dlg::buildModule(ast, context, build);
  if (!built.module)
    return kExitBadInput;
  ModuleOp module = *built.module;
  func::FuncOp loss;
  for (auto f : module.getOps<func::FuncOp>())
    if (f->hasAttr("dlc.optimizer") && !loss)
      loss = f;
  applyOverrides(loss);
  func::FuncOp eval = buildEvalGraph(loss);
  for (auto f : llvm::to_vector(module.getOps<func::FuncOp>()))
    if (f != loss && f != eval)
      f.erase();

  // What the graphs say about themselves, for the loop.
  Value lossValue = loss.getBody().front().getTerminator()->getOperand(0);
  Operation *lossOp = lossValue.getDefiningOp();
  modelName = loss->getAttrOfType<StringAttr>("dlc.graph").str();
  lossKind = lossOp ? lossOp->getName().stripDialect().str() : "loss";
  if (auto ce = dyn_cast_or_null<CrossEntropyOp>(lossOp))
    lossIsMean = ce.getReduction() == LossReduction::mean;
  if (auto mse = dyn_cast_or_null<MseOp>(lossOp))
    lossIsMean = mse.getReduction() == LossReduction::mean;
  auto dict = loss->getAttrOfType<DictionaryAttr>("dlc.optimizer");
  optimizer.kind = dict.getAs<StringAttr>("kind").str();

  // 2. The train step, then both through the compile pipeline.
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(createDlcDifferentiate());
  if (failed(pm.run(module)))
    return kExitBadInput;
  if (auto cfg = loss->getAttrOfType<DictionaryAttr>("dlc.train_step"))
    if (auto lr = cfg.getAs<FloatAttr>("lr"))
      optimizer.learningRate = lr.getValueAsDouble();
  if (optimizer.learningRate == 0)
    optimizer.learningRate = optimizer.kind == "sgd" ? 1e-2 : 1e-3;
  // A job for a mesh: the train step partitioned, each rank given its block
  // of the batch; the runtime runs its collectives (the evaluation graph
  // stays whole).
  if (!train.mesh.mesh.empty()) {
    if (train.mesh.zero)
      return fail(context, kExitBadInput,
                  "--zero 1 is not compiled into a training job yet: train with "
                  "`mpirun dlc train --mesh ... --zero 1`");
    Mesh mesh;
    if (ExitCode c = partitionForMesh(context, loss, train.mesh, &mesh, /*localArguments=*/true))
      return c;
    ranks = mesh.size();
  }
  if (failed(runCompilePipeline(module, train.memoryBudget.value_or(0))))
    return kExitInternalError;

  // 3. Code.
  ExitCode code;
  auto trainBytes = codegen(module, loss, code);
  if (failed(trainBytes))
    return code;
  auto evalBytes = codegen(module, eval, code);
  if (failed(evalBytes))
    return code;
  out.train = std::move(*trainBytes);
  out.eval = std::move(*evalBytes);
  return kExitSuccess;
}

} // namespace

std::string batchDimension(const dlg::Module &ast) {
  const dlg::Graph &graph = ast.graphs.front();
  if (graph.inputs.empty() || graph.inputs.front().type.dims.empty())
    return "";
  const dlg::Dim &d = graph.inputs.front().type.dims.front();
  return d.isSymbolic() ? d.symbol() : "";
}

ExitCode buildTrainingModel(const CommonOptions &options, int64_t batchRows,
                            MLIRContext &context, llvm::SourceMgr &sourceMgr,
                            dlg::BuildResult &built) {
  if (llvm::sys::path::extension(options.modelPath) != ".dlg")
    return fail(context, kExitBadInput, "dlc train compiles a .dlg model with a train block");
  ExitCode code;
  std::optional<dlg::Module> ast = parseModelFile(options.modelPath, context, sourceMgr, code);
  if (!ast)
    return code;
  dlg::BuildOptions build = buildOptionsFor(options);
  if (std::string batchDim = batchDimension(*ast); !batchDim.empty())
    build.dims[batchDim] = batchRows;
  build.buildTraining = true;
  build.baseDir = llvm::sys::path::parent_path(options.modelPath).str();
  built = dlg::buildModule(*ast, context, build);
  return built.module ? kExitSuccess : kExitBadInput;
}

/// Parses the model and checks the batch dimension against --batch-size.
static ExitCode makeCompiler(const CommonOptions &options, const TrainOptions &train,
                             MLIRContext &context, llvm::SourceMgr &sourceMgr,
                             std::shared_ptr<Compiler> &compiler) {
  if (llvm::sys::path::extension(options.modelPath) != ".dlg")
    return fail(context, kExitBadInput,
                "dlc train compiles a .dlg model with a train block; '" +
                    options.modelPath + "' is not one");
  ExitCode code;
  std::optional<dlg::Module> ast =
      parseModelFile(options.modelPath, context, sourceMgr, code);
  if (!ast)
    return code;
  if (ast->trains.empty())
    return fail(context, kExitBadInput,
                "'" + options.modelPath +
                    "' has no train block: `dlc train` needs one naming the "
                    "loss and the optimizer");
  std::string batchDim = batchDimension(*ast);
  if (!batchDim.empty() && options.dims.count(batchDim) &&
      options.dims.at(batchDim) != train.batchSize)
    return fail(context, kExitBadInput,
                "--dim " + batchDim + "=" + std::to_string(options.dims.at(batchDim)) +
                    " disagrees with --batch-size " + std::to_string(train.batchSize) +
                    " (the batch dimension is bound to the batch size)");
  compiler = std::make_shared<Compiler>(options, train, context, std::move(*ast),
                                        batchDim);
  return kExitSuccess;
}

ExitCode buildCompiledTraining(const CommonOptions &options,
                               const TrainOptions &train, MLIRContext &context,
                               llvm::SourceMgr &sourceMgr,
                               std::unique_ptr<train::TrainStep> &step,
                               std::unique_ptr<train::Evaluator> &evaluator) {
  std::shared_ptr<Compiler> compiler;
  if (ExitCode c = makeCompiler(options, train, context, sourceMgr, compiler))
    return c;
  train::ModulePair first;
  if (ExitCode c = compiler->compile(train.batchSize, first))
    return c;
  auto source = [compiler](int64_t rows, train::ModulePair &out) {
    if (ExitCode code = compiler->compile(rows, out))
      return Status::failure(code, "compiling the train step for a batch of " +
                                       std::to_string(rows));
    return Status::success();
  };
  Status s = train::openModuleTraining(compiler->info(), std::move(first), source,
                                       step, evaluator);
  if (!s.ok())
    return fail(context, s.code, s.message);
  return kExitSuccess;
}

ExitCode writeCompiledTrainingJob(
    const CommonOptions &options, const TrainOptions &train, MLIRContext &context,
    llvm::SourceMgr &sourceMgr, const std::string &dir,
    const std::function<ExitCode(const std::vector<data::TensorSpec> &,
                                 std::set<int64_t> &)> &batchSizes) {
  std::shared_ptr<Compiler> compiler;
  if (ExitCode c = makeCompiler(options, train, context, sourceMgr, compiler))
    return c;
  std::map<int64_t, train::ModulePair> modules;
  if (ExitCode c = compiler->compile(train.batchSize, modules[train.batchSize]))
    return c;
  std::vector<data::TensorSpec> inputs;
  if (Status s = train::moduleDataInputs(modules[train.batchSize].train, inputs); !s.ok())
    return fail(context, s.code, s.message);
  std::set<int64_t> rows;
  if (ExitCode c = batchSizes(inputs, rows))
    return c;
  for (int64_t r : rows)
    if (!modules.count(r))
      if (ExitCode c = compiler->compile(r, modules[r]))
        return c;
  std::string error;
  if (!train::writeTrainingJob(dir, compiler->info(), modules, error))
    return fail(context, kExitBadInput, error);
  return kExitSuccess;
}

ExitCode exportTrainedModel(const CommonOptions &options,
                            const TrainOptions &train, train::TrainStep &step,
                            MLIRContext &context, llvm::SourceMgr &sourceMgr) {
  // The trained state, through a checkpoint-like file that --params reads
  // (bindParameterFile ignores the moments and the step).
  std::map<std::string, HostTensor> state;
  for (const data::TensorSpec &spec : step.state()) {
    HostTensor value;
    if (Status s = step.readState(spec.name, value); !s.ok())
      return fail(context, s.code, "--export: " + s.message);
    state.emplace(spec.name, std::move(value));
  }
  llvm::SmallString<128> params;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "dlc-export", "safetensors", params))
    return fail(context, kExitRuntimeFault,
                "--export: cannot create a temporary file: " + ec.message());
  llvm::FileRemover removeParams(params);
  std::string error;
  if (!writeTensorArchive(params.str().str(), state, error))
    return fail(context, kExitRuntimeFault, "--export: " + error);

  CommonOptions exported = options;
  ExitCode code;
  std::optional<dlg::Module> ast =
      parseModelFile(options.modelPath, context, sourceMgr, code);
  if (!ast)
    return code;
  std::string batchDim = batchDimension(*ast);
  if (!batchDim.empty())
    exported.dims[batchDim] = train.batchSize;
  CompileOptions compile;
  compile.output = train.exportPath;
  compile.target = train.device == "cpu" ? "cpu" : "cuda:sm_80,sm_90";
  compile.params = params.str().str();
  return runCompile(exported, compile, context, sourceMgr);
}

} // namespace dlc
