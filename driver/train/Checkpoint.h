//===- Checkpoint.h - training state on disk, written atomically -*- C++ -*-===//
//
// A checkpoint is `<dir>/ckpt-<global step>.safetensors`: every state tensor
// of the train step under its name, and in the safetensors "__metadata__"
// (a string map) where the loop stood:
//
//   format          "dlc-checkpoint"       format_version  "1"
//   model           the model's name       optimizer       "adam", ...
//   epoch           epochs completed       batch_in_epoch  batches of `epoch` done
//   global_step     steps taken            seed            the data order's seed
//   batch_size, drop_last, world_size      what the position counts in
//   data_order      "splitmix64-fisher-yates" (driver/data/Loader.h)
//   epoch_loss_sum, epoch_samples          the current epoch's loss so far
//                                          (a C99 hex float, exact)
//
// The data order's RNG state is a function of (seed, epoch), so the
// metadata restores it. Writing is atomic: the bytes go to
// `<dir>/.ckpt-<step>.safetensors.tmp`, which is fsynced, renamed over the
// final name, and the directory fsynced; a crash at any point leaves the
// previous checkpoints intact and at worst a stale temporary file, which
// readers ignore and the next run removes. Then all but the newest K
// checkpoints are deleted.
//
// Test hook: DLC_TEST_CHECKPOINT_PAUSE_MS=N sleeps N ms between the fsync
// of the temporary file and the rename, so a test can kill the process
// while a checkpoint is half-written.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_TRAIN_CHECKPOINT_H
#define DLC_DRIVER_TRAIN_CHECKPOINT_H

#include "driver/data/Dataset.h"
#include "support/HostTensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dlc::train {

/// Where a training run stood when it wrote a checkpoint.
struct CheckpointInfo {
  std::string model;
  std::string optimizer;
  int64_t epoch = 0;
  int64_t batchInEpoch = 0;
  int64_t globalStep = 0;
  uint64_t seed = 0;
  int64_t batchSize = 0;
  bool dropLast = false;
  int64_t worldSize = 1;
  /// Sum of (batch mean loss x rows) over the steps of the current epoch,
  /// and the rows: the epoch's train loss survives an interruption.
  double epochLossSum = 0;
  int64_t epochSamples = 0;
  /// Where the steps ran (TrainStep::execution(): "cpu, 2 threads",
  /// "cuda-emu", ...); empty in a checkpoint written before it was recorded.
  std::string execution;
};

/// "ckpt-<step>.safetensors".
std::string checkpointFileName(int64_t globalStep);

struct CheckpointFile {
  int64_t globalStep;
  std::string path;
};
/// The complete checkpoints in `dir` (names ckpt-<digits>.safetensors),
/// oldest (smallest step) first; none if `dir` does not exist.
std::vector<CheckpointFile> listCheckpoints(const std::string &dir);

/// Removes temporary files a killed writer left in `dir`.
void removeStaleTemporaries(const std::string &dir);

/// Writes `tensors` and `info` atomically as `dir`/ckpt-<step>.safetensors
/// (creating `dir`), then deletes all but the newest `keep` (>= 1)
/// checkpoints. Sets `path` to the file written.
bool writeCheckpoint(const std::string &dir, const CheckpointInfo &info,
                     const std::map<std::string, HostTensor> &tensors,
                     int64_t keep, std::string &path, std::string &error);

/// Reads a checkpoint and its metadata; a file whose metadata is not a dlc
/// checkpoint's (of this format version) is an error naming the key.
bool readCheckpoint(const std::string &path, CheckpointInfo &info,
                    std::map<std::string, HostTensor> &tensors,
                    std::string &error);

/// An empty string if `tensors` holds exactly the `expected` state, else
/// every mismatch, one per line: missing tensors, extra tensors, and those
/// of another dtype or shape.
std::string checkState(const std::vector<data::TensorSpec> &expected,
                       const std::map<std::string, HostTensor> &tensors);

} // namespace dlc::train

#endif // DLC_DRIVER_TRAIN_CHECKPOINT_H
