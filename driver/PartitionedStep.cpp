//===- PartitionedStep.cpp - dlc train on the ranks of a mesh -------------===//
//
// `mpirun -np N dlc train M --mesh data=N --parallel data`: the train step
// (forward, backward, update) partitioned for the mesh, its data arguments
// given split (each rank loads its block of every global batch, as the
// loader's rank shards are), run as an SpmdProgram: the gradients'
// all-reduces, the loss average and the global count of a mean loss are
// collectives the partitioner placed. The state (parameters, moments, the
// step) is whole on every rank and kept on the host between steps; rank 0
// writes the checkpoints and logs.
//
//===----------------------------------------------------------------------===//

#include "driver/PartitionedStep.h"

#include "driver/CompiledStep.h"
#include "driver/DriverSupport.h"
#include "driver/ModelLoader.h"
#include "driver/SpmdRunner.h"
#include "ir/DlcDialect.h"
#include "ir/ParamSpec.h"
#include "passes/partition/Partition.h"
#include "runtime/comm/Communicator.h"

#include "llvm/Support/Path.h"

#include <cstdio>
#include <cstdlib>
#include <map>

using namespace mlir;

namespace dlc {

namespace {

using train::Status;

class PartitionedStep : public train::TrainStep {
public:
  ~PartitionedStep() override {
    // What the steps spent where, for bench/scaling (rank 0 only).
    if (comm && comm->rank() == 0 && std::getenv("DLC_SPMD_STATS"))
      std::fprintf(stderr, "dlc: spmd: compute %.3f s, collectives %.3f s\n",
                   program.computeSeconds(), program.collectiveSeconds());
  }
  std::string modelName() const override { return model; }
  std::string lossKind() const override { return loss; }
  train::OptimizerInfo optimizer() const override { return optimizerInfo; }
  std::string execution() const override {
    return "cpu ranks, mesh " + mesh.str();
  }
  const std::vector<data::TensorSpec> &inputs() const override { return dataSpecs; }
  const std::vector<data::TensorSpec> &state() const override { return stateSpecs; }

  Status step(const std::vector<HostTensor> &batch, float learningRate,
              float &lossOut) override {
    std::vector<HostTensor> in;
    size_t next = 0, stateIndex = 0;
    for (const Arg &arg : args) {
      if (arg.kind == Arg::Data) {
        const HostTensor &t = batch[next++];
        if (t.shape() != arg.localShape)
          return Status::failure(
              kExitBadInput, "a batch of " + formatShape(t.shape()) + " rows for '" +
                                 arg.name + "', the partitioned step takes " +
                                 formatShape(arg.localShape) +
                                 " on each rank: train with --drop-last");
        in.push_back(HostTensor::borrow(t.dtype(), t.shape(), t.data(), t.byteSize()));
      } else if (arg.kind == Arg::Lr) {
        HostTensor lr(DType::F32, {});
        lr.setDouble(0, learningRate);
        in.push_back(std::move(lr));
      } else {
        in.push_back(stateValues[stateIndex++]);
      }
    }
    std::vector<HostTensor> out;
    std::string error;
    if (ExitCode c = program.run(in, out, error))
      return Status::failure(c, error);
    lossOut = static_cast<float>(out[0].getDouble(0));
    for (size_t i = 1; i < out.size(); ++i)
      stateValues[resultState[i]] = std::move(out[i]);
    return Status::success();
  }

  Status readState(const std::string &name, HostTensor &out) override {
    auto found = stateIndexOf.find(name);
    if (found == stateIndexOf.end())
      return Status::failure(kExitBadInput, "no state tensor '" + name + "'");
    out = stateValues[found->second];
    return Status::success();
  }
  Status writeState(const std::string &name, const HostTensor &value) override {
    auto found = stateIndexOf.find(name);
    if (found == stateIndexOf.end())
      return Status::failure(kExitBadInput, "no state tensor '" + name + "'");
    stateValues[found->second] = value;
    return Status::success();
  }

  struct Arg {
    enum Kind { Data, Lr, State } kind;
    std::string name;
    std::vector<int64_t> localShape;
  };
  std::string model, loss;
  train::OptimizerInfo optimizerInfo;
  Mesh mesh;
  std::vector<Arg> args;
  std::vector<data::TensorSpec> dataSpecs, stateSpecs;
  std::vector<HostTensor> stateValues;
  std::map<std::string, size_t> stateIndexOf;
  /// Per result: the state index it replaces (result 0 is the loss).
  std::vector<size_t> resultState;
  std::unique_ptr<rt::comm::Communicator> comm;
  /// The partitioned IR the program was cut from (it keeps using it).
  OwningOpRef<ModuleOp> source;
  SpmdProgram program;
};

std::vector<int64_t> shapeOfType(Type type) {
  auto shape = cast<RankedTensorType>(type).getShape();
  return {shape.begin(), shape.end()};
}

} // namespace

ExitCode buildPartitionedTraining(const CommonOptions &options, const TrainOptions &train,
                                  MLIRContext &context, llvm::SourceMgr &sourceMgr,
                                  std::unique_ptr<train::TrainStep> &step, int &rank,
                                  int &worldSize) {
  auto result = std::make_unique<PartitionedStep>();
  PartitionOptions partition;
  if (ExitCode c = parseMeshOptions(context, train.mesh, partition))
    return c;
  result->mesh = partition.mesh;
  if (ExitCode c = openMeshCommunicator(context, result->mesh, result->comm,
                                        train.mesh.collectiveTimeout))
    return c;
  rank = result->comm->rank();
  worldSize = result->comm->size();

  // 1. The train step at the global batch size, partitioned.
  if (llvm::sys::path::extension(options.modelPath) != ".dlg")
    return fail(context, kExitBadInput, "dlc train compiles a .dlg model with a train block");
  ExitCode code;
  std::optional<dlg::Module> ast = parseModelFile(options.modelPath, context, sourceMgr, code);
  if (!ast)
    return code;
  dlg::BuildOptions build;
  build.dims = options.dims;
  if (std::string batchDim = batchDimension(*ast); !batchDim.empty())
    build.dims[batchDim] = train.batchSize;
  build.buildTraining = true;
  build.baseDir = llvm::sys::path::parent_path(options.modelPath).str();
  dlg::BuildResult built = dlg::buildModule(*ast, context, build);
  if (!built.module)
    return kExitBadInput;
  ModuleOp module = *built.module;
  auto trained = trainingFunction(module, entryGraph(module), false);
  if (failed(trained))
    return kExitBadInput;
  func::FuncOp func = *trained;
  if (!train.optimizer.empty() || train.learningRate)
    return fail(context, kExitBadInput,
                "--optimizer and --lr are not applied to a partitioned train step yet: "
                "set them in the train block");
  partition.localArguments = true;
  if (failed(partitionFunction(func, partition)))
    return kExitBadInput;

  // 2. What the loop needs: inputs, state (initial values), optimizer.
  PartitionedStep &s = *result;
  s.model = func->getAttrOfType<StringAttr>("dlc.graph").str();
  s.loss = "loss";
  func.walk([&](Operation *op) {
    if (isa<CrossEntropyOp, MseOp>(op) && s.loss == "loss")
      s.loss = op->getName().stripDialect().str();
  });
  auto cfg = func->getAttrOfType<DictionaryAttr>("dlc.train_step");
  s.optimizerInfo.kind = cfg.getAs<StringAttr>("kind").str();
  s.optimizerInfo.learningRate = cfg.getAs<FloatAttr>("lr").getValueAsDouble();
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto state = func.getArgAttrOfType<StringAttr>(i, "dlc.state");
    auto name = func.getArgAttrOfType<StringAttr>(i, "dlc.name");
    std::vector<int64_t> shape = shapeOfType(arg.getType());
    DType dtype = dtypeOf(cast<RankedTensorType>(arg.getType()).getElementType());
    if (state) {
      s.args.push_back({PartitionedStep::Arg::State, state.str(), shape});
      s.stateIndexOf[state.str()] = s.stateSpecs.size();
      s.stateSpecs.push_back({state.str(), dtype, shape});
      auto init = func.getArgAttrOfType<DictionaryAttr>(i, "dlc.init");
      auto value = initialValue(init, cast<RankedTensorType>(arg.getType()), state.str(), func);
      if (failed(value))
        return kExitBadInput;
      s.stateValues.push_back(std::move(*value));
    } else if (name && name.getValue() == "lr") {
      s.args.push_back({PartitionedStep::Arg::Lr, "lr", shape});
    } else {
      std::string n = name ? name.str() : "arg" + std::to_string(i);
      s.args.push_back({PartitionedStep::Arg::Data, n, shape});
      std::vector<int64_t> perSample(shape.begin() + (shape.empty() ? 0 : 1), shape.end());
      s.dataSpecs.push_back({n, dtype, perSample});
    }
  }
  s.resultState.assign(func.getNumResults(), 0);
  for (unsigned r = 1; r < func.getNumResults(); ++r) {
    auto state = func.getResultAttrOfType<StringAttr>(r, "dlc.state");
    if (!state || !s.stateIndexOf.count(state.str()))
      return fail(context, kExitInternalError, "a train step result without its state");
    s.resultState[r] = s.stateIndexOf[state.str()];
  }

  // 3. Compiled: segments between the collectives.
  if (ExitCode c = s.program.build(context, func, s.mesh, *s.comm))
    return c;
  s.source = std::move(built.module);
  step = std::move(result);
  return kExitSuccess;
}

} // namespace dlc
