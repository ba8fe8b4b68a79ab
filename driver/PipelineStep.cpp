//===- PipelineStep.cpp - dlc train and run on pipeline stages ------------===//
//
// The train step is built for one micro-batch (the batch size divided by
// the data replicas and the micro-batches), its loss graph cut into stages
// before dlc-differentiate (so that each op's backward runs on its stage),
// and this rank's stage run by a PipelineProgram. Every rank keeps every
// state tensor, but a step updates only those its stage updates; before a
// checkpoint, the stages send theirs to rank 0, which writes one
// checkpoint holding every parameter (what one process would write). The
// loss is the mean over micro-batches and data replicas, the same on every
// rank.
//
//===----------------------------------------------------------------------===//

#include "driver/PipelineStep.h"

#include "driver/CompiledStep.h"
#include "driver/DriverSupport.h"
#include "driver/HostCollectives.h"
#include "driver/ModelLoader.h"
#include "driver/PipelineProgram.h"
#include "driver/SpmdRunner.h"
#include "driver/StepSignature.h"
#include "ir/DlcDialect.h"
#include "ir/ParamSpec.h"
#include "passes/analysis/CostModel.h"
#include "passes/partition/Partition.h"
#include "passes/partition/Pipeline.h"
#include "runtime/comm/Communicator.h"

#include "llvm/Support/Path.h"

#include <chrono>
#include <cstdio>

using namespace mlir;

namespace dlc {

namespace {

using train::Status;

/// The mesh, schedule and micro-batches of `options`, checked.
ExitCode parsePipelineOptions(MLIRContext &context, const MeshOptions &options, Mesh &mesh,
                              PipelineSchedule &schedule) {
  PartitionOptions partition;
  if (ExitCode c = parseMeshOptions(context, options, partition))
    return c;
  mesh = partition.mesh;
  if (mesh.axisIndex("pipe") < 0)
    return fail(context, kExitBadInput,
                "--parallel pipeline cuts the graph over the mesh axis 'pipe' (--mesh pipe=P "
                "or data=D,pipe=P)");
  for (const auto &[axis, size] : mesh.axes())
    if (axis != "pipe" && axis != "data")
      return fail(context, kExitBadInput,
                  "--parallel pipeline runs on the axes 'pipe' and 'data'; '" + axis +
                      "' (tensor parallelism inside a stage) is not run yet");
  if (partition.preset.tensor || partition.shardOptimizerState)
    return fail(context, kExitBadInput,
                "--parallel pipeline does not combine with tensor parallelism or --zero yet");
  if (options.schedule == "1f1b")
    schedule = PipelineSchedule::OneForwardOneBackward;
  else if (options.schedule == "gpipe")
    schedule = PipelineSchedule::GPipe;
  else
    return fail(context, kExitBadInput,
                "--schedule must be 1f1b or gpipe, not '" + options.schedule + "'");
  if (options.microbatches < 1)
    return fail(context, kExitBadInput, "--microbatches must be at least 1");
  return kExitSuccess;
}


class PipelineStep : public train::TrainStep {
public:
  ~PipelineStep() override {
    // The schedule's idle time, measured on this rank beside its ideal.
    if (comm && steps > 0)
      std::fprintf(stderr,
                   "dlc: pipeline stage %lld of %lld (rank %d): %lld steps, compute %.3f s, "
                   "waiting %.3f s, %.3f ms a step after the first; bubble %.1f%% measured, "
                   "(P-1)/(M+P-1) = %.1f%%\n",
                   static_cast<long long>(program.stage()),
                   static_cast<long long>(program.stages()), comm->rank(),
                   static_cast<long long>(steps), program.computeSeconds(),
                   program.waitSeconds(),
                   steps > 1 ? 1e3 * timedSeconds / double(steps - 1) : 0,
                   100 * program.measuredBubble(), 100 * program.idealBubble());
  }
  std::string modelName() const override { return signature.model; }
  std::string lossKind() const override { return signature.loss; }
  train::OptimizerInfo optimizer() const override { return signature.optimizer; }
  std::string execution() const override {
    return "cpu ranks, mesh " + mesh.str() + ", " + std::to_string(microbatches) +
           " micro-batches, " + scheduleName;
  }
  const std::vector<data::TensorSpec> &inputs() const override { return signature.data; }
  const std::vector<data::TensorSpec> &state() const override { return signature.state; }
  int rank() const override { return comm->rank(); }
  int worldSize() const override { return comm->size(); }
  int dataRank() const override { return static_cast<int>(program.dataIndex()); }
  int dataRanks() const override { return static_cast<int>(program.dataSize()); }

  Status step(const std::vector<HostTensor> &batch, float learningRate,
              float &lossOut) override {
    auto start = std::chrono::steady_clock::now();
    // This rank's block of the batch, cut into micro-batches (per argument:
    // empty but for the data).
    std::vector<std::vector<HostTensor>> slices(signature.arguments.size());
    size_t next = 0;
    for (auto [i, arg] : llvm::enumerate(signature.arguments)) {
      if (arg.kind != StepArgument::Data)
        continue;
      const HostTensor &t = batch[next++];
      std::vector<int64_t> rows = arg.shape;
      if (!rows.empty())
        rows[0] *= microbatches;
      if (t.shape() != rows)
        return Status::failure(kExitBadInput,
                               "a batch of " + formatShape(t.shape()) + " for '" + arg.name +
                                   "', the pipeline takes " + formatShape(rows) +
                                   " on each data replica: train with --drop-last");
      for (int64_t m = 0; m < microbatches; ++m)
        slices[i].push_back(blockOf(t, 0, m, microbatches));
    }
    HostTensor lr(DType::F32, {});
    lr.setDouble(0, learningRate);
    auto argument = [&](unsigned i, int64_t m) -> HostTensor {
      const StepArgument &arg = signature.arguments[i];
      const HostTensor *t = &lr;
      if (arg.kind == StepArgument::Data)
        t = &slices[i][m < 0 ? 0 : m];
      else if (arg.kind == StepArgument::State)
        t = &values[arg.state];
      return HostTensor::borrow(t->dtype(), t->shape(), t->data(), t->byteSize());
    };
    std::vector<std::vector<HostTensor>> results;
    std::string error;
    if (ExitCode c = program.run(argument, results, error))
      return Status::failure(c, error);
    for (size_t r = 1; r < results.size(); ++r)
      if (!results[r].empty())
        values[signature.resultState[r]] = std::move(results[r].back());
    // The loss: the last stage's mean over its micro-batches, averaged over
    // the data replicas, on every rank.
    double loss = 0;
    for (const HostTensor &l : results[0])
      loss += l.getDouble(0) / static_cast<double>(results[0].size() * program.dataSize());
    if (rt::Status s = comm->allReduce(&loss, 1, DType::F64, rt::comm::ReduceOp::kSum); !s.ok())
      return Status::failure(kExitRuntimeFault, s.message());
    lossOut = static_cast<float>(loss);
    // The step ends with the loss's all-reduce: the same on every rank.
    if (steps++ > 0)
      timedSeconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return Status::success();
  }

  /// Rank 0 (stage 0 of replica 0) gets the state the other stages update.
  Status beforeCheckpoint() override {
    const PipelineSplit &split = program.split();
    int me = comm->rank();
    for (size_t r = 1; r < split.resultStages.size(); ++r) {
      if (split.resultStages[r].empty() || split.resultStages[r].front() == 0)
        continue;
      int holder = static_cast<int>(program.rankOf(split.resultStages[r].front(), 0));
      HostTensor &value = values[signature.resultState[r]];
      rt::Status s;
      if (me == holder)
        s = comm->send(value.data(), static_cast<uint64_t>(value.numel()), value.dtype(), 0);
      else if (me == 0)
        s = comm->recv(value.mutableData(), static_cast<uint64_t>(value.numel()), value.dtype(),
                       holder);
      if (!s.ok())
        return Status::failure(kExitRuntimeFault, s.message());
    }
    return Status::success();
  }
  Status readState(const std::string &name, HostTensor &out) override {
    auto found = signature.stateIndexOf.find(name);
    if (found == signature.stateIndexOf.end())
      return Status::failure(kExitBadInput, "no state tensor '" + name + "'");
    out = values[found->second];
    return Status::success();
  }
  Status writeState(const std::string &name, const HostTensor &value) override {
    auto found = signature.stateIndexOf.find(name);
    if (found == signature.stateIndexOf.end())
      return Status::failure(kExitBadInput, "no state tensor '" + name + "'");
    values[found->second] = value;
    return Status::success();
  }

  Mesh mesh;
  int64_t microbatches = 1;
  std::string scheduleName;
  StepSignature signature;
  /// Every state tensor, whole (current where this stage updates it).
  std::vector<HostTensor> values;
  int64_t steps = 0;
  /// Wall seconds of the steps after the first (warm-up).
  double timedSeconds = 0;
  std::unique_ptr<rt::comm::Communicator> comm;
  OwningOpRef<ModuleOp> source;
  PipelineProgram program;
};

} // namespace

ExitCode buildPipelineTraining(const CommonOptions &options, const TrainOptions &train,
                               MLIRContext &context, llvm::SourceMgr &sourceMgr,
                               std::unique_ptr<train::TrainStep> &step, int &rank,
                               int &worldSize) {
  auto result = std::make_unique<PipelineStep>();
  PipelineStep &s = *result;
  PipelineSchedule schedule;
  if (ExitCode c = parsePipelineOptions(context, train.mesh, s.mesh, schedule))
    return c;
  s.microbatches = train.mesh.microbatches;
  s.scheduleName = train.mesh.schedule;
  if (!train.optimizer.empty() || train.learningRate)
    return fail(context, kExitBadInput,
                "--optimizer and --lr are not applied to a partitioned train step yet: "
                "set them in the train block");
  int64_t pipeAxis = s.mesh.axisIndex("pipe"), dataAxis = s.mesh.axisIndex("data");
  int64_t stages = s.mesh.axes()[pipeAxis].second;
  int64_t replicas = dataAxis < 0 ? 1 : s.mesh.axes()[dataAxis].second;
  if (train.batchSize % (replicas * s.microbatches) != 0)
    return fail(context, kExitBadInput,
                "--batch-size " + std::to_string(train.batchSize) + " does not divide into " +
                    std::to_string(replicas) + " data replicas of " +
                    std::to_string(s.microbatches) + " micro-batches");
  if (ExitCode c = openMeshCommunicator(context, s.mesh, s.comm, train.mesh.collectiveTimeout))
    return c;
  rank = s.comm->rank();
  worldSize = s.comm->size();

  // 1. The train step of one micro-batch, its stages decided on the loss
  //    graph so that dlc-differentiate puts each op's backward on its stage.
  dlg::BuildResult built;
  if (ExitCode c = buildTrainingModel(options, train.batchSize / (replicas * s.microbatches),
                                      context, sourceMgr, built))
    return c;
  ModuleOp module = *built.module;
  func::FuncOp graph = entryGraph(module);
  auto loss = module.lookupSymbol<func::FuncOp>(graph.getSymName().str() + "_train");
  if (!loss)
    return fail(context, kExitBadInput,
                "graph '" + graph.getSymName().str() + "' has no train block");
  if (auto clip = cast<DictionaryAttr>(loss->getAttr("dlc.optimizer")).get("clip_norm"))
    if (cast<FloatAttr>(clip).getValueAsDouble() > 0)
      return fail(context, kExitBadInput,
                  "--parallel pipeline: gradient clipping (clip_norm) needs the norm over "
                  "every stage's gradients, which is not computed across stages yet");
  if (failed(assignForwardStages(loss, pipelineCut(stages))))
    return kExitBadInput;
  auto trained = trainingFunction(module, graph, false);
  if (failed(trained))
    return kExitBadInput;
  func::FuncOp func = *trained;
  if (failed(finishPipelineStages(func, stages)))
    return kExitInternalError;
  SmallVector<Type> types(func.getArgumentTypes());
  if (ExitCode c = readStepSignature(context, func, types, s.signature))
    return c;
  s.values = s.signature.initial;

  // 2. This rank's stage, compiled.
  if (ExitCode c = s.program.build(context, func, s.mesh, *s.comm, schedule, s.microbatches))
    return c;
  s.source = std::move(built.module);
  step = std::move(result);
  return kExitSuccess;
}

ExitCode runPipelineOnRanks(MLIRContext &context, func::FuncOp func, const MeshOptions &options,
                            const std::vector<oracle::Tensor> &inputs,
                            std::vector<oracle::Tensor> &outputs, int &rank) {
  Mesh mesh;
  PipelineSchedule schedule;
  if (ExitCode c = parsePipelineOptions(context, options, mesh, schedule))
    return c;
  if (mesh.axes().size() != 1)
    return fail(context, kExitBadInput, "dlc run --parallel pipeline takes --mesh pipe=P");
  if (options.microbatches != 1)
    return fail(context, kExitBadInput,
                "dlc run --parallel pipeline runs the whole batch as one micro-batch "
                "(--microbatches 1): the graph is compiled for its batch size");
  int64_t stages = mesh.axes()[0].second;
  std::unique_ptr<rt::comm::Communicator> comm;
  if (ExitCode c = openMeshCommunicator(context, mesh, comm, options.collectiveTimeout))
    return c;
  rank = comm->rank();
  if (failed(assignForwardStages(func, pipelineCut(stages))) ||
      failed(finishPipelineStages(func, stages)))
    return kExitBadInput;
  std::vector<std::vector<int64_t>> resultShapes;
  std::vector<DType> resultTypes;
  for (Type t : func.getResultTypes()) {
    auto type = cast<RankedTensorType>(t);
    resultShapes.emplace_back(type.getShape().begin(), type.getShape().end());
    resultTypes.push_back(dtypeOf(type.getElementType()));
  }
  PipelineProgram program;
  if (ExitCode c = program.build(context, func, mesh, *comm, schedule, 1))
    return c;
  std::vector<HostTensor> in;
  for (const oracle::Tensor &t : inputs)
    in.push_back(t.toHost());
  auto argument = [&](unsigned i, int64_t) {
    return HostTensor::borrow(in[i].dtype(), in[i].shape(), in[i].data(), in[i].byteSize());
  };
  std::vector<std::vector<HostTensor>> results;
  std::string error;
  if (ExitCode c = program.run(argument, results, error))
    return fail(context, c, error);
  // Rank 0 gets each output from the stage that computes it.
  outputs.clear();
  const PipelineSplit &split = program.split();
  for (size_t r = 0; r < results.size(); ++r) {
    int64_t from = split.resultStages[r].empty() ? 0 : split.resultStages[r].front();
    HostTensor value = results[r].empty() ? HostTensor(resultTypes[r], resultShapes[r])
                                          : std::move(results[r].front());
    if (split.resultStages[r].empty()) {
      // The output is an input, returned as it is.
      auto arg = dyn_cast<BlockArgument>(func.getBody().front().getTerminator()->getOperand(r));
      if (arg)
        value = in[arg.getArgNumber()];
    }
    rt::Status s;
    if (from != 0 && rank == from)
      s = comm->send(value.data(), static_cast<uint64_t>(value.numel()), value.dtype(), 0);
    else if (from != 0 && rank == 0)
      s = comm->recv(value.mutableData(), static_cast<uint64_t>(value.numel()), value.dtype(),
                     static_cast<int>(from));
    if (!s.ok())
      return fail(context, kExitRuntimeFault, s.message());
    outputs.push_back(oracle::Tensor::fromHost(value));
  }
  return kExitSuccess;
}

/// The cut's options for `stages`: each op weighed by the cost model on
/// the CPU ranks' spec (devices/cpu.json, measured on dlc's own kernels:
/// a GELU or a layer norm is far slower there than its bytes say), so that
/// the stages the ranks run are the ones `dlc plan` predicts; the default
/// roofline when the spec cannot be read.
PipelineOptions pipelineCut(int64_t stages) {
  PipelineOptions options;
  options.stages = stages;
  auto device = std::make_shared<DeviceSpec>();
  auto link = std::make_shared<LinkSpec>();
  std::string error;
  if (loadDeviceSpec("cpu", *device, error) && loadLinkSpec(device->defaultLink, *link, error))
    options.opSeconds = [device, link](Operation *op) {
      return kernelCost(op, *device, *link).seconds;
    };
  return options;
}

} // namespace dlc
