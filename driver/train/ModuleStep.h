//===- ModuleStep.h - A TrainStep and Evaluator over compiled modules -*- C++ -*-===//
//
// The train step and its evaluator as modules (.dlcm bytes) run through the
// runtime's C API: the train step's session owns the state (parameters,
// moments, step counter) on the device between steps; an evaluation session
// gets the parameters copied in before each evaluation.
//
// Modules have static shapes: each batch size (the configured one, and an
// epoch's last when the data does not divide evenly) has its own pair of
// modules, asked of a ModuleSource on first use; a batch of another size
// runs with the state copied to its session and back.
//
// `dlc train` compiles the modules as it goes (driver/CompiledStep);
// `dlc-train-job` reads them from a job folder written ahead of time by
// `dlc train --compile-only`, and needs no compiler. Both link this, the
// runtime and the loop only.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_TRAIN_MODULESTEP_H
#define DLC_DRIVER_TRAIN_MODULESTEP_H

#include "driver/train/TrainStep.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dlc::train {

/// What the loop asks of a step that the modules do not say themselves.
struct ModuleStepInfo {
  std::string modelName;
  std::string lossKind;
  OptimizerInfo optimizer;
  /// The loss is the batch mean (else the sum): the evaluator scales it.
  bool lossIsMean = true;
  /// The runtime's device name: "cpu", "cuda", "cuda:N" or "cuda-emu".
  std::string device = "cpu";
  /// The batch size the state lives at (the global batch).
  int64_t batchSize = 0;
  /// The mesh the train module is partitioned for (`data=N`; "" for none):
  /// its sessions run this process's rank, each on its block of the batch.
  std::string mesh;
  int64_t ranks = 1;
};

/// The train-step and evaluation modules of one batch size.
struct ModulePair {
  std::vector<uint8_t> train, eval;
};

/// Produces the modules for a batch of `rows` rows (compiling them, or
/// reading them from a job folder); a failure's status is reported as is.
using ModuleSource = std::function<Status(int64_t rows, ModulePair &out)>;

/// Opens the step and evaluator on `first` (the modules of
/// info.batchSize); other batch sizes come from `source` on first use.
Status openModuleTraining(const ModuleStepInfo &info, ModulePair first,
                          ModuleSource source, std::unique_ptr<TrainStep> &step,
                          std::unique_ptr<Evaluator> &evaluator);

/// The per-sample data inputs of a train-step module (all inputs but the
/// learning rate `lr`, without the batch dimension), as TrainStep::inputs
/// gives them; for loading the data before any session is opened.
Status moduleDataInputs(const std::vector<uint8_t> &trainModule,
                        std::vector<TensorSpec> &out);

} // namespace dlc::train

#endif // DLC_DRIVER_TRAIN_MODULESTEP_H
