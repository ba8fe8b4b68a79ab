//===- TrainLoop.h - the loop of `dlc train` ---------------------*- C++ -*-===//
//
// Epochs of batches through a TrainStep (driver/train/TrainStep.h), with
// the learning rate of a schedule, an evaluation after each epoch,
// checkpoints, resumption and logs. Plain C++: the verb (driver/Train.cpp)
// builds the step, loads the data and hands over.
//
// Each step: the next batch (prefetched), lr = schedule.at(global step),
// step(); a non-finite loss stops the run at once (exit 3) without writing
// a checkpoint, so the last good one stays the newest. After the last batch
// of an epoch: evaluation, the epoch's line (and JSON record), and a
// checkpoint. A checkpoint is also written when --max-steps is reached and
// when `interrupt` is set (Ctrl-C: after the current step; exit 130).
//
// Resuming loads the newest checkpoint of the directory, checks that it
// belongs to this model and run (model, optimizer, seed, batch size,
// --drop-last, ranks: any difference is exit 2, as is any tensor that does
// not match the state), writes its state into the step and continues at
// its (epoch, batch): the loader replays the same permutation, the schedule
// the same rates, so the final state is bit for bit the one an
// uninterrupted run reaches.
//
// Output: one line per epoch on `out`:
//   epoch 3/5: train_loss 0.4321 eval_loss 0.4012 eval_accuracy 0.8612 (12.3 s, 4872 samples/s)
// (eval_accuracy only for cross_entropy, the eval fields only with
// evaluation data); with `progress`, a bar refreshed in place on it:
//   epoch 3/5 [=========>          ] 212/469 loss 0.4321 4872 samples/s ETA 0:05
// Notes (resumed from, stopped at) and errors go to `err`.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_TRAIN_TRAINLOOP_H
#define DLC_DRIVER_TRAIN_TRAINLOOP_H

#include "driver/ExitCodes.h"
#include "driver/data/Dataset.h"
#include "driver/train/Schedule.h"
#include "driver/train/TrainStep.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace dlc::train {

struct TrainLoopOptions {
  int64_t epochs = 1;
  int64_t batchSize = 32;
  bool dropLast = false;
  /// The data order's seed (driver/data/Loader.h).
  uint64_t seed = 0;
  /// Stop once this many steps have been taken in all (counting the steps
  /// before a resume), and checkpoint.
  std::optional<int64_t> maxSteps;
  /// `base` is overwritten by the step's optimizer().learningRate;
  /// `totalSteps` (0) is filled in: epochs x batches per epoch, whatever
  /// maxSteps is (it stops a run, it does not shorten the schedule).
  LrSchedule schedule;
  /// Empty: no checkpoints (and --resume is an error).
  std::string checkpointDir;
  int64_t keepCheckpoints = 3;
  bool resume = false;
  /// --deterministic: resuming under another execution configuration
  /// (TrainStep::execution) is an error rather than a note.
  bool deterministic = false;
  /// One JSON object per line per epoch, appended when resuming.
  std::string logJsonPath;
  /// Data parallelism: this rank's shard of each batch; rank 0 writes
  /// checkpoints and logs.
  int64_t rank = 0, worldSize = 1;
  /// Which block of every global batch this rank loads, of how many: the
  /// rank on the mesh's `data` axis (ranks that differ on another axis
  /// load the same block). -1: `rank` of `worldSize`.
  int64_t dataRank = -1, dataRanks = -1;
  /// Where the progress bar goes (a terminal), or none.
  std::ostream *progress = nullptr;
  /// Set asynchronously (a SIGINT handler) to stop after the current step.
  const std::atomic<bool> *interrupt = nullptr;
  /// Batches the loader prepares ahead.
  size_t prefetch = 2;
};

/// Trains `step` on `train`, evaluating on `eval` (with `evaluator`) after
/// each epoch when both are given. The datasets' columns are in the order
/// of step.inputs(). Returns the exit code: 0 when the epochs are done or
/// --max-steps is reached, 2 for bad options or a checkpoint that does not
/// fit, 3 for a non-finite loss or a step's runtime fault, 130 after an
/// interrupt.
ExitCode runTrainLoop(TrainStep &step, Evaluator *evaluator,
                      const data::Dataset &train, const data::Dataset *eval,
                      TrainLoopOptions options, std::ostream &out,
                      std::ostream &err);

} // namespace dlc::train

#endif // DLC_DRIVER_TRAIN_TRAINLOOP_H
