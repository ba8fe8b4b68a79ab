//===- AutoPlan.h - predict every mesh of N devices, choose one -*- C++ -*-===//
//
// `dlc plan M --train --parallel auto --devices N --device-spec S`, and the
// chooser `dlc train --parallel auto` calls (issue 13): every factorisation
// data x model x pipe = N (pipe only up to the model's layers: forward
// kernels that read a parameter), micro-batch counts 1, 2, 4, 8, 16 that
// divide a replica's batch when pipe > 1, ZeRO stage 1 on and off when
// data > 1. Each is planned as a rank runs it: the train step partitioned
// for its (data, model) mesh and compiled at its micro-batch, then
// predicted by passes/analysis/CostModel.h (pipe = 1: both streams
// simulated, memory exact from the memory planner) or
// passes/analysis/PipelineCost.h (pipe > 1: stages, bubble, memory per
// stage). Plans that do not fit the device's memory are pruned; the
// fastest of the rest is chosen.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_AUTOPLAN_H
#define DLC_DRIVER_AUTOPLAN_H

#include "driver/Commands.h"
#include "passes/analysis/CostModel.h"
#include "passes/analysis/PipelineCost.h"

#include <optional>
#include <string>
#include <vector>

namespace dlc {

/// One plan: its mesh and options, then what it is predicted to cost.
struct PlanCandidate {
  int64_t data = 1, model = 1, pipe = 1, microbatches = 1;
  bool zero = false;
  bool gpipe = false;

  /// Per global batch, on the slowest rank.
  double stepSeconds = 0, computeSeconds = 0, communicationSeconds = 0,
         exposedSeconds = 0;
  /// (P - 1) / (M + P - 1); 0 without a pipeline.
  double bubble = 0;
  /// Peak bytes on one device (the largest stage of a pipeline).
  int64_t memoryBytes = 0;
  bool fits = false;
  /// One device's step / (devices x this step).
  double efficiency = 0;
  /// With pipe > 1: the stages.
  std::optional<PipelineCost> pipeline;

  int64_t devices() const { return data * model * pipe; }
  /// "data=2,model=2,pipe=2", or "none" for one device.
  std::string mesh() const;
  /// "data", "tensor", "pipeline", "data,tensor", "data,pipeline", ...
  std::string parallel() const;
};

/// What `choosePlan` searches.
struct AutoPlanRequest {
  int64_t devices = 1;
  /// The global batch; 0: the model's batch dimension as given (--dim),
  /// else 1.
  int64_t batchSize = 0;
  std::string deviceSpec, link;
  /// Also plans pipelines with GPipe (same time, more memory) when set.
  bool gpipe = false;
};

struct AutoPlanResult {
  DeviceSpec device;
  LinkSpec link;
  std::string batchDim;
  int64_t batchSize = 1;
  /// The unpartitioned step on one device.
  PlanCandidate single;
  /// Every plan predicted, the ones that fit first, each part by step time.
  std::vector<PlanCandidate> plans;
  /// Plans that could not be partitioned (a dimension the mesh does not
  /// divide) and why, one line each.
  std::vector<std::string> skipped;
  /// How many partitioned train steps the search compiled.
  size_t programsCompiled = 0;
  /// plans.front() when it fits.
  std::optional<PlanCandidate> chosen;
};

/// Searches the meshes of `request.devices` for the train step of
/// `options.modelPath`. An error (no train block, an unknown device) is
/// reported and its exit code returned; a search where nothing fits is not
/// an error (result.chosen is empty).
ExitCode choosePlan(const CommonOptions &options, const AutoPlanRequest &request,
                    mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                    AutoPlanResult &result);

/// Predicts one plan (`plan`'s mesh and options set; its predictions
/// filled in). False with `error` set when it cannot be partitioned.
bool predictPlan(const CommonOptions &options, const AutoPlanRequest &request,
                 mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                 PlanCandidate &plan, std::string &error);

/// `dlc plan --parallel auto`: the search's table, the chosen plan first,
/// and why it was chosen.
void printAutoPlan(const AutoPlanResult &result, const std::string &modelPath,
                   llvm::raw_ostream &os, size_t rows = 10);

} // namespace dlc

#endif // DLC_DRIVER_AUTOPLAN_H
