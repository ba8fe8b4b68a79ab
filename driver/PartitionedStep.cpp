//===- PartitionedStep.cpp - dlc train on the ranks of a mesh -------------===//
//
// `mpirun -np N dlc train M --mesh data=N --parallel data`: the train step
// (forward, backward, update) partitioned for the mesh, its data arguments
// given split (each rank loads its block of every global batch, as the
// loader's rank shards are), run as an SpmdProgram: the gradients'
// all-reduces (in buckets, overlapping the backward pass), the loss average
// and the global count of a mean loss are collectives the partitioner
// placed. The state (parameters, moments, the step) is kept on the host
// between steps, whole on every rank but where the program takes it split
// (`--zero 1`'s moments over `data`; the parameters `--parallel tensor`
// splits over `model`, with their moments): each rank keeps its block;
// rank 0 writes the checkpoints and logs. `--deterministic` runs the
// program for G shards of the batch, G/N after another on each of N ranks,
// with collectives summed in shard order: the same bits for any N.
//
//===----------------------------------------------------------------------===//

#include "driver/PartitionedStep.h"

#include "driver/CompiledStep.h"
#include "driver/DriverSupport.h"
#include "driver/HostCollectives.h"
#include "driver/ModelLoader.h"
#include "driver/SpmdRunner.h"
#include "driver/StepSignature.h"
#include "ir/DlcDialect.h"
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
      std::fprintf(stderr,
                   "dlc: spmd: compute %.3f s, collectives %.3f s, exposed %.3f s, "
                   "%zu calls per step, %.3f ms a step after the first\n",
                   program.computeSeconds(), program.collectiveSeconds(),
                   program.exposedSeconds(), program.callsPerRun(),
                   program.secondsPerRunAfterFirst() * 1e3);
    // DLC_KERNEL_TIMES=SPEC: every kernel measured beside the cost model's
    // prediction on device spec SPEC (bench/costmodel/kernel_times.py).
    if (const char *spec = std::getenv("DLC_KERNEL_TIMES"); comm && comm->rank() == 0 && spec)
      program.printKernelTimes(llvm::errs(), *spec ? spec : "cpu");
    // DLC_COLLECTIVE_TIMES=SPEC: the same for the communication thread's
    // calls.
    if (const char *spec = std::getenv("DLC_COLLECTIVE_TIMES");
        comm && comm->rank() == 0 && spec)
      program.printCollectiveTimes(llvm::errs(), *spec ? spec : "cpu");
  }
  std::string modelName() const override { return signature.model; }
  std::string lossKind() const override { return signature.loss; }
  train::OptimizerInfo optimizer() const override { return signature.optimizer; }
  std::string execution() const override {
    std::string text = "cpu ranks, mesh " + mesh.str();
    if (shards() > 1 || inShardOrder)
      text += ", " + std::to_string(shards() * comm->size()) + " shards in order";
    if (zero)
      text += ", zero 1";
    return text;
  }
  const std::vector<data::TensorSpec> &inputs() const override { return signature.data; }
  const std::vector<data::TensorSpec> &state() const override { return signature.state; }

  int rank() const override { return comm->rank(); }
  int worldSize() const override { return comm->size(); }
  int dataRank() const override {
    int64_t axis = mesh.axisIndex("data");
    return axis < 0 ? 0 : static_cast<int>(mesh.coordinates(comm->rank())[axis]);
  }
  int dataRanks() const override {
    int64_t axis = mesh.axisIndex("data");
    return axis < 0 ? 1 : static_cast<int>(mesh.axes()[axis].second);
  }

  int64_t shards() const { return static_cast<int64_t>(stateValues.size()); }
  /// Shard s of this process is shard `firstShard + s` of the program's mesh.
  int64_t firstShard() const { return comm->rank() * shards(); }

  Status step(const std::vector<HostTensor> &batch, float learningRate,
              float &lossOut) override {
    std::vector<std::vector<HostTensor>> in(shards());
    size_t next = 0;
    for (const StepArgument &arg : signature.arguments) {
      if (arg.kind == StepArgument::Data) {
        const HostTensor &t = batch[next++];
        std::vector<int64_t> rows = arg.shape;
        if (!rows.empty())
          rows[0] *= shards();
        if (t.shape() != rows)
          return Status::failure(
              kExitBadInput, "a batch of " + formatShape(t.shape()) + " rows for '" +
                                 arg.name + "', the partitioned step takes " +
                                 formatShape(rows) + " on each rank: train with --drop-last");
        for (int64_t s = 0; s < shards(); ++s)
          in[s].push_back(shards() == 1 ? HostTensor::borrow(t.dtype(), t.shape(), t.data(),
                                                             t.byteSize())
                                        : blockOf(t, 0, s, shards()));
      } else if (arg.kind == StepArgument::Lr) {
        HostTensor lr(DType::F32, {});
        lr.setDouble(0, learningRate);
        for (int64_t s = 0; s < shards(); ++s)
          in[s].push_back(lr);
      } else {
        for (int64_t s = 0; s < shards(); ++s) {
          const HostTensor &t = stateValues[s][arg.state];
          in[s].push_back(HostTensor::borrow(t.dtype(), t.shape(), t.data(), t.byteSize()));
        }
      }
    }
    std::vector<std::vector<HostTensor>> out;
    std::string error;
    if (ExitCode c = program.run(in, out, error))
      return Status::failure(c, error);
    lossOut = static_cast<float>(out[0][0].getDouble(0));
    for (int64_t s = 0; s < shards(); ++s)
      for (size_t i = 1; i < out[s].size(); ++i)
        stateValues[s][signature.resultState[i]] = std::move(out[s][i]);
    gathered.clear();
    return Status::success();
  }

  /// Split state (ZeRO's moments, tensor parallelism's parameters and
  /// their moments) is gathered whole on every rank before rank 0 writes a
  /// checkpoint (a collective: every rank calls it).
  Status beforeCheckpoint() override {
    for (auto [i, spec] : llvm::enumerate(signature.state)) {
      if (signature.split[i].empty() || gathered.count(i))
        continue;
      std::vector<HostTensor> blocks, all;
      for (int64_t s = 0; s < shards(); ++s)
        blocks.push_back(stateValues[s][i]);
      std::string error;
      if (ExitCode c = program.gatherShards(blocks, all, error))
        return Status::failure(c, error);
      gathered[i] = assembleBlocks(all, programMesh, signature.split[i]);
    }
    return Status::success();
  }
  Status readState(const std::string &name, HostTensor &out) override {
    auto found = signature.stateIndexOf.find(name);
    if (found == signature.stateIndexOf.end())
      return Status::failure(kExitBadInput, "no state tensor '" + name + "'");
    size_t i = found->second;
    if (signature.split[i].empty()) {
      out = stateValues[0][i];
      return Status::success();
    }
    if (Status s = beforeCheckpoint(); !s.ok())
      return s;
    out = gathered[i];
    return Status::success();
  }
  Status writeState(const std::string &name, const HostTensor &value) override {
    auto found = signature.stateIndexOf.find(name);
    if (found == signature.stateIndexOf.end())
      return Status::failure(kExitBadInput, "no state tensor '" + name + "'");
    setWhole(found->second, value);
    return Status::success();
  }
  /// State `i` on every local shard from its whole value.
  void setWhole(size_t i, const HostTensor &whole) {
    for (int64_t s = 0; s < shards(); ++s)
      stateValues[s][i] = signature.split[i].empty()
                              ? whole
                              : blockOfRank(whole, programMesh, signature.split[i], firstShard() + s);
    gathered.erase(i);
  }

  StepSignature signature;
  /// The launch's mesh, and the program's: its shards' (--deterministic:
  /// data=G, G/N shards per rank).
  Mesh mesh, programMesh;
  bool zero = false, inShardOrder = false;
  /// Per local shard, per state index: its value (a block where split).
  std::vector<std::vector<HostTensor>> stateValues;
  std::map<size_t, HostTensor> gathered;
  std::unique_ptr<rt::comm::Communicator> comm;
  /// The partitioned IR the program was cut from (it keeps using it).
  OwningOpRef<ModuleOp> source;
  SpmdProgram program;
};

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
  if (train.bucketMb <= 0)
    return fail(context, kExitBadInput, "--bucket-mb must be positive");
  if (train.deterministicShards && !train.deterministic)
    return fail(context, kExitBadInput, "--deterministic-shards goes with --deterministic");
  if (ExitCode c = openMeshCommunicator(context, result->mesh, result->comm,
                                        train.mesh.collectiveTimeout))
    return c;
  rank = result->comm->rank();
  worldSize = result->comm->size();
  // --deterministic: the program is partitioned for G shards of the batch,
  // G/ranks run one after another on each rank, and every collective sums
  // in shard order (SpmdOptions::inShardOrder).
  SpmdOptions spmd;
  spmd.bucketBytes = static_cast<int64_t>(train.bucketMb * (1 << 20));
  spmd.timeKernels = std::getenv("DLC_KERNEL_TIMES") != nullptr;
  if (train.deterministic) {
    int64_t shards = train.deterministicShards ? train.deterministicShards : 8;
    if (partition.mesh.axes().size() != 1 || partition.mesh.axisIndex("data") != 0 ||
        !partition.preset.data || partition.preset.tensor)
      return fail(context, kExitBadInput,
                  "--deterministic on ranks takes a data mesh (--mesh data=N --parallel data)");
    if (shards < 1 || shards % worldSize != 0 || train.batchSize % shards != 0)
      return fail(context, kExitBadInput,
                  "--deterministic computes each step as " + std::to_string(shards) +
                      " shards of the batch: the ranks (" + std::to_string(worldSize) +
                      ") must divide it and it must divide --batch-size (" +
                      std::to_string(train.batchSize) + "); set --deterministic-shards");
    spmd.localShards = shards / worldSize;
    spmd.inShardOrder = true;
    partition.mesh = Mesh({{"data", shards}});
    result->inShardOrder = true;
  }
  result->zero = partition.shardOptimizerState;
  result->programMesh = partition.mesh;
  partition.splitParameterState = true;

  // 1. The train step at the global batch size, partitioned.
  dlg::BuildResult built;
  if (ExitCode c = buildTrainingModel(options, train.batchSize, context, sourceMgr, built))
    return c;
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
  SmallVector<Type> globalTypes(func.getArgumentTypes());
  if (failed(partitionFunction(func, partition)))
    return kExitBadInput;

  // 2. What the loop needs: inputs, state (initial values), optimizer.
  PartitionedStep &s = *result;
  if (ExitCode c = readStepSignature(context, func, globalTypes, s.signature))
    return c;
  s.stateValues.assign(spmd.localShards, std::vector<HostTensor>(s.signature.initial.size()));
  for (auto [i, value] : llvm::enumerate(s.signature.initial))
    s.setWhole(i, value);

  // 3. Compiled: segments between the collectives.
  if (ExitCode c = s.program.build(context, func, partition.mesh, *s.comm, spmd))
    return c;
  s.source = std::move(built.module);
  step = std::move(result);
  return kExitSuccess;
}

} // namespace dlc
