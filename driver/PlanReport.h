//===- PlanReport.h - what the memory plan of a graph costs -----*- C++ -*-===//
//
// The figures `dlc plan M` and `dlc compile M --stats` print: kernels
// before and after fusion, the arena against its lower bound and against
// no reuse at all, and the weights. Read from a function that went through
// the dlc-compile pipeline (the attributes of dlc-plan-memory).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_PLANREPORT_H
#define DLC_DRIVER_PLANREPORT_H

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
  /// Graph inputs, which live in the caller's buffers.
  int64_t inputBytes = 0;
};

/// The kernels of `func` as it stands (its top-level ops but parameters,
/// constants and the return).
int64_t countKernels(mlir::func::FuncOp func);

/// Runs the dlc-compile pipeline on `module` (with MLIR's pass-manager
/// flags, e.g. --mlir-print-ir-after-all); errors go to the diagnostic
/// handler.
mlir::LogicalResult runCompilePipeline(mlir::ModuleOp module);

/// The report of a planned `func`; `kernelsBefore` was counted before the
/// pipeline ran.
PlanReport summarizePlan(mlir::func::FuncOp func, int64_t kernelsBefore);

/// Prints `report`, one `name: value` line per figure.
void printPlanReport(const PlanReport &report, llvm::raw_ostream &os);

/// 1234567 -> "1,234,567": byte and FLOP counts in every report.
std::string withCommas(int64_t value);

} // namespace dlc

#endif // DLC_DRIVER_PLANREPORT_H
