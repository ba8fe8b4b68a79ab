//===- PipelineStep.h - dlc train and run on pipeline stages -----*- C++ -*-===//
//
// `mpirun -np N dlc train M --mesh [data=D,]pipe=P --parallel pipeline
// --microbatches K [--schedule 1f1b|gpipe]`: a TrainStep whose step runs
// this rank's stage of the train step (driver/PipelineProgram.h); and
// `dlc run` of a graph over the stages.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_PIPELINESTEP_H
#define DLC_DRIVER_PIPELINESTEP_H

#include "driver/Commands.h"
#include "driver/train/TrainStep.h"
#include "oracle/kernels/Tensor.h"
#include "passes/partition/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>

namespace dlc {

/// How the ranks cut a loss graph into `stages` (assignForwardStages's
/// options): each op weighed by its kernel cost on the CPU ranks' spec.
/// `dlc plan` predicts a pipeline on the same cut.
PipelineOptions pipelineCut(int64_t stages);

/// Builds this rank's stage of the train step for `train.mesh`; sets `rank`
/// and `worldSize`.
ExitCode buildPipelineTraining(const CommonOptions &options, const TrainOptions &train,
                               mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                               std::unique_ptr<train::TrainStep> &step, int &rank,
                               int &worldSize);

/// Runs the graph `func` cut into the stages of `mesh` (`pipe=P`), this
/// process one stage, on whole inputs; rank 0 gets the outputs. Sets
/// `rank`.
ExitCode runPipelineOnRanks(mlir::MLIRContext &context, mlir::func::FuncOp func,
                            const MeshOptions &mesh, const std::vector<oracle::Tensor> &inputs,
                            std::vector<oracle::Tensor> &outputs, int &rank);

} // namespace dlc

#endif // DLC_DRIVER_PIPELINESTEP_H
