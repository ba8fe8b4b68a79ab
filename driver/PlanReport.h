//===- PlanReport.h - what the memory plan of a graph costs -----*- C++ -*-===//
//
// The figures `dlc plan M` and `dlc compile M --stats` print: kernels
// before and after fusion, the arena against its lower bound and against
// no reuse at all, and the weights; for a train step (`dlc plan --train`)
// also the state, what is live at the arena's peak, the FLOPs of forward,
// backward and update, and what dlc-rematerialize traded. Read from a
// function that went through the dlc-compile pipeline (the attributes of
// dlc-plan-memory and dlc-rematerialize).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_PLANREPORT_H
#define DLC_DRIVER_PLANREPORT_H

#include "passes/analysis/TrainStep.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace dlc {

struct PlanReport {
  int64_t kernelsBefore = 0, kernelsAfter = 0;
  /// The arena, the largest sum of live bytes at one step (no arena for
  /// this schedule is smaller), and the sum of every kernel result.
  int64_t arenaBytes = 0, lowerBound = 0, naiveBytes = 0;
  int64_t buffers = 0, inPlaceBuffers = 0;
  std::string packer;
  /// Parameters and constants (the weight section).
  int64_t weightBytes = 0, weightTensors = 0;
  /// Graph inputs, which live in the caller's buffers (state excluded).
  int64_t inputBytes = 0;
  /// State arguments (`dlc.state`: a train step's parameters, moments and
  /// step counter), in their own buffers, updated in place.
  int64_t stateBytes = 0;
};

/// What a train step adds to its PlanReport.
struct TrainReport {
  /// The state by kind: parameters (read by the forward pass), optimizer
  /// moments, and the step counter.
  int64_t parameterBytes = 0, momentBytes = 0, stepBytes = 0;
  int64_t parameterTensors = 0, momentTensors = 0;
  /// The arena's peak (the lower bound), its step (from 1) among `steps`
  /// kernels, and what is live there (passes/analysis/TrainStep.h).
  int64_t peakBytes = 0, peakStep = 0, steps = 0;
  PeakBreakdown peak;
  StepFlops flops;
  /// dlc-rematerialize's record (`dlc.rematerialization`), when it ran.
  bool rematerialized = false, budgetMet = false;
  int64_t budget = 0, arenaBefore = 0, arenaAfter = 0, peakBefore = 0,
          peakAfter = 0, recomputedValues = 0, recomputedOps = 0;
};

/// The kernels of `func` as it stands (its top-level ops but parameters,
/// constants and the return).
int64_t countKernels(mlir::func::FuncOp func);

/// Runs the dlc-compile pipeline on `module` (with MLIR's pass-manager
/// flags, e.g. --mlir-print-ir-after-all), with dlc-rematerialize when
/// `memoryBudget` is positive; errors go to the diagnostic handler.
/// `cpuLayout`: the module is for the CPU (dlc-cpu-layout runs).
mlir::LogicalResult runCompilePipeline(mlir::ModuleOp module,
                                       int64_t memoryBudget = 0, bool cpuLayout = false);

/// The report of a planned `func`; `kernelsBefore` was counted before the
/// pipeline ran.
PlanReport summarizePlan(mlir::func::FuncOp func, int64_t kernelsBefore);

/// Prints `report`, one `name: value` line per figure.
void printPlanReport(const PlanReport &report, llvm::raw_ostream &os);

/// The train-step figures of a planned train step `func`.
TrainReport summarizeTrainStep(mlir::func::FuncOp func);

/// Prints `report` after its PlanReport.
void printTrainReport(const TrainReport &report, llvm::raw_ostream &os);

/// 1234567 -> "1,234,567": byte and FLOP counts in every report.
std::string withCommas(int64_t value);

} // namespace dlc

#endif // DLC_DRIVER_PLANREPORT_H
