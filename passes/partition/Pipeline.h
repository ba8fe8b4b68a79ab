//===- Pipeline.h - a train step cut into pipeline stages --------*- C++ -*-===//
//
// Pipeline parallelism (docs/design/2026-11-26-pipeline.md): the model's
// layers are cut into P stages, one per rank along the mesh axis `pipe`,
// each micro-batch flowing forward through them and its gradients back.
//
// Stages are decided on the loss graph, before dlc-differentiate: its
// forward ops are cut into P contiguous runs of program order whose
// predicted times (the op's roofline, `PipelineOptions::opSeconds`) are as
// even as possible, or where the model's `@stage` lines put them. Each op
// carries its stage as `dlc.stage`; dlc-differentiate gives every op of an
// op's vector-Jacobian product that op's stage, so a layer's backward runs
// where its forward ran. `finishPipelineStages` then gives the ops left (the
// optimizer's update, gradient sums) the latest stage of what they read, and
// marks the ops that read no staged value (constants, the learning rate's
// and step counter's scalars) replicated: every part that needs one
// computes it.
//
// `splitPipeline` cuts the train step into parts, one per stage and phase
// (forward, backward, update: TrainStepParts), each a function of its own.
// A value one part computes and another reads crosses between them: kept on
// the rank when both are on one stage, sent (`send`/`recv` between the
// stages' ranks) when not. Values the update reads from the backward (the
// gradients) are summed over the micro-batches before it runs once.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_PARTITION_PIPELINE_H
#define DLC_PASSES_PARTITION_PIPELINE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"

#include <functional>
#include <string>
#include <vector>

namespace dlc {

/// An op's stage (an i64 attribute).
inline constexpr llvm::StringLiteral kStageAttr = "dlc.stage";
/// The stage of an op that every stage computes for itself.
inline constexpr int64_t kReplicatedStage = -1;

/// The stage `op` was given: its `dlc.stage`, or kReplicatedStage.
int64_t stageOf(mlir::Operation *op);

struct PipelineOptions {
  int64_t stages = 1;
  /// The predicted seconds of one op, which the cut balances. Default: a
  /// roofline at 100 GFLOP/s and 10 GB/s (a CPU core's ratio) plus 2 us.
  std::function<double(mlir::Operation *)> opSeconds;
};

/// Cuts `weights` into `parts` contiguous non-empty runs whose largest sum
/// is as small as it can be (the linear partition problem); returns each
/// run's first index. The cut of assignForwardStages, and of
/// passes/analysis/PipelineCost.h's prediction of it.
std::vector<size_t> balancedCuts(const std::vector<double> &weights, int64_t parts);

/// Gives every op of the loss graph `func` (before dlc-differentiate) that
/// reads a value its stage: contiguous runs, balanced by predicted time,
/// or the stages the model's `@stage` lines marked (then their number must
/// be `options.stages`).
mlir::LogicalResult assignForwardStages(mlir::func::FuncOp func,
                                        const PipelineOptions &options);

/// After dlc-differentiate: every op that has no stage yet gets the latest
/// stage among the ops it reads, or kReplicatedStage when it reads none.
mlir::LogicalResult finishPipelineStages(mlir::func::FuncOp trainStep, int64_t stages);

/// The predicted seconds of each stage's ops (forward, backward and update
/// together, replicated ops not counted), by `options.opSeconds`.
std::vector<double> stageSeconds(mlir::func::FuncOp func, const PipelineOptions &options);

enum class PipelinePhase { Forward = 0, Backward = 1, Update = 2 };
const char *phaseName(PipelinePhase phase);

/// The order stage `stage` of `stages` runs micro-batches 0..K-1 in:
/// (phase, micro-batch), forward and backward only. GPipe: every forward,
/// then every backward; 1F1B (PipeDream-flush): P - s - 1 forwards, then
/// one forward and one backward in turn, then the remaining backwards.
std::vector<std::pair<PipelinePhase, int64_t>>
pipelineOrder(bool gpipe, int64_t stage, int64_t stages, int64_t microbatches,
              bool hasBackward);

/// A value one part computes and other parts read.
struct PipelineValue {
  int64_t stage = 0;
  PipelinePhase phase = PipelinePhase::Forward;
  mlir::RankedTensorType type;
  /// The stages other than its own whose parts read it (sent there).
  std::vector<int64_t> remoteStages;
  /// Read by an update part: summed over the micro-batches first.
  bool accumulated = false;
  /// Read by a forward or backward part (kept per micro-batch until then).
  bool perMicrobatch = false;
};

/// One part's argument: an argument of the train step, or a value.
struct PipelineInput {
  enum Kind { Argument, Value } kind = Argument;
  unsigned index = 0;
};

struct PipelinePart {
  int64_t stage = 0;
  PipelinePhase phase = PipelinePhase::Forward;
  /// Null when the part has no ops (a stage without update, ...).
  mlir::func::FuncOp func;
  std::vector<PipelineInput> inputs;
  /// Per result of `func`: the value it is, or -1 for one only the train
  /// step's results read.
  std::vector<int64_t> outputs;
  /// (train step result, result of `func`): the loss and new state this
  /// part computes.
  std::vector<std::pair<unsigned, unsigned>> trainResults;
};

struct PipelineSplit {
  int64_t stages = 0;
  /// stages × 3, at `stage * 3 + phase`.
  std::vector<PipelinePart> parts;
  std::vector<PipelineValue> values;
  /// Per train step argument: the stages whose parts read it.
  std::vector<std::vector<int64_t>> argumentReaders;
  /// Per train step result: the stages that compute it (one, or every
  /// stage for replicated ones such as the step counter; none for a state
  /// returned unchanged).
  std::vector<std::vector<int64_t>> resultStages;

  const PipelinePart &part(int64_t stage, PipelinePhase phase) const {
    return parts[stage * 3 + static_cast<int64_t>(phase)];
  }
};

/// Cuts `func` (every op staged by finishPipelineStages, or a forward
/// graph assigned by assignForwardStages and finishPipelineStages) into
/// its parts, added to its module as `<name>_stage<s>_<phase>`. `func`
/// itself is left as it is.
mlir::FailureOr<PipelineSplit> splitPipeline(mlir::func::FuncOp func, int64_t stages);

} // namespace dlc

#endif // DLC_PASSES_PARTITION_PIPELINE_H
