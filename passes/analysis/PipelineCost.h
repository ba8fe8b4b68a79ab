//===- PipelineCost.h - Predicted step and memory of a pipeline -*- C++ -*-===//
//
// What a train step costs cut into P pipeline stages and run as M
// micro-batches (issue 13), predicted from one micro-batch's planned train
// step on one (data, model) rank, before the pipeline pass exists on the
// path being planned:
//
//  - stages: the forward kernels cut as the ranks cut them (passes/
//    partition/Pipeline.h's balancedCuts, each kernel weighing its
//    forward, its backward and its parameters' update); the backward
//    kernels, which run the layers in reverse, cut in program order into
//    runs for stages P-1 .. 0, each as long as its stage's layers'
//    gradients weigh; an update kernel with the parameter it updates, a
//    collective with the kernel before it; a state argument on every stage
//    that reads it (a tied embedding: the first and the last);
//  - time: each stage runs its parts (a micro-batch's forward, its
//    backward with its tensor-parallel collectives) in its schedule's
//    order (pipelineOrder: GPipe or 1F1B), a part starting once its stage
//    is free and its input has come from the neighbouring stage, a
//    transfer (alpha-beta on the link) after that part ends; then each
//    stage's update and its gradients' data-parallel collectives (not
//    overlapped: conservative). A weight gradient fused into the update
//    is computed for every micro-batch. Ranks of one host (CPU ranks)
//    share it while they compute at once: each part is costed at every
//    count of busy stages and the schedule simulated with processor
//    sharing. The slot (the slowest stage's micro-batch and the widest
//    transfer) and the bubble (P - 1) / (M + P - 1) are reported beside.
//    On CPU ranks' host path (DeviceSpec::hostPath) each part is a module
//    run with its overheads;
//  - memory per stage: its state (parameters, moments), a gradient
//    accumulator as large as its parameters, the activations it saves for
//    the backward pass times the micro-batches in flight (1F1B: stage s
//    holds min(P - s, M); GPipe: M), its largest kernel's operands and
//    results as working space, and the micro-batch's inputs.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_ANALYSIS_PIPELINECOST_H
#define DLC_PASSES_ANALYSIS_PIPELINECOST_H

#include "passes/analysis/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <vector>

namespace dlc {

/// The stage of every forward kernel of a planned train step: kernel ->
/// stage in [0, stages), contiguous and in program order.
llvm::DenseMap<mlir::Operation *, int64_t>
splitStages(mlir::func::FuncOp step, int64_t stages, const DeviceSpec &device,
            const LinkSpec &link);
/// The same, and each stage's share of the backward (seconds its forward
/// kernels' gradients weigh).
llvm::DenseMap<mlir::Operation *, int64_t>
splitStages(mlir::func::FuncOp step, int64_t stages, const DeviceSpec &device,
            const LinkSpec &link, std::vector<double> *backwardShare);

/// The number of forward kernels that read a parameter: the most stages a
/// train step can be cut into with a layer in each.
int64_t countLayers(mlir::func::FuncOp step);

struct StageCost {
  /// One micro-batch's forward and backward compute, its tensor-parallel
  /// (non-`data`) collectives, and the step's update and data-parallel
  /// collectives.
  double forwardSeconds = 0, backwardSeconds = 0, microbatchCommSeconds = 0;
  double updateSeconds = 0, gradientSyncSeconds = 0;
  /// Bytes of activations crossing to the next stage per micro-batch.
  int64_t sendBytes = 0;
  int64_t stateBytes = 0, gradientBytes = 0, savedBytes = 0, workspaceBytes = 0,
          inputBytes = 0;
  int64_t inFlight = 0;
  int64_t memoryBytes() const {
    return stateBytes + gradientBytes + savedBytes * inFlight + workspaceBytes + inputBytes;
  }
};

struct PipelineCost {
  int64_t stages = 1, microbatches = 1;
  std::vector<StageCost> perStage;
  /// One micro-batch slot (the slowest stage and the widest transfer), the
  /// transfer part of it, and the step.
  double slotSeconds = 0, transferSeconds = 0, stepSeconds = 0;
  /// Busy compute time of the slowest stage in a step.
  double computeSeconds = 0;
  double bubbleFraction() const {
    return double(stages - 1) / double(microbatches + stages - 1);
  }
  int64_t peakMemoryBytes() const;
};

/// `microbatchStep`: one micro-batch's train step, partitioned for the
/// pipeline's (data, model) rank and planned (dlc-compile pipeline).
/// `optimizerShards` > 1 predicts ZeRO stage 1 over that many data ranks
/// from a step planned without it: the optimizer moments and the update
/// split that many ways, the gradients' reduce-scatter and parameters'
/// all-gather moving the bytes of the all-reduce they replace.
PipelineCost estimatePipeline(mlir::func::FuncOp microbatchStep, int64_t stages,
                              int64_t microbatches, bool gpipe, const DeviceSpec &device,
                              const LinkSpec &link, int64_t optimizerShards = 1);

} // namespace dlc

#endif // DLC_PASSES_ANALYSIS_PIPELINECOST_H
