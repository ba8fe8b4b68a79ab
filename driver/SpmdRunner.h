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

namespace dlc {

namespace rt::comm {
class Communicator;
}

/// This process's communicator for `mesh`: the launch (mpirun, DLC_*,
/// torchrun) must have `mesh.size()` ranks.
ExitCode openMeshCommunicator(mlir::MLIRContext &context, const Mesh &mesh,
                              std::unique_ptr<rt::comm::Communicator> &comm,
                              double timeoutSeconds = 0);

struct Segment;

/// A partitioned function as this rank runs it: the ops between
/// collectives compiled as CPU modules, the collectives through `comm`.
class SpmdProgram {
public:
  SpmdProgram();
  ~SpmdProgram();
  /// Checks the collective schedule with every rank, cuts and compiles.
  ExitCode build(mlir::MLIRContext &context, mlir::func::FuncOp func, const Mesh &mesh,
                 rt::comm::Communicator &comm);
  /// One run: `inputs` in the function's argument order.
  ExitCode run(const std::vector<HostTensor> &inputs, std::vector<HostTensor> &outputs,
               std::string &error);
  /// Seconds spent so far in the segments (compute) and in the
  /// collectives (communication, waiting included), over all runs.
  double computeSeconds() const { return compute; }
  double collectiveSeconds() const { return collective; }

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
  rt::comm::Communicator *comm = nullptr;
  double compute = 0, collective = 0;
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
