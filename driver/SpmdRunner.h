//===- SpmdRunner.h - a partitioned graph on this process's rank -*- C++ -*-===//
//
// `mpirun -np N dlc run M --mesh ... --parallel ...`: each process runs its
// rank of the partitioned graph on the CPU, the collectives through
// runtime/comm (driver/SpmdRunner.cpp says how).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_SPMDRUNNER_H
#define DLC_DRIVER_SPMDRUNNER_H

#include "driver/ExitCodes.h"
#include "oracle/kernels/Tensor.h"
#include "support/HostTensor.h"
#include "support/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace dlc {

namespace rt::comm {
class Communicator;
}

/// This process's communicator for `mesh`: the launch (mpirun, DLC_*,
/// torchrun) must have `mesh.size()` ranks.
ExitCode openMeshCommunicator(mlir::MLIRContext &context, const Mesh &mesh,
                              std::unique_ptr<rt::comm::Communicator> &comm,
                              double timeoutSeconds = 0);

/// How an SpmdProgram carries out its collectives.
struct SpmdOptions {
  /// All-reduces whose operands become ready together (one level of the
  /// program: a backward pass's gradients) go as one call of up to this
  /// many bytes, issued as soon as its last operand is computed, while
  /// the segments after it run (DDP's buckets).
  int64_t bucketBytes = 25 << 20;
  /// Shards of the mesh this process runs, one after another: the
  /// program's mesh has `comm.size() * localShards` ranks.
  int64_t localShards = 1;
  /// Every collective gathers all shards' operands and evaluates the
  /// oracle's definition in shard order (driver/HostCollectives.h): bits
  /// that do not depend on the number of processes.
  bool inShardOrder = false;
  /// Time every kernel of the segments (SpmdProgram::printKernelTimes).
  bool timeKernels = false;
};

/// A partitioned function as this process runs it: the ops between
/// collectives compiled as CPU modules, the collectives through `comm` on
/// a communication thread, so that they overlap the segments that do not
/// need their results (driver/SpmdRunner.cpp says how it is cut).
class SpmdProgram {
public:
  SpmdProgram();
  ~SpmdProgram();
  /// Checks the collective schedule with every rank, cuts and compiles.
  /// `mesh` is the program's (every shard a rank).
  ExitCode build(mlir::MLIRContext &context, mlir::func::FuncOp func, const Mesh &mesh,
                 rt::comm::Communicator &comm, const SpmdOptions &options = {});
  /// One run: `inputs[s]` are local shard s's arguments in the function's
  /// order; `outputs[s]` its results.
  ExitCode run(const std::vector<std::vector<HostTensor>> &inputs,
               std::vector<std::vector<HostTensor>> &outputs, std::string &error);
  /// Every shard's block, in mesh rank order, from this process's shards'
  /// `blocks` (every process calls it).
  ExitCode gatherShards(const std::vector<HostTensor> &blocks, std::vector<HostTensor> &all,
                        std::string &error);
  /// Over all runs: seconds in the segments (compute), seconds the
  /// communication thread spent in collectives, and seconds the segments
  /// waited for a collective's result (communication not overlapped).
  double computeSeconds() const;
  double collectiveSeconds() const;
  double exposedSeconds() const;
  /// The mean of compute + exposed over the runs after the first (0
  /// before a second run): the steady step, without the warm-up that the
  /// cost model does not predict.
  double secondsPerRunAfterFirst() const;
  /// Collective calls per run (after bucketing).
  size_t callsPerRun() const;
  /// With SpmdOptions::timeKernels: each segment's kernels, measured per
  /// call beside the cost model's prediction on `deviceSpec` (a name of
  /// devices/ or a file; none when it cannot be loaded), as a table, and
  /// the sums: how the model's kernel rates are checked against the
  /// kernels dlc generates.
  void printKernelTimes(llvm::raw_ostream &os, const std::string &deviceSpec) const;

  /// Each call of the communication thread (a collective, a bucket of
  /// all-reduces, a shard) with its mean seconds a run beside the cost
  /// model's prediction on `deviceSpec`, as a table: how the model's
  /// collective terms are checked against the host path.
  void printCollectiveTimes(llvm::raw_ostream &os, const std::string &deviceSpec) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Runs `func` (partitioned for `mesh`) as this process's rank, given the
/// whole inputs; `outputs` are whole on every rank. The launch (mpirun,
/// DLC_*, torchrun) must have `mesh.size()` ranks; every rank checks that
/// all issue the same collectives before the first. Sets `rank`.
ExitCode runPartitionedOnRanks(mlir::MLIRContext &context, mlir::func::FuncOp func,
                               const Mesh &mesh, const std::vector<oracle::Tensor> &inputs,
                               std::vector<oracle::Tensor> &outputs, int &rank,
                               double timeoutSeconds = 0);

} // namespace dlc

#endif // DLC_DRIVER_SPMDRUNNER_H
