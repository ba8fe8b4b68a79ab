//===- PartitionedStep.h - dlc train on the ranks of a mesh ------*- C++ -*-===//
//
// `mpirun -np N dlc train M --mesh data=N --parallel data`: a TrainStep whose
// step is the partitioned train step on this process's rank
// (driver/PartitionedStep.cpp). No evaluator yet.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_PARTITIONEDSTEP_H
#define DLC_DRIVER_PARTITIONEDSTEP_H

#include "driver/Commands.h"
#include "driver/train/TrainStep.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>

namespace dlc {

/// Builds the step for `train.mesh` on this rank; sets `rank` and
/// `worldSize` (the loop shards each batch by them and only rank 0 writes).
ExitCode buildPartitionedTraining(const CommonOptions &options, const TrainOptions &train,
                                  mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                                  std::unique_ptr<train::TrainStep> &step, int &rank,
                                  int &worldSize);

} // namespace dlc

#endif // DLC_DRIVER_PARTITIONEDSTEP_H
