//===- StepSignature.h - a train step's arguments, as the loop feeds them -*- C++ -*-===//
//
// The steps that run a train step function on ranks (driver/PartitionedStep,
// driver/PipelineStep) feed its arguments the same way: the data inputs
// from the loader's batch, `lr` from the schedule, the state from what they
// keep between steps. This reads that signature, and each state's initial
// value, from the function once.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_STEPSIGNATURE_H
#define DLC_DRIVER_STEPSIGNATURE_H

#include "driver/ExitCodes.h"
#include "driver/train/TrainStep.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <string>
#include <vector>

namespace dlc {

struct StepArgument {
  enum Kind { Data, Lr, State } kind;
  std::string name;
  /// Its shape in the function (a block of the whole where split).
  std::vector<int64_t> shape;
  size_t state = 0; ///< State: its index in StepSignature::state
};

struct StepSignature {
  std::string model, loss;
  train::OptimizerInfo optimizer;
  std::vector<StepArgument> arguments;
  /// The data inputs per sample (no batch dimension), and every state whole.
  std::vector<data::TensorSpec> data, state;
  std::map<std::string, size_t> stateIndexOf;
  /// Per state: its initial value (whole), and how the function takes it:
  /// per dimension, the mesh axis it is split over or "" (empty: whole on
  /// every rank; the partitioner's `dlc.local_sharding`).
  std::vector<HostTensor> initial;
  std::vector<std::vector<std::string>> split;
  /// Per result: the state index it replaces (result 0, the loss: 0).
  std::vector<size_t> resultState;
};

/// Reads `func` (a train step, possibly partitioned: `wholeTypes` are its
/// arguments' types before, the whole values').
ExitCode readStepSignature(mlir::MLIRContext &context, mlir::func::FuncOp func,
                           llvm::ArrayRef<mlir::Type> wholeTypes, StepSignature &out);

} // namespace dlc

#endif // DLC_DRIVER_STEPSIGNATURE_H
