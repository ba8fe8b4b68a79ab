//===- TrainingJob.h - Train-step modules compiled ahead, in a folder -*- C++ -*-===//
//
// `dlc train --compile-only DIR` writes a training job: the train-step and
// evaluation modules of each batch size the data needs, and job.json with
// what the loop needs beyond them (model, loss, optimizer, learning rate,
// device, batch size). `dlc-train-job DIR` runs it with the runtime alone,
// on a machine that has no compiler (a GPU node, a deployment):
//
//   job.json
//     {"format": "dlc-train-job", "version": 1, "model": "mnist_mlp",
//      "loss": "cross_entropy", "loss_is_mean": true, "optimizer": "adam",
//      "lr": 0.001, "device": "cuda", "batch_size": 64,
//      "modules": [{"rows": 64, "train": "train-64.dlcm",
//                   "eval": "eval-64.dlcm"}, ...]}
//   train-64.dlcm  eval-64.dlcm  train-32.dlcm  eval-16.dlcm ...
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_TRAIN_TRAININGJOB_H
#define DLC_DRIVER_TRAIN_TRAININGJOB_H

#include "driver/train/ModuleStep.h"

#include <map>
#include <string>

namespace dlc::train {

/// Writes `modules` (by batch rows) and job.json into `dir`, creating it.
bool writeTrainingJob(const std::string &dir, const ModuleStepInfo &info,
                      const std::map<int64_t, ModulePair> &modules,
                      std::string &error);

/// Reads job.json and the modules it names; errors name the file and key.
bool readTrainingJob(const std::string &dir, ModuleStepInfo &info,
                     std::map<int64_t, ModulePair> &modules, std::string &error);

} // namespace dlc::train

#endif // DLC_DRIVER_TRAIN_TRAININGJOB_H
