//===- TrainStep.h - what the loop of `dlc train` drives --------*- C++ -*-===//
//
// The training loop (driver/train/TrainLoop.h) owns the data, the learning
// rate schedule, checkpoints, resumption and the logs; it reaches the model
// only through these two interfaces:
//
//  - TrainStep: one compiled train step (docs/design/2026-11-25-training.md
//    §2, §3) in a runtime session, its state kept on the device between
//    steps. step() runs forward, backward and the optimizer update on one
//    batch; readState/writeState move one state tensor to and from the
//    host (checkpoints, resume, the evaluator's parameters).
//  - Evaluator: the evaluation module (forward, loss, the number of correct
//    predictions), whose parameters are copied from the TrainStep before
//    each evaluation.
//
// An implementation is single-threaded: the loop calls it from one thread
// (the loader prefetches on another, never touching the step). Errors are
// returned, never thrown, and carry the exit code the tool ends with.
//
// The driver builds the compiled implementation from the model file; the
// tests use a small hand-written one (driver/train/FakeStep.h).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_TRAIN_TRAINSTEP_H
#define DLC_DRIVER_TRAIN_TRAINSTEP_H

#include "driver/ExitCodes.h"
#include "driver/data/Dataset.h"
#include "support/HostTensor.h"

#include <string>
#include <vector>

namespace dlc::train {

using data::TensorSpec;

/// What a TrainStep or Evaluator call returns: success, or a message and the
/// exit code of ExitCodes.h it maps to (kExitBadInput for a batch or tensor
/// that does not fit, kExitRuntimeFault for a device error,
/// kExitInternalError for a bug).
struct Status {
  ExitCode code = kExitSuccess;
  std::string message;

  static Status success() { return {}; }
  static Status failure(ExitCode code, std::string message) {
    return {code, std::move(message)};
  }
  bool ok() const { return code == kExitSuccess; }
};

/// The optimizer a step applies, after the command line's overrides
/// (--optimizer, --lr), as its checkpoints record it.
struct OptimizerInfo {
  /// "adam", "adamw" or "sgd".
  std::string kind;
  /// The base learning rate, which the schedule scales step by step.
  double learningRate = 0;
};

class TrainStep {
public:
  virtual ~TrainStep() = default;

  /// The model's name ("mnist_mlp"): a checkpoint of another model is
  /// refused on resume.
  virtual std::string modelName() const = 0;
  /// "cross_entropy", "mse", ...: the train block's loss. Accuracy is
  /// reported for cross_entropy.
  virtual std::string lossKind() const = 0;
  virtual OptimizerInfo optimizer() const = 0;
  /// Where the steps run, as far as it decides their bits: the device and,
  /// on the CPU, the threads ("cpu, 2 threads"). Checkpoints record it;
  /// --deterministic refuses to resume under another.
  virtual std::string execution() const { return "host"; }

  /// The loss graph's data inputs in argument order (the graph's inputs,
  /// then the train block's), each shape per sample, without the batch
  /// dimension: `x: f32[N, 784]` is {"x", F32, {784}}. An IDX folder feeds
  /// images to inputs()[0] and labels to inputs()[1].
  virtual const std::vector<TensorSpec> &inputs() const = 0;
  /// Every state tensor (parameters, optimizer moments, the step counter),
  /// named as the design note's §2 names them, with whole shapes. A
  /// checkpoint holds exactly these.
  virtual const std::vector<TensorSpec> &state() const = 0;

  /// One step on `batch`: one tensor per inputs() entry, of its dtype and
  /// shape [rows, spec.shape...]. `rows` is the batch size, except for the
  /// last batch of an epoch when the data does not divide evenly and
  /// --drop-last is not given (an implementation compiled for a fixed batch
  /// size builds a second variant, or fails with kExitBadInput).
  /// `learningRate` is this step's (the schedule's) rate. Sets `loss` to the
  /// batch's mean loss, computed before the update; the state is updated in
  /// place. A non-finite loss is not an error here: the loop reports it.
  virtual Status step(const std::vector<HostTensor> &batch,
                      float learningRate, float &loss) = 0;

  /// This process's rank and the number of ranks a step runs on (a step
  /// partitioned over a mesh): the loop gives each rank its block of every
  /// batch, and only rank 0 writes.
  virtual int rank() const { return 0; }
  virtual int worldSize() const { return 1; }
  /// The block of every batch this rank loads, of how many (on a mesh
  /// with other axes than `data`, ranks that differ only there load the
  /// same block).
  virtual int dataRank() const { return rank(); }
  virtual int dataRanks() const { return worldSize(); }
  /// Called on every rank before rank 0 reads the state for a checkpoint:
  /// a step whose state is split over ranks gathers it here (a collective).
  virtual Status beforeCheckpoint() { return Status::success(); }
  /// A host copy of state tensor `name`.
  virtual Status readState(const std::string &name, HostTensor &out) = 0;
  /// Replaces state tensor `name` by `value`, which has its spec's dtype and
  /// shape (the loop checks this first).
  virtual Status writeState(const std::string &name,
                            const HostTensor &value) = 0;
};

class Evaluator {
public:
  virtual ~Evaluator() = default;

  /// Copies the parameters from `step` (through its readState); called
  /// before each evaluation.
  virtual Status loadParameters(TrainStep &step) = 0;
  /// Evaluates one batch, laid out as for TrainStep::step (the last one may
  /// be partial). Sets `lossSum` to the sum over the batch's samples of the
  /// per-sample loss (the mean loss times the rows); `correct` to the number
  /// of predictions whose largest logit is at their label, and `labelled`
  /// to the number of predictions with a label (not the ignore index): one
  /// per sample for a classifier, one per position for a sequence model
  /// (both 0 unless the loss is cross_entropy).
  virtual Status evaluate(const std::vector<HostTensor> &batch,
                          double &lossSum, int64_t &correct,
                          int64_t &labelled) = 0;
};

} // namespace dlc::train

#endif // DLC_DRIVER_TRAIN_TRAINSTEP_H
