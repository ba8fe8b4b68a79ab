//===- PipelineCost.cpp - Predicted step and memory of a pipeline ---------===//

#include "passes/analysis/PipelineCost.h"

#include "passes/partition/Pipeline.h"

#include "ir/DlcDialect.h"
#include "passes/analysis/Liveness.h"
#include "passes/analysis/TrainStep.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace dlc {

namespace {

/// The ops of `step` that cost something: kernels and collectives.
SmallVector<Operation *> costedOps(func::FuncOp step) {
  SmallVector<Operation *> ops;
  for (Operation &op : step.getBody().front().without_terminator())
    if (collectiveInKernel(&op) || isKernel(&op))
      ops.push_back(&op);
  return ops;
}

bool isStateArgument(func::FuncOp step, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner()->getParentOp() == step.getOperation() &&
         step.getArgAttr(arg.getArgNumber(), "dlc.state");
}

/// A collective over the `data` axis alone: a gradient's (or ZeRO's)
/// synchronisation, which a pipeline runs once per step, not per
/// micro-batch.
bool isDataCollective(Operation *op) {
  Operation *c = collectiveInKernel(op);
  auto axes = c ? c->getAttrOfType<ArrayAttr>("mesh_axes") : nullptr;
  if (!axes || axes.empty())
    return false;
  return llvm::all_of(axes, [](Attribute a) { return cast<StringAttr>(a).getValue() == "data"; });
}

} // namespace

llvm::DenseMap<Operation *, int64_t> splitStages(func::FuncOp step, int64_t stages,
                                                 const DeviceSpec &device,
                                                 const LinkSpec &link) {
  return splitStages(step, stages, device, link, nullptr);
}

llvm::DenseMap<Operation *, int64_t> splitStages(func::FuncOp step, int64_t stages,
                                                 const DeviceSpec &device, const LinkSpec &link,
                                                 std::vector<double> *backwardShare) {
  // The cut the ranks run (passes/partition/Pipeline.h's
  // assignForwardStages, there on the unfused loss graph): each forward
  // kernel weighs its time, its backward's (one forward's worth per operand
  // that carries a gradient: a parameter, or the result of a kernel that
  // reads one) and the update of the parameters it reads first (seven
  // parameter-sized tensors through memory); contiguous runs minimising
  // the heaviest.
  TrainStepParts parts(step);
  SmallVector<Operation *> forward;
  std::vector<double> weights, backward;
  llvm::DenseSet<Value> carriesGradient;
  llvm::DenseSet<Value> updated;
  for (Operation *op : costedOps(step)) {
    if (collectiveInKernel(op) || parts.phase(op) != StepPart::Forward)
      continue;
    double seconds = kernelCost(op, device, link).seconds, weight = seconds, back = 0;
    bool anyGradient = false;
    for (Value v : op->getOperands()) {
      bool parameter = isStateArgument(step, v) &&
                       isa<FloatType>(cast<RankedTensorType>(v.getType()).getElementType());
      if (!parameter && !carriesGradient.count(v))
        continue;
      anyGradient = true;
      back += seconds;
      if (parameter && updated.insert(v).second && device.memoryBandwidth > 0)
        weight += 7.0 * double(tensorBytes(v.getType())) / device.memoryBandwidth *
                  (device.hostPath ? device.timeShare : 1.0);
    }
    if (anyGradient)
      for (Value r : op->getResults())
        carriesGradient.insert(r);
    forward.push_back(op);
    weights.push_back(weight + back);
    backward.push_back(back);
  }
  llvm::DenseMap<Operation *, int64_t> stageOf;
  if (backwardShare)
    backwardShare->assign(stages, 0);
  if (forward.empty())
    return stageOf;
  // The stages the ranks cut (dlc.stage on the loss graph's ops, kept
  // inside the fused kernels), where the step carries them: the prediction
  // is of the pipeline that runs.
  std::vector<int64_t> marked;
  for (Operation *op : forward) {
    int64_t stage = dlc::stageOf(op);
    if (stage < 0)
      op->walk([&](Operation *inner) {
        if (stage < 0 && inner != op)
          stage = dlc::stageOf(inner);
      });
    if (stage < 0 || stage >= stages)
      break;
    marked.push_back(stage);
  }
  if (marked.size() == forward.size()) {
    for (size_t i = 0; i < forward.size(); ++i) {
      stageOf[forward[i]] = marked[i];
      if (backwardShare)
        (*backwardShare)[marked[i]] += backward[i];
    }
    return stageOf;
  }
  // Else the same cut computed on this step's kernels.
  std::vector<size_t> starts =
      static_cast<int64_t>(forward.size()) >= stages
          ? balancedCuts(weights, stages)
          : std::vector<size_t>(stages, 0);
  int64_t s = 0;
  for (size_t i = 0; i < forward.size(); ++i) {
    while (s + 1 < stages && i >= starts[s + 1] && starts[s + 1] > starts[s])
      ++s;
    stageOf[forward[i]] = s;
    if (backwardShare)
      (*backwardShare)[s] += backward[i];
  }
  return stageOf;
}

int64_t countLayers(func::FuncOp step) {
  TrainStepParts parts(step);
  int64_t layers = 0;
  for (Operation *op : costedOps(step))
    if (!collectiveInKernel(op) && parts.phase(op) == StepPart::Forward &&
        llvm::any_of(op->getOperands(), [&](Value v) { return isStateArgument(step, v); }))
      ++layers;
  return layers;
}

int64_t PipelineCost::peakMemoryBytes() const {
  int64_t peak = 0;
  for (const StageCost &s : perStage)
    peak = std::max(peak, s.memoryBytes());
  return peak;
}

namespace {

/// Seconds of each stage's parts, [stage][busy - 1] for every count of
/// stages computing at once, and of the one-way transfer across each cut.
struct ScheduleTimes {
  std::vector<std::vector<double>> forward, backward;
  std::vector<double> transfer;
};

} // namespace

/// When each stage finishes its last backward (or forward) in one step of
/// `microbatches`, every stage running its parts in pipelineOrder's order.
/// A part starts once its stage is free and its input has arrived: the
/// forward of micro-batch m on stage s the activation of (s - 1, m), its
/// backward the gradient of (s + 1, m), a transfer after they end. The
/// stages share the host as processor sharing does: while b stages
/// compute, a part advances at 1 / (its time at b) a second, so one
/// stage alone in the bubble runs at its own rate and the rest slow
/// when more stages compute (on GPUs every count costs the same).
static std::vector<double> simulateSchedule(const ScheduleTimes &times, int64_t microbatches,
                                            bool gpipe) {
  using P = PipelinePhase;
  int64_t stages = times.forward.size();
  std::vector<std::vector<std::pair<P, int64_t>>> order(stages);
  for (int64_t s = 0; s < stages; ++s)
    order[s] = pipelineOrder(gpipe, s, stages, microbatches, /*hasBackward=*/true);
  // When each part's input is there (infinity: not yet computed).
  const double never = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> forwardReady(stages, std::vector<double>(microbatches, never)),
      backwardReady = forwardReady;
  for (int64_t m = 0; m < microbatches; ++m)
    forwardReady[0][m] = 0;
  std::vector<size_t> next(stages, 0);
  std::vector<double> progress(stages, -1), finished(stages, 0); // -1: idle
  // When stage s's next part has its input.
  auto inputReady = [&](int64_t s) {
    auto [phase, m] = order[s][next[s]];
    if (phase == P::Forward)
      return forwardReady[s][m];
    return s + 1 < stages ? backwardReady[s][m] : 0.0; // the last stage's own forward came first
  };
  double now = 0;
  for (;;) {
    // Start what can start.
    for (int64_t s = 0; s < stages; ++s)
      if (progress[s] < 0 && next[s] < order[s].size() && inputReady(s) <= now)
        progress[s] = 0;
    int64_t busy = llvm::count_if(progress, [](double p) { return p >= 0; });
    // The next event: a running part ends, or an input arrives.
    double step = never;
    auto duration = [&](int64_t s) {
      auto [phase, m] = order[s][next[s]];
      return (phase == P::Forward ? times.forward : times.backward)[s][busy - 1];
    };
    for (int64_t s = 0; s < stages; ++s) {
      if (progress[s] >= 0) {
        step = std::min(step, (1 - progress[s]) * duration(s));
      } else if (next[s] < order[s].size()) {
        double ready = inputReady(s);
        if (ready > now && ready < never)
          step = std::min(step, ready - now);
      }
    }
    if (step == never)
      break; // all done (or nothing can run: not for a valid order)
    for (int64_t s = 0; s < stages; ++s) {
      if (progress[s] < 0)
        continue;
      double d = duration(s);
      progress[s] = d > 0 ? progress[s] + step / d : 1;
    }
    now += step;
    for (int64_t s = 0; s < stages; ++s) {
      if (progress[s] < 1 - 1e-9)
        continue;
      auto [phase, m] = order[s][next[s]];
      if (phase == P::Forward) {
        if (s + 1 < stages)
          forwardReady[s + 1][m] = now + times.transfer[s];
      } else if (s > 0) {
        backwardReady[s - 1][m] = now + times.transfer[s - 1];
      }
      progress[s] = -1;
      ++next[s];
      finished[s] = now;
    }
  }
  return finished;
}

PipelineCost estimatePipeline(func::FuncOp step, int64_t stages, int64_t microbatches,
                              bool gpipe, const DeviceSpec &device, const LinkSpec &link,
                              int64_t optimizerShards) {
  PipelineCost cost;
  cost.stages = stages;
  cost.microbatches = microbatches;
  cost.perStage.resize(stages);
  TrainStepParts parts(step);
  std::vector<double> backwardShare;
  llvm::DenseMap<Operation *, int64_t> forwardStage =
      splitStages(step, stages, device, link, &backwardShare);

  // Every op's stage. The backward pass runs the layers in reverse, so its
  // kernels in program order are cut into runs in the reverse order of the
  // stages, each run as long (in predicted time) as its stage's share of
  // the forward. An update kernel goes with the parameter it updates (the
  // stage of its first forward reader), a collective with the kernel
  // before it (a gradient's all-reduce follows the kernel computing it).
  SmallVector<Operation *> ops = costedOps(step);
  std::vector<double> forwardShare(stages, 0);
  double forwardTotal = 0, backwardTotal = 0;
  for (Operation *op : ops) {
    if (collectiveInKernel(op))
      continue;
    double seconds = kernelCost(op, device, link).seconds;
    if (auto it = forwardStage.find(op); it != forwardStage.end()) {
      forwardShare[it->second] += seconds;
      forwardTotal += seconds;
    } else if (parts.phase(op) == StepPart::Backward) {
      backwardTotal += seconds;
    }
  }
  // Where the backward run of stage s ends, in cumulative backward time:
  // each stage's share of the backward as its layers' gradients weigh.
  std::vector<double> backwardEnd(stages, 0);
  double cumulative = 0, weighed = 0;
  for (double b : backwardShare)
    weighed += b;
  for (int64_t s = stages - 1; s >= 0; --s) {
    cumulative += weighed > 0 ? backwardShare[s] / weighed * backwardTotal
                              : (forwardTotal > 0 ? forwardShare[s] / forwardTotal * backwardTotal
                                                  : 0);
    backwardEnd[s] = cumulative;
  }
  llvm::DenseMap<Value, int64_t> parameterStage;
  for (Operation *op : ops)
    if (auto it = forwardStage.find(op); it != forwardStage.end())
      for (Value v : op->getOperands())
        if (isStateArgument(step, v) && !parameterStage.count(v))
          parameterStage[v] = it->second;
  llvm::DenseMap<Operation *, int64_t> stageOfOp;
  int64_t previous = 0;
  double backwardSoFar = 0;
  for (Operation *op : ops) {
    int64_t s = previous;
    if (auto it = forwardStage.find(op); it != forwardStage.end()) {
      s = it->second;
    } else if (collectiveInKernel(op)) {
      s = previous;
    } else if (parts.phase(op) == StepPart::Backward) {
      double seconds = kernelCost(op, device, link).seconds;
      double mid = backwardSoFar + seconds / 2;
      backwardSoFar += seconds;
      s = 0;
      for (int64_t t = stages - 1; t >= 0; --t)
        if (mid <= backwardEnd[t]) {
          s = t;
          break;
        }
    } else { // update
      bool found = false;
      for (Value v : op->getOperands())
        if (auto it = parameterStage.find(v); it != parameterStage.end()) {
          s = found ? std::min(s, it->second) : it->second;
          found = true;
        }
    }
    stageOfOp[op] = s;
    previous = s;
  }

  // Time per stage, its kernels costed as if its ranks computed alone
  // (device.timeShare for meshRanks), and again for every count of stages
  // computing at once (busy = 1 .. P, below): ranks of one host share its
  // cores and its memory's bandwidth, each rank on the threads that all the
  // stages' ranks leave it (runtime/base/HostCores.h: a stage alone in the
  // bubble does not get the idle stages' cores). A compute-bound kernel
  // slows with fewer threads, one in memory with more ranks streaming.
  // On devices of their own (GPUs) every count costs the same.
  std::vector<DeviceSpec> sharedBy;
  for (int64_t busy = 1; busy <= stages; ++busy)
    sharedBy.push_back(
        device.sharedBy(busy * device.meshRanks, stages * device.meshRanks));
  // [busy - 1][stage]: a micro-batch's forward and backward kernels, and
  // the update's kernels.
  std::vector<std::vector<double>> forwardKernelsAt(stages, std::vector<double>(stages, 0)),
      backwardKernelsAt = forwardKernelsAt, updateKernelsAt = forwardKernelsAt;
  // A weight gradient fused into its parameter's update (the GEMM's
  // epilogue is the optimizer) is computed for every micro-batch and
  // accumulated, the update applied once: the update kernel counts one
  // micro-batch's GEMM, the others' GEMMs go with each micro-batch's
  // backward, (M - 1) / M of them in each slot.
  double gradientShare = double(microbatches - 1) / double(microbatches);
  auto addKernel = [&](StepPart phase, const KernelCost &k, double &forward, double &backward,
                       double &update) {
    if (phase == StepPart::Update) {
      update += k.seconds / double(optimizerShards);
      backward += k.gemmSeconds * gradientShare;
    } else {
      (phase == StepPart::Forward ? forward : backward) += k.seconds;
    }
  };
  for (Operation *op : ops) {
    int64_t s = stageOfOp[op];
    StageCost &stage = cost.perStage[s];
    KernelCost k = kernelCost(op, device, link);
    if (k.collective) {
      // A stage's ranks exchange its gradients and activations from its
      // own thread: no communication thread's hand-over.
      if (device.hostPath && ringCost(collectiveInKernel(op)).steps > 0)
        k.seconds = std::max(0.0, k.seconds - k.handOverSeconds);
      (isDataCollective(op) ? stage.gradientSyncSeconds : stage.microbatchCommSeconds) +=
          k.seconds;
      continue;
    }
    StepPart phase = parts.phase(op);
    addKernel(phase, k, stage.forwardSeconds, stage.backwardSeconds, stage.updateSeconds);
    for (int64_t busy = 1; busy <= stages; ++busy)
      addKernel(phase, kernelCost(op, sharedBy[busy - 1], link), forwardKernelsAt[busy - 1][s],
                backwardKernelsAt[busy - 1][s], updateKernelsAt[busy - 1][s]);
    if (phase == StepPart::Update)
      continue; // in place on the state, counted below
    // Working space: the largest kernel's results and the intermediate
    // values it reads (arguments are counted as state and inputs).
    int64_t bytes = tensorBytes(op->getResultTypes());
    for (Value v : op->getOperands())
      if (!isa<BlockArgument>(v))
        bytes += tensorBytes(v.getType());
    stage.workspaceBytes = std::max(stage.workspaceBytes, bytes);
  }

  // Arguments: state (parameters and moments) on every stage that reads
  // it (a tied embedding lives on the first and the last), a gradient
  // accumulator for each parameter (state the forward reads), the data on
  // the stages that read it.
  for (BlockArgument arg : step.getArguments()) {
    llvm::SmallDenseSet<int64_t, 4> readers;
    bool readByForward = false;
    for (Operation *user : arg.getUsers()) {
      Operation *top = step.getBody().front().findAncestorOpInBlock(*user);
      if (auto it = stageOfOp.find(top); it != stageOfOp.end()) {
        readers.insert(it->second);
        readByForward |= !collectiveInKernel(top) && parts.phase(top) == StepPart::Forward;
      }
    }
    int64_t bytes = tensorBytes(arg.getType());
    bool state = step.getArgAttr(arg.getArgNumber(), "dlc.state") != nullptr;
    for (int64_t s : readers) {
      StageCost &stage = cost.perStage[s];
      if (!state) {
        stage.inputBytes += bytes;
        continue;
      }
      // Moments (state the forward does not read) split under ZeRO.
      stage.stateBytes += readByForward ? bytes : bytes / optimizerShards;
      if (readByForward)
        stage.gradientBytes += bytes;
    }
  }

  // Activations: a forward result read by a later phase is saved per
  // micro-batch in flight; one read by a later stage's forward crosses
  // every cut in between (sent along the chain).
  std::vector<int64_t> cutBytes(stages, 0);
  for (Operation *op : costedOps(step)) {
    auto it = forwardStage.find(op);
    if (it == forwardStage.end())
      continue;
    for (Value r : op->getResults()) {
      bool saved = false;
      int64_t last = it->second;
      for (Operation *user : r.getUsers()) {
        Operation *top = step.getBody().front().findAncestorOpInBlock(*user);
        if (!top || !stageOfOp.count(top))
          continue;
        if (auto f = forwardStage.find(top); f != forwardStage.end())
          last = std::max(last, f->second);
        else
          saved = true;
      }
      int64_t bytes = tensorBytes(r.getType());
      if (saved)
        cost.perStage[it->second].savedBytes += bytes;
      for (int64_t c = it->second; c < last; ++c)
        cutBytes[c] += bytes;
    }
  }

  // On CPU ranks (driver/PipelineProgram.h) each part a stage runs is a
  // module run of its own: a micro-batch's forward and backward are a
  // segment each, the update one more; the step ends with one all-reduce
  // (the loss). Host code (hand-overs, module runs) waits for a time slice when the
  // ranks computing at once outnumber the cores: costed here for one
  // stage's ranks, scaled below for the slots where more stages compute.
  double hostShare = device.hostShareFor(device.meshRanks);
  // A stage posts its sends and receives from its own thread (driver/
  // PipelineProgram.h): no communication thread's hand-over, which the
  // SPMD path's collectives pay (DeviceSpec::collectiveOverheadSeconds),
  // except for the step's one all-reduce (the loss).
  // A peer may be descheduled by any rank of the host, every stage's: a
  // message has one peer, the loss's all-reduce the stage's ranks.
  double allRanksShare = device.hostShareFor(stages * device.meshRanks);
  double descheduled = device.descheduledSecondsAt(allRanksShare, 2);
  double handOver =
      device.hostPath ? device.collectiveOverheadSeconds * hostShare +
                            device.descheduledSecondsAt(allRanksShare, device.meshRanks)
                      : 0;
  // A micro-batch's forward and backward kernels alone, and the update's;
  // the rest of each part (below: host overheads, the stage's own
  // collectives) is added to the kernels at every count of busy stages.
  std::vector<double> forwardKernels(stages), backwardKernels(stages), updateKernels(stages);
  for (int64_t s = 0; s < stages; ++s) {
    forwardKernels[s] = cost.perStage[s].forwardSeconds;
    backwardKernels[s] = cost.perStage[s].backwardSeconds;
    updateKernels[s] = cost.perStage[s].updateSeconds;
  }
  // A part's host tensors, allocated and filled every run: the forward
  // gives its saved activations, the backward the parameters' gradients,
  // the update the state.
  if (device.hostPath)
    for (StageCost &stage : cost.perStage) {
      double perByte = device.segmentByteSeconds;
      stage.forwardSeconds +=
          (device.partSeconds + perByte * double(stage.savedBytes)) * hostShare;
      stage.backwardSeconds +=
          (device.partSeconds + perByte * double(stage.gradientBytes)) * hostShare;
      stage.updateSeconds +=
          (device.partSeconds + perByte * double(stage.stateBytes)) * hostShare + handOver +
          2 * link.latency * double(stages);
    }

  // A one-way message between stages: at the host's share, and waiting
  // for a descheduled peer where the ranks outnumber the cores.
  auto messageSeconds = [&](int64_t bytes) {
    return (link.latency + device.transferOverheadSeconds +
            link.transferSeconds(double(bytes))) *
               hostShare +
           descheduled;
  };
  double slowest = 0, update = 0, widestTransfer = 0;
  for (int64_t s = 0; s < stages; ++s) {
    StageCost &stage = cost.perStage[s];
    stage.sendBytes = cutBytes[s];
    stage.inFlight = gpipe ? microbatches : std::min(stages - s, microbatches);
    slowest = std::max(slowest, stage.forwardSeconds + stage.backwardSeconds +
                                    stage.microbatchCommSeconds);
    update = std::max(update, stage.updateSeconds + stage.gradientSyncSeconds);
    if (s + 1 < stages) // the activation forward, its gradient back
      widestTransfer = std::max(widestTransfer, 2 * messageSeconds(cutBytes[s]));
  }
  cost.transferSeconds = widestTransfer;
  cost.slotSeconds = slowest + widestTransfer;
  // The step: every stage's parts in its schedule's order, each starting
  // when the stage is free and its input has arrived (the activation from
  // the stage before, the gradient from the one after, a one-way transfer
  // later), simulated on the host's shares (simulateSchedule). Stages of
  // unequal time (a head on the last) leave the faster ones waiting, which
  // (M + P - 1) slots of the slowest stage would count as work.
  auto hostSlowdown = [&](int64_t busyStages) {
    return device.hostShareFor(busyStages * device.meshRanks) / hostShare;
  };
  ScheduleTimes times;
  times.forward.assign(stages, std::vector<double>(stages));
  times.backward = times.forward;
  for (int64_t s = 0; s < stages; ++s) {
    const StageCost &stage = cost.perStage[s];
    double forwardRest = stage.forwardSeconds - forwardKernels[s] +
                         stage.microbatchCommSeconds / 2,
           backwardRest = stage.backwardSeconds - backwardKernels[s] +
                          stage.microbatchCommSeconds / 2;
    for (int64_t busy = 1; busy <= stages; ++busy) {
      times.forward[s][busy - 1] =
          forwardKernelsAt[busy - 1][s] + forwardRest * hostSlowdown(busy);
      times.backward[s][busy - 1] =
          backwardKernelsAt[busy - 1][s] + backwardRest * hostSlowdown(busy);
    }
    if (s + 1 < stages)
      times.transfer.push_back(messageSeconds(cutBytes[s]));
  }
  std::vector<double> finished = simulateSchedule(times, microbatches, gpipe);
  // A stage updates once its last backward is done; the stages update at
  // about the same time, but one whose update is small (the last stage's
  // head) leaves the host to the others: as many ranks' worth busy as the
  // stages' updates over the slowest's. Each stage's update kernels at
  // that count, its host code (module run, the loss's all-reduce) and
  // data-parallel collectives at the host's share; the step ends with the
  // last update.
  double updateSum = 0;
  for (const StageCost &stage : cost.perStage)
    updateSum += stage.updateSeconds + stage.gradientSyncSeconds;
  int64_t updating = update > 0 ? std::clamp<int64_t>(std::llround(updateSum / update), 1, stages)
                                : 1;
  cost.stepSeconds = 0;
  for (int64_t s = 0; s < stages; ++s) {
    const StageCost &stage = cost.perStage[s];
    double host = stage.updateSeconds + stage.gradientSyncSeconds - updateKernels[s];
    cost.stepSeconds = std::max(cost.stepSeconds, finished[s] + updateKernelsAt[updating - 1][s] +
                                                      host * hostSlowdown(updating));
  }
  double busiest = 0;
  for (const StageCost &stage : cost.perStage)
    busiest = std::max(busiest, double(microbatches) * (stage.forwardSeconds + stage.backwardSeconds) +
                                    stage.updateSeconds);
  cost.computeSeconds = busiest;
  return cost;
}

} // namespace dlc
