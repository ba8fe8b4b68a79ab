//===- PipelineProgram.h - one pipeline stage on this rank -------*- C++ -*-===//
//
// `mpirun -np N dlc train|run M --mesh [data=D,]pipe=P --parallel pipeline
// --microbatches K`: this process is one stage of one data replica. It
// compiles its stage's parts (passes/partition/Pipeline.h: forward,
// backward, update) for the CPU and runs a step as the schedule orders the
// micro-batches:
//
//  - GPipe: every micro-batch's forward, then every backward;
//  - 1F1B (PipeDream-flush, Megatron's default): stage s runs P-s-1
//    forwards, then alternates one forward and one backward, then the
//    remaining backwards, so that it holds at most P-s micro-batches'
//    activations instead of K.
//
// A value another stage reads is posted to that stage's rank as soon as it
// is computed (Communicator::postSend: never waiting for the receiver); a
// rank receives the messages of each peer in the order the peer sends them
// (every rank knows every stage's schedule), keeping those that come
// before the one it waits for. The gradients the update reads are summed
// over the micro-batches, averaged, averaged again over the data replicas
// of the stage (in replica order: the same bits for every launch), then
// the update runs once.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_PIPELINEPROGRAM_H
#define DLC_DRIVER_PIPELINEPROGRAM_H

#include "driver/ExitCodes.h"
#include "passes/partition/Pipeline.h"
#include "support/HostTensor.h"
#include "support/Mesh.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dlc {

namespace rt::comm {
class Communicator;
}

enum class PipelineSchedule { GPipe, OneForwardOneBackward };

class PipelineProgram {
public:
  PipelineProgram();
  ~PipelineProgram();

  /// `func` (every op staged) is split and this rank's stage compiled; the
  /// mesh has a `pipe` axis and may have a `data` one, nothing else.
  ExitCode build(mlir::MLIRContext &context, mlir::func::FuncOp func, const Mesh &mesh,
                 rt::comm::Communicator &comm, PipelineSchedule schedule,
                 int64_t microbatches);

  int64_t stage() const;
  int64_t stages() const;
  int64_t dataIndex() const;
  int64_t dataSize() const;
  const PipelineSplit &split() const;
  /// The rank that runs stage `stage` of data replica `data`.
  int64_t rankOf(int64_t stage, int64_t data) const;

  /// One step. `argument(i, m)` gives the function's argument i for
  /// micro-batch m (m = -1: for the update, which runs once); it is asked
  /// only for the arguments this stage reads. `results[r]` gets, for each
  /// result this stage computes, its value per micro-batch (forward and
  /// backward results) or once (update results); the others stay empty.
  ExitCode run(const std::function<HostTensor(unsigned, int64_t)> &argument,
               std::vector<std::vector<HostTensor>> &results, std::string &error);

  /// Over all runs: seconds computing, seconds waiting for a message.
  double computeSeconds() const;
  double waitSeconds() const;
  /// Predicted idle fraction of the schedule, (P-1)/(K+P-1), and the one
  /// measured on this rank over all runs: 1 - compute / (compute + waits).
  double idealBubble() const;
  double measuredBubble() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace dlc

#endif // DLC_DRIVER_PIPELINEPROGRAM_H
