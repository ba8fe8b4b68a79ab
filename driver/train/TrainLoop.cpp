//===- TrainLoop.cpp - the loop of `dlc train` ----------------------------===//

#include "driver/train/TrainLoop.h"

#include "driver/data/Loader.h"
#include "driver/train/Checkpoint.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <fstream>
#include <map>

namespace dlc::train {

namespace {

using Clock = std::chrono::steady_clock;

/// printf into a std::string.
std::string format(const char *fmt, ...) {
  char text[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  return text;
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Where the run stands: what a checkpoint records.
struct Position {
  int64_t epoch = 0, batch = 0, step = 0;
  double lossSum = 0;
  int64_t samples = 0;
};

class Loop {
public:
  Loop(TrainStep &step, Evaluator *evaluator, const data::Dataset &train,
       const data::Dataset *eval, TrainLoopOptions &options, std::ostream &out,
       std::ostream &err)
      : step_(step), evaluator_(evaluator), train_(train), eval_(eval),
        options_(options), out_(out), err_(err) {}

  ExitCode run();

private:
  ExitCode fail(ExitCode code, const std::string &message) {
    clearProgress();
    err_ << "dlc: error: " << message << "\n";
    return code;
  }
  void note(const std::string &message) {
    clearProgress();
    if (options_.rank == 0)
      err_ << "dlc: note: " << message << "\n";
  }
  ExitCode checkInputs();
  ExitCode restore(bool &restored);
  /// Writes a checkpoint of the current position (rank 0).
  ExitCode saveCheckpoint();
  ExitCode evaluate(double &loss, int64_t &correct, int64_t &labelled,
                    int64_t &count);
  ExitCode finishEpoch(double epochSeconds, double trainSeconds,
                       int64_t trainSamples, float lr);
  void drawProgress(int64_t batchesDone, double trainSeconds,
                    int64_t trainSamples, bool force);
  void clearProgress();
  std::string where() const {
    return "epoch " + std::to_string(pos_.epoch + 1) + ", batch " +
           std::to_string(pos_.batch + 1) + " of " + std::to_string(perEpoch_);
  }

  TrainStep &step_;
  Evaluator *evaluator_;
  const data::Dataset &train_;
  const data::Dataset *eval_;
  TrainLoopOptions &options_;
  std::ostream &out_, &err_;

  data::LoaderOptions loaderOptions_;
  int64_t perEpoch_ = 0;
  Position pos_;
  /// The step of the newest checkpoint written or loaded (-1: none), and
  /// its path.
  int64_t checkpointStep_ = -1;
  std::string checkpointPath_;
  std::ofstream log_;
  bool progressShown_ = false;
  Clock::time_point lastDraw_;
};

ExitCode Loop::checkInputs() {
  const std::vector<TensorSpec> &inputs = step_.inputs();
  for (const data::Dataset *dataset : {&train_, eval_}) {
    if (!dataset)
      continue;
    bool same = dataset->columns.size() == inputs.size();
    for (size_t i = 0; same && i < inputs.size(); ++i) {
      const TensorSpec &a = dataset->columns[i].spec;
      same = a.name == inputs[i].name && a.dtype == inputs[i].dtype &&
             a.shape == inputs[i].shape;
    }
    if (!same)
      return fail(kExitInternalError,
                  "the dataset " + dataset->source +
                      " was not loaded for the model's inputs");
  }
  return kExitSuccess;
}

ExitCode Loop::restore(bool &restored) {
  restored = false;
  std::vector<CheckpointFile> files = listCheckpoints(options_.checkpointDir);
  if (!options_.resume) {
    if (!files.empty())
      return fail(kExitBadInput,
                  options_.checkpointDir + " already holds checkpoints (the "
                  "newest is " + files.back().path +
                  "): pass --resume to continue from it, or choose another "
                  "--checkpoint-dir");
    return kExitSuccess;
  }
  if (files.empty()) {
    note("--resume: no checkpoint in " + options_.checkpointDir +
         " yet: starting from the beginning");
    return kExitSuccess;
  }
  const std::string &path = files.back().path;
  CheckpointInfo info;
  std::map<std::string, HostTensor> tensors;
  std::string error;
  if (!readCheckpoint(path, info, tensors, error))
    return fail(kExitBadInput, error);

  std::vector<std::string> problems;
  auto differs = [&](const char *what, const std::string &saved,
                     const std::string &now) {
    if (saved != now)
      problems.push_back(std::string(what) + " is " + saved + ", this run's " + now);
  };
  differs("the model", "'" + info.model + "'", "'" + step_.modelName() + "'");
  differs("the optimizer", info.optimizer, step_.optimizer().kind);
  differs("--seed", std::to_string(info.seed), std::to_string(options_.seed));
  differs("--batch-size", std::to_string(info.batchSize),
          std::to_string(options_.batchSize));
  differs("--drop-last", info.dropLast ? "on" : "off",
          options_.dropLast ? "on" : "off");
  differs("the number of ranks", std::to_string(info.worldSize),
          std::to_string(options_.worldSize));
  // The kernels are deterministic, but a GEMM split over another number of
  // threads, or another device, rounds differently: --deterministic (a run
  // that must end bit for bit as an uninterrupted one) refuses that.
  if (!info.execution.empty() && info.execution != step_.execution()) {
    if (options_.deterministic)
      differs("where it ran (--deterministic)", "'" + info.execution + "'",
              "'" + step_.execution() + "'");
    else
      note(path + " was written running on '" + info.execution +
           "', this run is on '" + step_.execution() +
           "': it continues, but not bit for bit as the first would have");
  }
  std::string stateProblems = checkState(step_.state(), tensors);
  if (!stateProblems.empty())
    problems.push_back("its tensors do not match the model's state:\n    " +
                       [&] {
                         std::string s = stateProblems;
                         for (size_t i = 0; (i = s.find('\n', i)) != std::string::npos; i += 5)
                           s.replace(i, 1, "\n    ");
                         return s;
                       }());
  if (info.batchInEpoch >= perEpoch_ && problems.empty())
    problems.push_back("it stands at batch " + std::to_string(info.batchInEpoch) +
                       " of an epoch, but the data makes " +
                       std::to_string(perEpoch_) + " batches per epoch");
  if (!problems.empty()) {
    std::string message = "cannot resume from " + path + ":";
    for (const std::string &p : problems)
      message += "\n  " + p;
    return fail(kExitBadInput, message);
  }
  for (const TensorSpec &spec : step_.state()) {
    Status status = step_.writeState(spec.name, tensors.at(spec.name));
    if (!status.ok())
      return fail(status.code, "resuming from " + path + ": " + status.message);
  }
  pos_.epoch = info.epoch;
  pos_.batch = info.batchInEpoch;
  pos_.step = info.globalStep;
  pos_.lossSum = info.epochLossSum;
  pos_.samples = info.epochSamples;
  checkpointStep_ = info.globalStep;
  checkpointPath_ = path;
  restored = true;
  note("resuming from " + path + " (step " + std::to_string(pos_.step) +
       ", epoch " + std::to_string(pos_.epoch + 1) + ", batch " +
       std::to_string(pos_.batch) + " of " + std::to_string(perEpoch_) +
       " done)");
  return kExitSuccess;
}

ExitCode Loop::saveCheckpoint() {
  if (options_.checkpointDir.empty() || checkpointStep_ == pos_.step)
    return kExitSuccess;
  if (Status status = step_.beforeCheckpoint(); !status.ok())
    return fail(status.code, "writing a checkpoint: " + status.message);
  if (options_.rank != 0) {
    checkpointStep_ = pos_.step;
    return kExitSuccess;
  }
  std::map<std::string, HostTensor> tensors;
  for (const TensorSpec &spec : step_.state()) {
    Status status = step_.readState(spec.name, tensors[spec.name]);
    if (!status.ok())
      return fail(status.code, "writing a checkpoint: " + status.message);
  }
  CheckpointInfo info;
  info.model = step_.modelName();
  info.optimizer = step_.optimizer().kind;
  info.epoch = pos_.epoch;
  info.batchInEpoch = pos_.batch;
  info.globalStep = pos_.step;
  info.seed = options_.seed;
  info.batchSize = options_.batchSize;
  info.dropLast = options_.dropLast;
  info.worldSize = options_.worldSize;
  info.execution = step_.execution();
  info.epochLossSum = pos_.lossSum;
  info.epochSamples = pos_.samples;
  std::string path, error;
  if (!writeCheckpoint(options_.checkpointDir, info, tensors,
                       options_.keepCheckpoints, path, error))
    return fail(kExitRuntimeFault,
                "writing a checkpoint: " + error +
                    (checkpointPath_.empty()
                         ? std::string()
                         : "; the previous one, " + checkpointPath_ + ", is intact"));
  checkpointStep_ = pos_.step;
  checkpointPath_ = path;
  return kExitSuccess;
}

ExitCode Loop::evaluate(double &loss, int64_t &correct, int64_t &labelled,
                        int64_t &count) {
  loss = 0;
  correct = labelled = count = 0;
  Status status = evaluator_->loadParameters(step_);
  if (!status.ok())
    return fail(status.code, "evaluation: " + status.message);
  data::LoaderOptions options = loaderOptions_;
  options.shuffle = false;
  options.dropLast = false;
  // Rank 0 evaluates the whole set (the parameters are the same on every
  // rank).
  options.rank = 0;
  options.worldSize = 1;
  data::Loader loader(*eval_, options);
  loader.start(0, 0, 1);
  data::Batch batch;
  while (loader.next(batch)) {
    double sum = 0;
    int64_t right = 0, withLabel = 0;
    status = evaluator_->evaluate(batch.tensors, sum, right, withLabel);
    if (!status.ok())
      return fail(status.code, "evaluation: " + status.message);
    loss += sum;
    correct += right;
    labelled += withLabel;
    count += batch.tensors.empty() ? 0 : batch.tensors[0].shape()[0];
  }
  return kExitSuccess;
}

ExitCode Loop::finishEpoch(double epochSeconds, double trainSeconds,
                           int64_t trainSamples, float lr) {
  double evalLoss = NAN, accuracy = NAN;
  Clock::time_point evalStart = Clock::now();
  if (evaluator_ && eval_ && options_.rank == 0) {
    double sum;
    int64_t correct, labelled, count;
    if (ExitCode code = evaluate(sum, correct, labelled, count))
      return code;
    evalLoss = sum / static_cast<double>(std::max<int64_t>(count, 1));
    if (step_.lossKind() == "cross_entropy")
      accuracy = static_cast<double>(correct) / static_cast<double>(std::max<int64_t>(labelled, 1));
  }
  epochSeconds += secondsSince(evalStart);
  double trainLoss = pos_.lossSum / static_cast<double>(std::max<int64_t>(pos_.samples, 1));
  double rate = trainSeconds > 0 ? trainSamples / trainSeconds : 0;
  clearProgress();
  if (options_.rank != 0)
    return kExitSuccess;
  std::string line = format("epoch %lld/%lld: train_loss %.4f",
                            static_cast<long long>(pos_.epoch + 1),
                            static_cast<long long>(options_.epochs), trainLoss);
  if (!std::isnan(evalLoss))
    line += format(" eval_loss %.4f", evalLoss);
  if (!std::isnan(accuracy))
    line += format(" eval_accuracy %.4f", accuracy);
  line += format(" (%.1f s, %.0f samples/s)", epochSeconds, rate);
  out_ << line << "\n";
  out_.flush();
  if (log_.is_open()) {
    auto number = [](double v) {
      return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
    };
    nlohmann::json record = {
        {"epoch", pos_.epoch + 1},       {"global_step", pos_.step},
        {"train_loss", number(trainLoss)}, {"eval_loss", number(evalLoss)},
        {"eval_accuracy", number(accuracy)}, {"epoch_seconds", epochSeconds},
        {"samples_per_second", rate},    {"lr", lr}};
    log_ << record.dump() << "\n";
    log_.flush();
  }
  return kExitSuccess;
}

void Loop::drawProgress(int64_t batchesDone, double trainSeconds,
                        int64_t trainSamples, bool force) {
  if (!options_.progress || options_.rank != 0)
    return;
  Clock::time_point now = Clock::now();
  if (!force && progressShown_ && now - lastDraw_ < std::chrono::milliseconds(100))
    return;
  lastDraw_ = now;
  constexpr int kWidth = 20;
  int filled = static_cast<int>(kWidth * batchesDone / std::max<int64_t>(perEpoch_, 1));
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < kWidth)
    bar += '>' + std::string(static_cast<size_t>(kWidth - filled - 1), ' ');
  double rate = trainSeconds > 0 ? trainSamples / trainSeconds : 0;
  double perBatch = trainSeconds / static_cast<double>(std::max<int64_t>(trainSamples, 1)) *
                    static_cast<double>(options_.batchSize);
  auto eta = static_cast<long long>(perBatch * static_cast<double>(perEpoch_ - batchesDone) + 0.5);
  *options_.progress << format(
      "\repoch %lld/%lld [%s] %lld/%lld loss %.4f %.0f samples/s ETA %lld:%02lld\033[K",
      static_cast<long long>(pos_.epoch + 1), static_cast<long long>(options_.epochs),
      bar.c_str(), static_cast<long long>(batchesDone),
      static_cast<long long>(perEpoch_),
      pos_.lossSum / static_cast<double>(std::max<int64_t>(pos_.samples, 1)), rate,
      eta / 60, eta % 60);
  options_.progress->flush();
  progressShown_ = true;
}

void Loop::clearProgress() {
  if (!progressShown_)
    return;
  *options_.progress << "\r\033[K";
  options_.progress->flush();
  progressShown_ = false;
}

ExitCode Loop::run() {
  // 1. Options, data and schedule.
  if (options_.epochs < 1)
    return fail(kExitBadInput, "--epochs must be at least 1");
  if (options_.keepCheckpoints < 1)
    return fail(kExitBadInput, "--keep-checkpoints must be at least 1");
  if (options_.maxSteps && *options_.maxSteps < 1)
    return fail(kExitBadInput, "--max-steps must be at least 1");
  if (options_.resume && options_.checkpointDir.empty())
    return fail(kExitBadInput, "--resume needs --checkpoint-dir");
  loaderOptions_.batchSize = options_.batchSize;
  loaderOptions_.dropLast = options_.dropLast;
  loaderOptions_.seed = options_.seed;
  loaderOptions_.rank = options_.dataRank >= 0 ? options_.dataRank : options_.rank;
  loaderOptions_.worldSize = options_.dataRanks >= 0 ? options_.dataRanks : options_.worldSize;
  loaderOptions_.prefetch = options_.prefetch;
  std::string problem = data::checkLoaderOptions(loaderOptions_, train_.numSamples);
  if (!problem.empty())
    return fail(kExitBadInput, train_.source + ": " + problem);
  if (ExitCode code = checkInputs())
    return code;
  perEpoch_ = data::batchesPerEpoch(train_.numSamples, options_.batchSize,
                                    options_.dropLast);
  LrSchedule &schedule = options_.schedule;
  schedule.base = step_.optimizer().learningRate;
  // --max-steps only stops the run early: the schedule stays that of the
  // whole run, so a run stopped and resumed follows it bit for bit.
  if (schedule.totalSteps == 0)
    schedule.totalSteps = options_.epochs * perEpoch_;
  problem = checkLrSchedule(schedule);
  if (!problem.empty())
    return fail(kExitBadInput, problem);

  // 2. Where to start: the newest checkpoint, or the beginning.
  bool restored = false;
  if (!options_.checkpointDir.empty()) {
    if (ExitCode code = restore(restored))
      return code;
    if (options_.rank == 0)
      removeStaleTemporaries(options_.checkpointDir);
  }
  if (pos_.epoch >= options_.epochs ||
      (options_.maxSteps && pos_.step >= *options_.maxSteps)) {
    note("nothing to do: " + checkpointPath_ + " is at step " +
         std::to_string(pos_.step) + ", epoch " + std::to_string(pos_.epoch) +
         " done");
    return kExitSuccess;
  }
  if (!options_.logJsonPath.empty() && options_.rank == 0) {
    log_.open(options_.logJsonPath,
              restored ? std::ios::app : std::ios::out | std::ios::trunc);
    if (!log_)
      return fail(kExitBadInput, "cannot write '" + options_.logJsonPath + "'");
  }

  // 3. The steps.
  data::Loader loader(train_, loaderOptions_);
  loader.start(pos_.epoch, pos_.batch, options_.epochs);
  Clock::time_point epochStart = Clock::now();
  double trainSeconds = 0;
  int64_t trainSamples = 0;
  data::Batch batch;
  while (loader.next(batch)) {
    float lr = static_cast<float>(schedule.at(pos_.step));
    float loss = 0;
    Clock::time_point stepStart = Clock::now();
    Status status = step_.step(batch.tensors, lr, loss);
    trainSeconds += secondsSince(stepStart);
    if (!status.ok())
      return fail(status.code, "step " + std::to_string(pos_.step + 1) + " (" +
                                   where() + "): " + status.message);
    if (!std::isfinite(loss))
      return fail(kExitRuntimeFault,
                  "the loss is " + std::string(std::isnan(loss) ? "NaN" : "infinite") +
                      " at step " + std::to_string(pos_.step + 1) + " (" + where() +
                      "): stopped without writing a checkpoint" +
                      (checkpointPath_.empty()
                           ? std::string()
                           : "; the last good one is " + checkpointPath_));
    int64_t rows = batch.tensors.empty() ? 0 : batch.tensors[0].shape()[0];
    ++pos_.step;
    pos_.batch = batch.index + 1;
    pos_.lossSum += static_cast<double>(loss) * static_cast<double>(rows);
    pos_.samples += rows;
    trainSamples += rows;
    bool epochDone = pos_.batch == perEpoch_;
    drawProgress(pos_.batch, trainSeconds, trainSamples, epochDone);
    if (epochDone) {
      if (ExitCode code = finishEpoch(secondsSince(epochStart), trainSeconds,
                                      trainSamples, lr))
        return code;
      ++pos_.epoch;
      pos_.batch = 0;
      pos_.lossSum = 0;
      pos_.samples = 0;
      if (ExitCode code = saveCheckpoint())
        return code;
      epochStart = Clock::now();
      trainSeconds = 0;
      trainSamples = 0;
    }
    bool interrupted = options_.interrupt && options_.interrupt->load();
    bool limit = options_.maxSteps && pos_.step >= *options_.maxSteps;
    if (interrupted || limit) {
      loader.stop();
      if (ExitCode code = saveCheckpoint())
        return code;
      std::string saved = checkpointPath_.empty()
                              ? std::string(" (no --checkpoint-dir: nothing saved)")
                              : "; checkpoint " + checkpointPath_;
      note(std::string(interrupted ? "interrupted" : "--max-steps reached") +
           ": stopped after step " + std::to_string(pos_.step) + saved);
      return interrupted ? kExitInterrupted : kExitSuccess;
    }
  }
  clearProgress();
  return kExitSuccess;
}

} // namespace

ExitCode runTrainLoop(TrainStep &step, Evaluator *evaluator,
                      const data::Dataset &train, const data::Dataset *eval,
                      TrainLoopOptions options, std::ostream &out,
                      std::ostream &err) {
  Loop loop(step, evaluator, train, eval, options, out, err);
  try {
    return loop.run();
  } catch (const std::bad_alloc &) {
    err << "dlc: error: out of host memory while assembling a batch\n";
    return kExitRuntimeFault;
  }
}

} // namespace dlc::train
