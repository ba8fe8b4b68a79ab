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
#include "ir/DlcDialect.h"
#include "passes/Passes.h"
#include "passes/autodiff/TrainingGraphs.h"

#include "dlc/runtime.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <map>
#include <set>
#include <thread>

using namespace mlir;

namespace dlc {

using train::Status;

namespace {

//===----------------------------------------------------------------------===//
// DLPack
//===----------------------------------------------------------------------===//

DLDataType dlpackOf(DType dtype) {
  switch (dtype) {
  case DType::F64: return {kDLFloat, 64, 1};
  case DType::F32: return {kDLFloat, 32, 1};
  case DType::F16: return {kDLFloat, 16, 1};
  case DType::BF16: return {kDLBfloat, 16, 1};
  case DType::I64: return {kDLInt, 64, 1};
  case DType::I32: return {kDLInt, 32, 1};
  case DType::I8: return {kDLInt, 8, 1};
  case DType::U8: return {kDLUInt, 8, 1};
  case DType::I1: return {DLC_DL_BOOL, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

DType dtypeOfDLPack(DLDataType t) {
  switch (t.code) {
  case kDLFloat:
    return t.bits == 64 ? DType::F64 : t.bits == 32 ? DType::F32 : DType::F16;
  case kDLBfloat:
    return DType::BF16;
  case kDLInt:
    return t.bits == 64 ? DType::I64 : t.bits == 32 ? DType::I32 : DType::I8;
  case kDLUInt:
    return DType::U8;
  default:
    return DType::I1;
  }
}

/// A host tensor as a DLTensor viewing its bytes (which must outlive it).
struct View {
  DLTensor tensor{};
  std::vector<int64_t> shape;
  explicit View(const HostTensor &t) : shape(t.shape()) {
    tensor.data = const_cast<uint8_t *>(t.data());
    tensor.device = {kDLCPU, 0};
    tensor.ndim = static_cast<int32_t>(shape.size());
    tensor.dtype = dlpackOf(t.dtype());
    tensor.shape = shape.data();
  }
};

/// A runtime status as the loop's; consumes it.
Status statusOf(dlc_status_t status, const std::string &what) {
  if (!status)
    return Status::success();
  Status s = Status::failure(static_cast<ExitCode>(dlc_status_exit_code(status)),
                             what + ": " + dlc_status_message(status));
  dlc_status_free(status);
  return s;
}

//===----------------------------------------------------------------------===//
// A compiled module in a session
//===----------------------------------------------------------------------===//

class Session {
public:
  ~Session() {
    dlc_session_destroy(session);
    dlc_module_release(module);
  }

  static Status open(const std::vector<uint8_t> &bytes, const std::string &device,
                     std::unique_ptr<Session> &out) {
    auto s = std::make_unique<Session>();
    if (Status st = statusOf(dlc_module_load_memory(bytes.data(), bytes.size(),
                                                    &s->module),
                             "the compiled train module does not load");
        !st.ok())
      return st;
    if (Status st = statusOf(dlc_session_create(s->module, device.c_str(), nullptr,
                                                &s->session),
                             "device '" + device + "'");
        !st.ok())
      return st;
    auto infos = [&](size_t n, auto query) {
      std::vector<data::TensorSpec> specs;
      for (size_t i = 0; i < n; ++i) {
        dlc_tensor_info_t info;
        dlc_status_free(query(s->module, i, &info));
        specs.push_back({info.name, dtypeOfDLPack(info.dtype),
                         std::vector<int64_t>(info.shape, info.shape + info.ndim)});
      }
      return specs;
    };
    s->inputs = infos(dlc_module_input_count(s->module), dlc_module_input_info);
    s->outputs = infos(dlc_module_output_count(s->module), dlc_module_output_info);
    s->state = infos(dlc_module_state_count(s->module), dlc_module_state_info);
    for (size_t i = 0; i < s->state.size(); ++i)
      s->stateIndex[s->state[i].name] = i;
    out = std::move(s);
    return Status::success();
  }

  /// Runs on host tensors; allocates the outputs.
  Status run(const std::vector<const HostTensor *> &in, std::vector<HostTensor> &out) {
    std::vector<View> inViews, outViews;
    inViews.reserve(in.size());
    for (const HostTensor *t : in)
      inViews.emplace_back(*t);
    out.clear();
    for (const data::TensorSpec &spec : outputs)
      out.emplace_back(spec.dtype, spec.shape);
    outViews.reserve(out.size());
    for (HostTensor &t : out)
      outViews.emplace_back(t);
    std::vector<const DLTensor *> inPtrs, outPtrs;
    for (View &v : inViews)
      inPtrs.push_back(&v.tensor);
    for (View &v : outViews)
      outPtrs.push_back(&v.tensor);
    return statusOf(dlc_session_run(session, inPtrs.data(), inPtrs.size(),
                                    outPtrs.data(), outPtrs.size()),
                    "running the compiled step");
  }

  Status readState(const std::string &name, HostTensor &out) {
    auto found = stateIndex.find(name);
    if (found == stateIndex.end())
      return Status::failure(kExitBadInput, "no state tensor '" + name + "'");
    const data::TensorSpec &spec = state[found->second];
    out = HostTensor(spec.dtype, spec.shape);
    View view(out);
    return statusOf(dlc_session_read_state(session, found->second, &view.tensor),
                    "reading state '" + name + "'");
  }

  Status writeState(const std::string &name, const HostTensor &value) {
    auto found = stateIndex.find(name);
    if (found == stateIndex.end())
      return Status::failure(kExitBadInput, "no state tensor '" + name + "'");
    View view(value);
    return statusOf(dlc_session_write_state(session, found->second, &view.tensor),
                    "writing state '" + name + "'");
  }

  /// Every state tensor of `from` that this session has too.
  Status copyStateFrom(Session &from) {
    for (const data::TensorSpec &spec : state) {
      HostTensor value;
      if (Status s = from.readState(spec.name, value); !s.ok())
        return s;
      if (Status s = writeState(spec.name, value); !s.ok())
        return s;
    }
    return Status::success();
  }

  dlc_module_t *module = nullptr;
  dlc_session_t *session = nullptr;
  std::vector<data::TensorSpec> inputs, outputs, state;
  std::map<std::string, size_t> stateIndex;
};

/// The train step and evaluation modules of one batch size.
struct Variant {
  std::unique_ptr<Session> train, eval;
};

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

  /// Compiles both modules for `batch` rows and opens their sessions.
  ExitCode compile(int64_t batch, Variant &out);

  const CommonOptions &options;
  const TrainOptions &train;
  MLIRContext &context;
  dlg::Module ast;
  std::string batchDim;
  // Read from the IR when the first variant compiles.
  std::string modelName, lossKind;
  train::OptimizerInfo optimizer;
  bool lossIsMean = true;

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

ExitCode Compiler::compile(int64_t batch, Variant &out) {
  // 1. The model with the loss graph, the batch dimension bound.
  dlg::BuildOptions build;
  build.dims = options.dims;
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
  if (failed(runCompilePipeline(module, train.memoryBudget.value_or(0))))
    return kExitInternalError;

  // 3. Code, modules, sessions.
  ExitCode code;
  auto trainBytes = codegen(module, loss, code);
  if (failed(trainBytes))
    return code;
  auto evalBytes = codegen(module, eval, code);
  if (failed(evalBytes))
    return code;
  for (auto [bytes, session] : {std::make_pair(&*trainBytes, &out.train),
                                std::make_pair(&*evalBytes, &out.eval)}) {
    Status s = Session::open(*bytes, train.device, *session);
    if (!s.ok())
      return fail(context, s.code, s.message);
  }
  return kExitSuccess;
}

//===----------------------------------------------------------------------===//
// The step and the evaluator
//===----------------------------------------------------------------------===//

/// Per-sample specs of a module's data inputs (all but `lr`).
std::vector<data::TensorSpec> dataInputs(const Session &session) {
  std::vector<data::TensorSpec> specs;
  for (const data::TensorSpec &spec : session.inputs) {
    if (spec.name == "lr")
      continue;
    data::TensorSpec perSample = spec;
    perSample.shape.erase(perSample.shape.begin());
    specs.push_back(perSample);
  }
  return specs;
}

/// The rows of a batch (its tensors' leading dimension).
int64_t rowsOf(const std::vector<HostTensor> &batch) {
  return batch.empty() || batch[0].shape().empty() ? 0 : batch[0].shape()[0];
}

class CompiledStep : public train::TrainStep {
public:
  CompiledStep(std::shared_ptr<Compiler> compiler,
               std::shared_ptr<std::map<int64_t, Variant>> variants, int64_t batch)
      : compiler(std::move(compiler)), variants(std::move(variants)), batch(batch) {
    Session &main = *(*this->variants)[batch].train;
    specs = dataInputs(main);
    state_ = main.state;
  }

  std::string modelName() const override { return compiler->modelName; }
  std::string lossKind() const override { return compiler->lossKind; }
  train::OptimizerInfo optimizer() const override { return compiler->optimizer; }
  std::string execution() const override {
    // The sessions are created with the runtime's default: one CPU thread
    // per core.
    const std::string &device = compiler->train.device;
    if (device != "cpu")
      return device;
    return "cpu, " + std::to_string(std::max(1u, std::thread::hardware_concurrency())) +
           " threads";
  }
  const std::vector<data::TensorSpec> &inputs() const override { return specs; }
  const std::vector<data::TensorSpec> &state() const override { return state_; }

  Status step(const std::vector<HostTensor> &data, float learningRate,
              float &loss) override {
    int64_t rows = rowsOf(data);
    Session *session = nullptr;
    if (Status s = sessionFor(rows, session); !s.ok())
      return s;
    Session &main = *(*variants)[batch].train;
    // Another batch size runs on its own module: the state goes there and back.
    if (session != &main)
      if (Status s = session->copyStateFrom(main); !s.ok())
        return s;
    HostTensor lr(DType::F32, {});
    lr.setDouble(0, learningRate);
    std::vector<const HostTensor *> in;
    size_t next = 0;
    for (const data::TensorSpec &spec : session->inputs)
      in.push_back(spec.name == "lr" ? &lr : &data[next++]);
    std::vector<HostTensor> out;
    if (Status s = session->run(in, out); !s.ok())
      return s;
    loss = static_cast<float>(out[0].getDouble(0));
    if (session != &main)
      return main.copyStateFrom(*session);
    return Status::success();
  }

  Status readState(const std::string &name, HostTensor &out) override {
    return (*variants)[batch].train->readState(name, out);
  }
  Status writeState(const std::string &name, const HostTensor &value) override {
    return (*variants)[batch].train->writeState(name, value);
  }

  /// The train module of `rows` rows, compiled on first use.
  Status sessionFor(int64_t rows, Session *&out) {
    auto found = variants->find(rows);
    if (found == variants->end()) {
      Variant v;
      if (ExitCode code = compiler->compile(rows, v))
        return Status::failure(code, "compiling the train step for a batch of " +
                                         std::to_string(rows));
      found = variants->emplace(rows, std::move(v)).first;
    }
    out = found->second.train.get();
    return Status::success();
  }

  std::shared_ptr<Compiler> compiler;
  std::shared_ptr<std::map<int64_t, Variant>> variants;
  int64_t batch;
  std::vector<data::TensorSpec> specs, state_;
};

class CompiledEvaluator : public train::Evaluator {
public:
  explicit CompiledEvaluator(CompiledStep &step) : step(step) {}

  Status loadParameters(train::TrainStep &) override {
    parametersLoaded.clear();
    return Status::success();
  }

  Status evaluate(const std::vector<HostTensor> &data, double &lossSum,
                  int64_t &correct) override {
    int64_t rows = rowsOf(data);
    Session *trainSession = nullptr;
    if (Status s = step.sessionFor(rows, trainSession); !s.ok())
      return s;
    Session &eval = *(*step.variants)[rows].eval;
    // The parameters, from the train step's session, once per evaluation
    // and batch size.
    if (!parametersLoaded.count(rows)) {
      if (Status s = eval.copyStateFrom(*(*step.variants)[step.batch].train); !s.ok())
        return s;
      parametersLoaded.insert(rows);
    }
    std::vector<const HostTensor *> in;
    for (const HostTensor &t : data)
      in.push_back(&t);
    std::vector<HostTensor> out;
    if (Status s = eval.run(in, out); !s.ok())
      return s;
    double loss = out[0].getDouble(0);
    lossSum = step.compiler->lossIsMean ? loss * double(rows) : loss;
    correct = out.size() > 1 ? static_cast<int64_t>(std::llround(out[1].getDouble(0))) : 0;
    return Status::success();
  }

  CompiledStep &step;
  std::set<int64_t> parametersLoaded;
};

/// The symbolic dimension that counts examples: the leading dimension of
/// the entry graph's first input; empty when it is a number.
std::string batchDimension(const dlg::Module &ast) {
  const dlg::Graph &graph = ast.graphs.front();
  if (graph.inputs.empty() || graph.inputs.front().type.dims.empty())
    return "";
  const dlg::Dim &d = graph.inputs.front().type.dims.front();
  return d.isSymbolic() ? d.symbol() : "";
}

} // namespace

ExitCode buildCompiledTraining(const CommonOptions &options,
                               const TrainOptions &train, MLIRContext &context,
                               llvm::SourceMgr &sourceMgr,
                               std::unique_ptr<train::TrainStep> &step,
                               std::unique_ptr<train::Evaluator> &evaluator) {
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
  auto compiler = std::make_shared<Compiler>(options, train, context,
                                             std::move(*ast), batchDim);
  auto variants = std::make_shared<std::map<int64_t, Variant>>();
  Variant first;
  if (ExitCode c = compiler->compile(train.batchSize, first))
    return c;
  variants->emplace(train.batchSize, std::move(first));
  auto compiled = std::make_unique<CompiledStep>(compiler, variants, train.batchSize);
  evaluator = std::make_unique<CompiledEvaluator>(*compiled);
  step = std::move(compiled);
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
