//===- dlc-train-job.cpp - Train from modules compiled ahead --------------===//
//
// dlc-train-job JOB-DIR --data PATH [--eval PATH] [--epochs E] [--seed S]
//     [--lr X] [--device cpu|cuda|cuda:N|cuda-emu] [--checkpoint-dir D
//     [--resume] [--keep-checkpoints K]] [--log-json F] [--max-steps N]
//     [--drop-last] [--deterministic]
//
// Runs the loop of `dlc train` (driver/train/TrainLoop.h: progress, per-epoch
// evaluation, JSON log, atomic checkpoints, bit-exact resume, Ctrl-C) on a
// training job that `dlc train M.dlg --compile-only JOB-DIR` wrote: the
// train-step and evaluation modules for the batch sizes the data needs. It
// links the runtime and the loop only, so it runs where the compiler is not
// installed — a GPU node, a container with libdlc_runtime. The options mean
// what they mean to `dlc train`; the batch size and the optimizer are the
// job's. Exit codes as dlc's (docs/design: 0, 2 bad input, 3 runtime, 130).
//
//===----------------------------------------------------------------------===//

#include "driver/data/Idx.h"
#include "driver/train/ModuleStep.h"
#include "driver/train/TrainLoop.h"
#include "driver/train/TrainingJob.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <unistd.h>

using namespace dlc;

namespace {

std::atomic<bool> interruptRequested{false};

extern "C" void onInterrupt(int) {
  interruptRequested.store(true);
  std::signal(SIGINT, SIG_DFL);
}

int usage(const std::string &problem) {
  std::cerr << "dlc-train-job: error: " << problem << "\n"
            << "usage: dlc-train-job JOB-DIR --data PATH [--eval PATH] [--epochs E] "
               "[--seed S] [--lr X]\n"
               "         [--device cpu|cuda|cuda:N|cuda-emu] [--checkpoint-dir D "
               "[--resume] [--keep-checkpoints K]]\n"
               "         [--log-json F] [--max-steps N] [--drop-last] "
               "[--deterministic]\n";
  return kExitBadInput;
}

bool parseInteger(const std::string &text, int64_t &out) {
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end)
    return false;
  out = v;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string job, dataPath, evalPath, device;
  std::optional<double> lr;
  train::TrainLoopOptions loop;
  bool haveEvalPath = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    int64_t n = 0;
    if (arg == "--help" || arg == "-h") {
      usage("");
      return kExitSuccess;
    } else if (arg == "--data") {
      if (!value(dataPath))
        return usage("--data needs a path");
    } else if (arg == "--eval") {
      if (!value(evalPath))
        return usage("--eval needs a path");
      haveEvalPath = true;
    } else if (arg == "--device") {
      if (!value(device))
        return usage("--device needs a name");
    } else if (arg == "--epochs" || arg == "--seed" || arg == "--max-steps" ||
               arg == "--keep-checkpoints") {
      if (!value(v) || !parseInteger(v, n) || n < 0)
        return usage(arg + " needs a number of at least 0");
      if (arg == "--epochs")
        loop.epochs = n;
      else if (arg == "--seed")
        loop.seed = static_cast<uint64_t>(n);
      else if (arg == "--max-steps")
        loop.maxSteps = n;
      else
        loop.keepCheckpoints = n;
    } else if (arg == "--lr") {
      char *end = nullptr;
      if (!value(v) || (lr = std::strtod(v.c_str(), &end), *end) || !(*lr > 0))
        return usage("--lr needs a positive number");
    } else if (arg == "--checkpoint-dir") {
      if (!value(loop.checkpointDir))
        return usage("--checkpoint-dir needs a folder");
    } else if (arg == "--log-json") {
      if (!value(loop.logJsonPath))
        return usage("--log-json needs a file");
    } else if (arg == "--resume") {
      loop.resume = true;
    } else if (arg == "--drop-last") {
      loop.dropLast = true;
    } else if (arg == "--deterministic") {
      loop.deterministic = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return usage("unknown option '" + arg + "'");
    } else if (job.empty()) {
      job = arg;
    } else {
      return usage("one job folder, not '" + job + "' and '" + arg + "'");
    }
  }
  if (job.empty())
    return usage("no job folder (write one with dlc train M.dlg --compile-only DIR)");
  if (dataPath.empty())
    return usage("--data is needed: an .npz file or an IDX folder");

  // 1. The job's modules, then the step on them.
  train::ModuleStepInfo info;
  auto modules = std::make_shared<std::map<int64_t, train::ModulePair>>();
  std::string error;
  if (!train::readTrainingJob(job, info, *modules, error)) {
    std::cerr << "dlc-train-job: error: " << error << "\n";
    return kExitBadInput;
  }
  if (!device.empty())
    info.device = device;
  if (lr)
    info.optimizer.learningRate = *lr;
  loop.batchSize = info.batchSize;
  auto source = [modules, job](int64_t rows, train::ModulePair &out) {
    auto found = modules->find(rows);
    if (found == modules->end())
      return train::Status::failure(
          kExitBadInput, "the job in " + job + " has no modules for a batch of " +
                             std::to_string(rows) +
                             " rows: compile it with the data it trains on "
                             "(dlc train --compile-only, same --data, --eval, "
                             "--batch-size and --drop-last)");
    out = found->second;
    return train::Status::success();
  };
  std::unique_ptr<train::TrainStep> step;
  std::unique_ptr<train::Evaluator> evaluator;
  train::ModulePair first = modules->at(info.batchSize);
  if (train::Status s = train::openModuleTraining(info, first, source, step, evaluator);
      !s.ok()) {
    std::cerr << "dlc-train-job: error: " << s.message << "\n";
    return s.code;
  }

  // 2. The data.
  data::Dataset trainData, evalData;
  if (!data::loadTrainingData(dataPath, data::IdxSplit::Train, step->inputs(),
                              trainData, error)) {
    std::cerr << "dlc-train-job: error: " << error << "\n";
    return kExitBadInput;
  }
  if (!haveEvalPath && data::isDatasetFolder(dataPath) &&
      data::hasIdxSplit(dataPath, data::IdxSplit::Test))
    evalPath = dataPath;
  bool haveEval = !evalPath.empty() && evaluator;
  if (haveEval && !data::loadTrainingData(evalPath, data::IdxSplit::Test,
                                          step->inputs(), evalData, error)) {
    std::cerr << "dlc-train-job: error: " << error << "\n";
    return kExitBadInput;
  }

  // 3. The loop, with Ctrl-C asking it to stop. A job partitioned over a
  // mesh runs this process's rank: its block of every batch; rank 0 writes.
  loop.rank = step->rank();
  loop.worldSize = step->worldSize();
  if (loop.worldSize > 1 && !loop.dropLast &&
      trainData.numSamples % loop.batchSize != 0 &&
      (!loop.maxSteps || *loop.maxSteps > trainData.numSamples / loop.batchSize)) {
    std::cerr << "dlc-train-job: error: the job is partitioned for one global batch, and "
                 "the data ends each epoch with a batch of "
              << trainData.numSamples % loop.batchSize << ": add --drop-last\n";
    return kExitBadInput;
  }
  loop.progress = ::isatty(STDERR_FILENO) ? &std::cerr : nullptr;
  loop.interrupt = &interruptRequested;
  std::signal(SIGINT, onInterrupt);
  ExitCode code = train::runTrainLoop(*step, evaluator.get(), trainData,
                                      haveEval ? &evalData : nullptr, loop,
                                      std::cout, std::cerr);
  std::cout.flush();
  return code;
}
