//===- Pipeline.cpp - a train step cut into pipeline stages ---------------===//

#include "passes/partition/Pipeline.h"

#include "ir/DlcDialect.h"
#include "passes/Outline.h"
#include "passes/Passes.h"
#include "passes/analysis/TrainStep.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <limits>

using namespace mlir;

namespace dlc {

int64_t stageOf(Operation *op) {
  if (auto attr = op->getAttrOfType<IntegerAttr>(kStageAttr))
    return attr.getInt();
  return kReplicatedStage;
}

static void setStage(Operation *op, int64_t stage) {
  op->setAttr(kStageAttr, IntegerAttr::get(IntegerType::get(op->getContext(), 64), stage));
}

const char *phaseName(PipelinePhase phase) {
  switch (phase) {
  case PipelinePhase::Forward: return "forward";
  case PipelinePhase::Backward: return "backward";
  case PipelinePhase::Update: return "update";
  }
  return "?";
}

std::vector<std::pair<PipelinePhase, int64_t>>
pipelineOrder(bool gpipe, int64_t stage, int64_t stages, int64_t microbatches,
              bool hasBackward) {
  using P = PipelinePhase;
  std::vector<std::pair<P, int64_t>> order;
  if (!hasBackward || gpipe) {
    for (int64_t m = 0; m < microbatches; ++m)
      order.push_back({P::Forward, m});
    if (hasBackward)
      for (int64_t m = 0; m < microbatches; ++m)
        order.push_back({P::Backward, m});
    return order;
  }
  int64_t warmup = std::min(stages - stage - 1, microbatches);
  for (int64_t m = 0; m < warmup; ++m)
    order.push_back({P::Forward, m});
  for (int64_t i = 0; i + warmup < microbatches; ++i) {
    order.push_back({P::Forward, warmup + i});
    order.push_back({P::Backward, i});
  }
  for (int64_t m = microbatches - warmup; m < microbatches; ++m)
    order.push_back({P::Backward, m});
  return order;
}

/// A CPU core's roofline: 100 GFLOP/s, 10 GB/s, 2 us a kernel. Only the
/// ratios between ops matter for the cut.
static double defaultOpSeconds(Operation *op) {
  auto cost = dyn_cast<CostOpInterface>(op);
  if (!cost)
    return 0;
  double flops = static_cast<double>(cost.getFlops());
  double bytes = static_cast<double>(cost.getBytesRead() + cost.getBytesWritten());
  return std::max(flops / 100e9, bytes / 10e9) + 2e-6;
}

/// By dynamic programming over the prefix sums.
std::vector<size_t> balancedCuts(const std::vector<double> &weights, int64_t parts) {
  size_t n = weights.size();
  std::vector<double> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + weights[i];
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][j]: the smallest largest sum of k runs covering the first j.
  std::vector<std::vector<double>> best(parts + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<size_t>> from(parts + 1, std::vector<size_t>(n + 1, 0));
  best[0][0] = 0;
  for (int64_t k = 1; k <= parts; ++k)
    for (size_t j = k; j + (parts - k) <= n; ++j)
      for (size_t i = k - 1; i < j; ++i) {
        double cost = std::max(best[k - 1][i], prefix[j] - prefix[i]);
        if (cost < best[k][j]) {
          best[k][j] = cost;
          from[k][j] = i;
        }
      }
  std::vector<size_t> starts(parts);
  size_t end = n;
  for (int64_t k = parts; k >= 1; --k) {
    starts[k - 1] = from[k][end];
    end = starts[k - 1];
  }
  return starts;
}

LogicalResult assignForwardStages(func::FuncOp func, const PipelineOptions &options) {
  Block &body = func.getBody().front();
  // Ops that read nothing (constants, parameters) are replicated or follow
  // their readers; the cut is over the ops that compute.
  SmallVector<Operation *> ops;
  bool marked = false;
  for (Operation &op : body.without_terminator()) {
    marked |= op.hasAttr(kStageAttr);
    if (op.getNumOperands() > 0)
      ops.push_back(&op);
  }
  if (options.stages < 1)
    return func.emitError("a pipeline has at least one stage");
  if (marked) {
    // `@stage` lines: an op without a mark is in the stage of the op before.
    int64_t current = 0, last = 0;
    for (Operation *op : ops) {
      if (op->hasAttr(kStageAttr))
        current = stageOf(op);
      else
        setStage(op, current);
      last = std::max(last, current);
    }
    if (last + 1 != options.stages)
      return func.emitError("the model's @stage lines make ")
             << last + 1 << " stages, but the pipeline has " << options.stages
             << " (the mesh's 'pipe' axis)";
    return success();
  }
  if (static_cast<int64_t>(ops.size()) < options.stages)
    return func.emitError("'") << func.getSymName() << "' has " << ops.size()
                               << " ops: too few to cut into " << options.stages
                               << " pipeline stages";
  // An op's weight is its forward time, its backward's (one forward's worth
  // per operand that carries a gradient: matmul's dX and dW), and the
  // optimizer's update of the parameters it reads first (Adam reads and
  // writes about seven parameter-sized tensors).
  auto seconds = [&](Operation *op) {
    return options.opSeconds ? options.opSeconds(op) : defaultOpSeconds(op);
  };
  llvm::DenseSet<Value> carriesGradient;
  llvm::DenseSet<Operation *> updated;
  std::vector<double> weights;
  for (Operation *op : ops) {
    double forward = seconds(op), weight = forward;
    bool anyGradient = false;
    for (Value v : op->getOperands()) {
      auto param = v.getDefiningOp<ParamOp>();
      bool gradient = carriesGradient.count(v) ||
                      (param && isa<FloatType>(param.getType().getElementType()));
      if (gradient)
        weight += forward;
      anyGradient |= gradient;
      if (param && gradient && updated.insert(param).second)
        weight += 7.0 * static_cast<double>(param.getType().getNumElements() *
                                            param.getType().getElementTypeBitWidth() / 8) /
                   10e9;
    }
    if (anyGradient)
      for (Value r : op->getResults())
        carriesGradient.insert(r);
    weights.push_back(weight);
  }
  std::vector<size_t> starts = balancedCuts(weights, options.stages);
  int64_t stage = 0;
  for (auto [i, op] : llvm::enumerate(ops)) {
    while (stage + 1 < options.stages && i >= starts[stage + 1])
      ++stage;
    setStage(op, stage);
  }
  return success();
}

LogicalResult finishPipelineStages(func::FuncOp func, int64_t stages) {
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (op.hasAttr(kStageAttr)) {
      if (stageOf(&op) >= stages)
        return op.emitOpError("is in pipeline stage ")
               << stageOf(&op) << " of a pipeline of " << stages;
      continue;
    }
    int64_t stage = kReplicatedStage;
    for (Value v : op.getOperands())
      if (Operation *def = v.getDefiningOp())
        stage = std::max(stage, stageOf(def));
    setStage(&op, stage);
  }
  return success();
}

std::vector<double> stageSeconds(func::FuncOp func, const PipelineOptions &options) {
  std::vector<double> seconds(options.stages, 0);
  for (Operation &op : func.getBody().front().without_terminator()) {
    int64_t stage = stageOf(&op);
    if (stage >= 0 && stage < options.stages)
      seconds[stage] += options.opSeconds ? options.opSeconds(&op) : defaultOpSeconds(&op);
  }
  return seconds;
}

namespace {

/// What splitPipeline builds each part from.
struct PartOps {
  SmallVector<Operation *> ops;
  llvm::SetVector<unsigned> arguments;
  llvm::SetVector<unsigned> values;
  /// Train step results computed here: (result, value).
  SmallVector<std::pair<unsigned, Value>> results;
};

} // namespace

FailureOr<PipelineSplit> splitPipeline(func::FuncOp func, int64_t stages) {
  Block &body = func.getBody().front();
  TrainStepParts stepParts(func);
  PipelineSplit split;
  split.stages = stages;
  split.argumentReaders.resize(func.getNumArguments());
  std::vector<PartOps> parts(stages * 3);
  llvm::DenseMap<Operation *, unsigned> position;
  llvm::DenseMap<Operation *, unsigned> partOf;
  // Only what the results depend on (a gradient nobody reads, of the data
  // say, would otherwise be computed and sent).
  llvm::DenseSet<Operation *> live;
  SmallVector<Value> worklist(body.getTerminator()->getOperands());
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (def && live.insert(def).second)
      worklist.append(def->operand_begin(), def->operand_end());
  }
  for (Operation &op : body.without_terminator()) {
    position[&op] = position.size();
    if (!live.count(&op))
      continue;
    int64_t stage = stageOf(&op);
    if (stage == kReplicatedStage)
      continue;
    if (stage < 0 || stage >= stages)
      return op.emitOpError("has no pipeline stage (run finishPipelineStages first)");
    unsigned part = stage * 3 + static_cast<unsigned>(stepParts.part(&op));
    partOf[&op] = part;
    parts[part].ops.push_back(&op);
  }

  // Replicated ops: cloned into each part that reads them.
  auto addReplicated = [&](PartOps &part, llvm::ArrayRef<Value> roots) {
    llvm::SetVector<Operation *> added;
    SmallVector<Value> worklist(roots.begin(), roots.end());
    while (!worklist.empty()) {
      Operation *def = worklist.pop_back_val().getDefiningOp();
      if (!def || partOf.count(def) || !added.insert(def))
        continue;
      worklist.append(def->operand_begin(), def->operand_end());
    }
    part.ops.append(added.begin(), added.end());
    llvm::sort(part.ops, [&](Operation *a, Operation *b) { return position[a] < position[b]; });
  };
  for (PartOps &part : parts) {
    SmallVector<Value> read;
    for (Operation *op : part.ops)
      read.append(op->operand_begin(), op->operand_end());
    addReplicated(part, read);
  }

  // The train step's results: in the part that computes them; a replicated
  // one (the step counter) in every stage's update.
  Operation *ret = body.getTerminator();
  split.resultStages.resize(ret->getNumOperands());
  for (auto [r, v] : llvm::enumerate(ret->getOperands())) {
    Operation *def = v.getDefiningOp();
    if (!def)
      continue; // a state returned unchanged
    if (partOf.count(def)) {
      parts[partOf[def]].results.push_back({static_cast<unsigned>(r), v});
      split.resultStages[r].push_back(partOf[def] / 3);
      continue;
    }
    for (int64_t s = 0; s < stages; ++s) {
      PartOps &update = parts[s * 3 + 2];
      addReplicated(update, {v});
      update.results.push_back({static_cast<unsigned>(r), v});
      split.resultStages[r].push_back(s);
    }
  }

  // What each part reads from the arguments and from other parts.
  llvm::DenseMap<Value, unsigned> valueIndex;
  std::vector<Value> valueOf;
  for (auto [p, part] : llvm::enumerate(parts)) {
    llvm::DenseSet<Operation *> inPart(part.ops.begin(), part.ops.end());
    for (Operation *op : part.ops)
      for (Value v : op->getOperands()) {
        if (auto arg = dyn_cast<BlockArgument>(v)) {
          part.arguments.insert(arg.getArgNumber());
          continue;
        }
        Operation *def = v.getDefiningOp();
        if (inPart.count(def))
          continue;
        unsigned from = partOf.lookup(def);
        auto [it, added] = valueIndex.try_emplace(v, valueOf.size());
        if (added) {
          valueOf.push_back(v);
          PipelineValue value;
          value.stage = from / 3;
          value.phase = static_cast<PipelinePhase>(from % 3);
          value.type = cast<RankedTensorType>(v.getType());
          split.values.push_back(value);
        }
        PipelineValue &value = split.values[it->second];
        auto readerPhase = static_cast<PipelinePhase>(p % 3);
        if (readerPhase == PipelinePhase::Update && value.phase != PipelinePhase::Update) {
          if (value.phase == PipelinePhase::Forward)
            return op->emitOpError("(an optimizer update) reads a forward value: it cannot "
                                   "be summed over a pipeline's micro-batches");
          value.accumulated = true;
        } else if (readerPhase != PipelinePhase::Update) {
          if (value.phase == PipelinePhase::Update)
            return op->emitOpError("reads a value of the optimizer's update");
          value.perMicrobatch = true;
        }
        int64_t readerStage = static_cast<int64_t>(p / 3);
        if (readerStage != value.stage && !llvm::is_contained(value.remoteStages, readerStage))
          value.remoteStages.push_back(readerStage);
        part.values.insert(it->second);
      }
  }
  for (auto [i, args] : llvm::enumerate(split.argumentReaders))
    for (int64_t s = 0; s < stages; ++s)
      for (int phase = 0; phase < 3; ++phase)
        if (parts[s * 3 + phase].arguments.contains(i) && !llvm::is_contained(args, s))
          args.push_back(s);
  for (PipelineValue &value : split.values)
    llvm::sort(value.remoteStages);

  // Each part as a function: its arguments and values in, the values other
  // parts read and its train step results out.
  OpBuilder b(func.getContext());
  b.setInsertionPointAfter(func);
  split.parts.resize(parts.size());
  for (auto [p, ops] : llvm::enumerate(parts)) {
    PipelinePart &part = split.parts[p];
    part.stage = static_cast<int64_t>(p / 3);
    part.phase = static_cast<PipelinePhase>(p % 3);
    SmallVector<Value> inputs, outputs;
    for (unsigned a : ops.arguments) {
      part.inputs.push_back({PipelineInput::Argument, a});
      inputs.push_back(func.getArgument(a));
    }
    for (unsigned v : ops.values) {
      part.inputs.push_back({PipelineInput::Value, v});
      inputs.push_back(valueOf[v]);
    }
    for (auto [v, value] : llvm::enumerate(split.values))
      if (value.stage == part.stage && value.phase == part.phase) {
        part.outputs.push_back(static_cast<int64_t>(v));
        outputs.push_back(valueOf[v]);
      }
    for (auto [r, v] : ops.results) {
      part.trainResults.push_back({r, static_cast<unsigned>(outputs.size())});
      part.outputs.push_back(-1);
      outputs.push_back(v);
    }
    if (ops.ops.empty() && outputs.empty())
      continue;
    std::string name = (func.getSymName() + "_stage" + Twine(part.stage) + "_" +
                        phaseName(part.phase))
                           .str();
    func::FuncOp f = outlineOps(b, func.getLoc(), name, inputs, ops.ops, outputs);
    part.func = f;
    b.setInsertionPointAfter(f);
  }
  return split;
}

} // namespace dlc

namespace dlc {
#define GEN_PASS_DEF_DLCPIPELINESTAGES
#include "passes/Passes.h.inc"
} // namespace dlc

namespace {

struct PipelineStagesPass : public dlc::impl::DlcPipelineStagesBase<PipelineStagesPass> {
  using DlcPipelineStagesBase::DlcPipelineStagesBase;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func->hasAttr("dlc.optimizer")) {
      dlc::PipelineOptions options;
      options.stages = stages;
      if (failed(dlc::assignForwardStages(func, options)))
        signalPassFailure();
    } else if (dlc::isTrainStep(func) && failed(dlc::finishPipelineStages(func, stages))) {
      signalPassFailure();
    }
  }
};

} // namespace
