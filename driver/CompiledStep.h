//===- CompiledStep.h - dlc train's step on compiled modules ----*- C++ -*-===//
//
// The TrainStep and Evaluator of driver/train/TrainStep.h for a .dlg model:
// its train block's loss graph differentiated into the train step
// (dlc-differentiate) and its evaluation graph (loss and correct count),
// both compiled for the device and run through the runtime's C API. The
// step's state (parameters, moments, step counter) lives in the session on
// the device between steps (docs/design/2026-11-25-training.md).
//
// Modules have static shapes: the batch dimension is bound to
// --batch-size, and a batch of another size (an epoch's last) runs on a
// module compiled for that size on first use, with the state copied to it
// and back (driver/train/ModuleStep.h runs them).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_COMPILEDSTEP_H
#define DLC_DRIVER_COMPILEDSTEP_H

#include "driver/Commands.h"
#include "driver/train/TrainStep.h"
#include "frontend/text/AST.h"
#include "frontend/text/MLIRGen.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"

#include <functional>
#include <memory>
#include <set>
#include <vector>

namespace dlc {

/// Parses `options.modelPath` (a .dlg with a train block), applies the
/// optimizer overrides of `train`, and compiles the train step and its
/// evaluator for `train.device` at batch size `train.batchSize`. Errors are
/// reported through `context` and their exit code returned.
ExitCode buildCompiledTraining(const CommonOptions &options,
                               const TrainOptions &train,
                               mlir::MLIRContext &context,
                               llvm::SourceMgr &sourceMgr,
                               std::unique_ptr<train::TrainStep> &step,
                               std::unique_ptr<train::Evaluator> &evaluator);

/// The symbolic dimension that counts examples: the leading dimension of
/// the entry graph's first input; empty when it is a number. Training binds
/// it to --batch-size.
std::string batchDimension(const dlg::Module &ast);

/// The model of `options` (a .dlg with a train block) built with its loss
/// graph, the batch dimension bound to `batchRows` (the steps on ranks:
/// driver/PartitionedStep, driver/PipelineStep).
ExitCode buildTrainingModel(const CommonOptions &options, int64_t batchRows,
                            mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                            dlg::BuildResult &built);

/// `dlc train --compile-only DIR`: compiles the train step and evaluation
/// modules for --batch-size and for every other batch size `batchSizes`
/// names (given the step's per-sample data inputs: the data's remainders),
/// and writes them with their job.json to DIR (driver/train/TrainingJob.h)
/// for `dlc-train-job`, which runs them without the compiler. No session is
/// opened: a CUDA job compiles on a machine without a GPU.
ExitCode writeCompiledTrainingJob(
    const CommonOptions &options, const TrainOptions &train,
    mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
    const std::string &dir,
    const std::function<ExitCode(const std::vector<data::TensorSpec> &,
                                 std::set<int64_t> &)> &batchSizes);

/// `dlc train --export FILE.dlcm`: compiles the model's graph (not the
/// train step) for `train.device` with the batch dimension bound to
/// `train.batchSize` and every parameter's value read from `step`'s state,
/// and writes the module to `train.exportPath`.
ExitCode exportTrainedModel(const CommonOptions &options,
                            const TrainOptions &train, train::TrainStep &step,
                            mlir::MLIRContext &context,
                            llvm::SourceMgr &sourceMgr);

} // namespace dlc

#endif // DLC_DRIVER_COMPILEDSTEP_H
