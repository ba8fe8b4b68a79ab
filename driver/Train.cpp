//===- Train.cpp - dlc train: the train step over a dataset ---------------===//
//
// Builds the train step and its evaluator (driver/train/TrainStep.h), loads
// the training and evaluation data for the step's inputs, and hands over to
// the loop (driver/train/TrainLoop.h) with SIGINT turned into "stop after
// this step and checkpoint".
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"

#include "driver/CompiledStep.h"
#include "driver/DriverSupport.h"
#include "driver/ModelLoader.h"
#include "driver/PartitionedStep.h"
#include "driver/AutoPlan.h"
#include "driver/PipelineStep.h"
#include "runtime/comm/Launch.h"
#include "llvm/Support/FormatVariadic.h"
#include "passes/partition/Partition.h"
#include "driver/data/Idx.h"
#include "driver/train/FakeStep.h"
#include "driver/train/TrainLoop.h"

#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;

namespace dlc {

/// Set by the SIGINT handler; the loop stops after the current step.
static std::atomic<bool> interruptRequested{false};
static_assert(std::atomic<bool>::is_always_lock_free,
              "the SIGINT handler stores to it");

/// The first Ctrl-C asks the loop to stop; the handler then restores the
/// default, so a second one ends the process at once.
extern "C" void onInterrupt(int) {
  interruptRequested.store(true);
  std::signal(SIGINT, SIG_DFL);
}

/// The test-only step of --fake-step, named after the model file.
static ExitCode buildFakeStep(const CommonOptions &options,
                              const TrainOptions &train, MLIRContext &context,
                              std::unique_ptr<train::TrainStep> &step,
                              std::unique_ptr<train::Evaluator> &evaluator) {
  train::FakeStepOptions fake;
  std::string error;
  if (!train::parseFakeStepSpec(train.fakeStep, fake, error))
    return fail(context, kExitBadInput, error);
  fake.modelName = llvm::sys::path::stem(options.modelPath).str();
  if (!train.optimizer.empty())
    fake.optimizer = train.optimizer;
  if (train.learningRate)
    fake.learningRate = *train.learningRate;
  step = train::makeFakeTrainStep(fake, error);
  if (!step)
    return fail(context, kExitBadInput, error);
  evaluator = train::makeFakeEvaluator(fake);
  return kExitSuccess;
}

/// Loads `path` for the step's inputs: an IDX folder's `split`, or an .npz.
static ExitCode loadDataset(const std::string &path, data::IdxSplit split,
                            const std::vector<data::TensorSpec> &inputs,
                            MLIRContext &context, data::Dataset &out) {
  std::string error;
  if (!data::loadTrainingData(path, split, inputs, out, error))
    return fail(context, kExitBadInput, error);
  return kExitSuccess;
}

/// --compile-only DIR: the modules of the batch size and of the epochs'
/// last batches (train and evaluation data), for dlc-train-job.
static ExitCode compileTrainingJob(const CommonOptions &options,
                                   const TrainOptions &train, MLIRContext &context,
                                   llvm::SourceMgr &sourceMgr) {
  if (!train.fakeStep.empty())
    return fail(context, kExitBadInput, "--compile-only needs a compiled model, not --fake-step");
  std::set<int64_t> written;
  auto batchSizes = [&](const std::vector<data::TensorSpec> &inputs,
                        std::set<int64_t> &rows) -> ExitCode {
    data::Dataset trainData, evalData;
    if (ExitCode c = loadDataset(train.data, data::IdxSplit::Train, inputs, context,
                                 trainData))
      return c;
    written = {train.batchSize};
    // A job for a mesh trains one global batch (dlc-train-job asks for
    // --drop-last where the data needs it); other sizes only evaluate.
    if (!train.dropLast && trainData.numSamples % train.batchSize && train.mesh.mesh.empty())
      rows.insert(trainData.numSamples % train.batchSize);
    std::string evalPath = train.eval;
    if (evalPath.empty() && data::isDatasetFolder(train.data) &&
        data::hasIdxSplit(train.data, data::IdxSplit::Test))
      evalPath = train.data;
    if (!evalPath.empty()) {
      if (ExitCode c = loadDataset(evalPath, data::IdxSplit::Test, inputs, context,
                                   evalData))
        return c;
      if (evalData.numSamples % train.batchSize)
        rows.insert(evalData.numSamples % train.batchSize);
    }
    written = rows;
    written.insert(train.batchSize);
    return kExitSuccess;
  };
  if (ExitCode c = writeCompiledTrainingJob(options, train, context, sourceMgr,
                                            train.compileOnly, batchSizes))
    return c;
  std::string sizes;
  for (int64_t r : written)
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(r);
  std::cout << "training job: " << train.compileOnly << " (" << train.device
            << "; modules for batches of " << sizes << "); run it with "
            << "dlc-train-job " << train.compileOnly << " --data " << train.data
            << "\n";
  return kExitSuccess;
}

/// `--parallel auto` on the ranks of this launch: the cost model's fastest
/// plan that fits (driver/AutoPlan.h) among those the CPU ranks run (no
/// tensor parallelism inside a pipeline's stage, no ZeRO with a pipeline),
/// which `train` then trains. Rank 0 says what was chosen and why.
static ExitCode chooseParallelism(const CommonOptions &options, TrainOptions &train,
                                  MLIRContext &context, llvm::SourceMgr &sourceMgr) {
  if (!train.mesh.mesh.empty())
    return fail(context, kExitBadInput,
                "--parallel auto chooses the mesh: leave out --mesh (the launch's ranks are "
                "the devices)");
  rt::comm::LaunchInfo launch;
  if (rt::Status s = rt::comm::readLaunchInfo({}, &launch); !s.ok())
    return fail(context, kExitBadInput, s.message());
  AutoPlanRequest request;
  request.devices = launch.worldSize;
  request.batchSize = train.batchSize;
  request.deviceSpec = train.deviceSpec.empty() ? "cpu" : train.deviceSpec;
  request.link = train.link;
  AutoPlanResult result;
  if (ExitCode c = choosePlan(options, request, context, sourceMgr, result))
    return c;
  const PlanCandidate *chosen = nullptr;
  for (const PlanCandidate &plan : result.plans)
    if (plan.fits && !(plan.pipe > 1 && (plan.model > 1 || plan.zero))) {
      chosen = &plan;
      break;
    }
  if (!chosen)
    return fail(context, kExitBadInput,
                "--parallel auto: no plan of " + std::to_string(launch.worldSize) +
                    " devices fits " + result.device.name + " (dlc plan --train --parallel auto "
                    "--devices " + std::to_string(launch.worldSize) + " shows them)");
  train.mesh.mesh = chosen->devices() > 1 ? chosen->mesh() : "";
  train.mesh.parallel = chosen->parallel();
  train.mesh.microbatches = chosen->microbatches;
  train.mesh.zero = chosen->zero ? 1 : 0;
  train.mesh.schedule = chosen->gpipe ? "gpipe" : "1f1b";
  if (launch.rank == 0)
    llvm::errs() << llvm::formatv(
        "dlc: --parallel auto on {0} {1}: {2} --parallel {3}{4}{5}, predicted {6:F3} ms a "
        "step ({7:F0}% of perfect scaling), {8} of {9} plans fit\n",
        launch.worldSize, result.device.name, train.mesh.mesh.empty() ? "one device" : "--mesh " + train.mesh.mesh,
        train.mesh.parallel,
        chosen->pipe > 1 ? " --microbatches " + std::to_string(chosen->microbatches) : "",
        chosen->zero ? " --zero 1" : "", chosen->stepSeconds * 1e3, chosen->efficiency * 100,
        llvm::count_if(result.plans, [](const PlanCandidate &p) { return p.fits; }),
        result.plans.size());
  return kExitSuccess;
}

ExitCode runTrain(const CommonOptions &options, const TrainOptions &givenTrain,
                  MLIRContext &context, llvm::SourceMgr &sourceMgr) {
  TrainOptions train = givenTrain;
  if (train.mesh.parallel == "auto")
    if (ExitCode c = chooseParallelism(options, train, context, sourceMgr))
      return c;
  // 1. The command line.
  bool cudaDevice = train.device == "cuda" || train.device == "cuda-emu" ||
                    llvm::StringRef(train.device).starts_with("cuda:");
  if (train.device != "cpu" && !cudaDevice)
    return fail(context, kExitBadInput,
                "device '" + train.device +
                    "' is not available: use --device cpu (the default), "
                    "cuda[:N] or cuda-emu");
  if (train.data.empty())
    return fail(context, kExitBadInput,
                "dlc train needs --data: an .npz file or an IDX folder");
  if (!train.optimizer.empty() && train.optimizer != "adam" &&
      train.optimizer != "adamw" && train.optimizer != "sgd")
    return fail(context, kExitBadInput,
                "--optimizer must be adam, adamw or sgd, not '" +
                    train.optimizer + "'");
  if (train.batchSize < 1)
    return fail(context, kExitBadInput, "--batch-size must be at least 1");
  std::optional<train::LrScheduleKind> kind =
      train::parseLrScheduleKind(train.lrSchedule);
  if (!kind)
    return fail(context, kExitBadInput,
                "--lr-schedule must be constant, step or cosine, not '" +
                    train.lrSchedule + "'");

  if (!train.exportPath.empty() &&
      llvm::sys::path::extension(train.exportPath) != ".dlcm")
    return fail(context, kExitBadInput,
                llvm::sys::path::extension(train.exportPath) == ".onnx"
                    ? "--export writes a .dlcm module; writing ONNX is not "
                      "supported yet (the trained parameters are in the "
                      "checkpoint's .safetensors, which `dlc run --params` "
                      "and `dlc compile --params` read)"
                    : "--export expects a FILE.dlcm, not '" + train.exportPath + "'");
  if (!train.exportPath.empty() && !train.fakeStep.empty())
    return fail(context, kExitBadInput, "--export needs a compiled model, not --fake-step");
  if (train.memoryBudget && *train.memoryBudget <= 0)
    return fail(context, kExitBadInput,
                "--memory-budget expects a number of bytes, at least 1");

  if (!train.compileOnly.empty())
    return compileTrainingJob(options, train, context, sourceMgr);

  // 2. The step, then the data its inputs ask for.
  std::unique_ptr<train::TrainStep> step;
  std::unique_ptr<train::Evaluator> evaluator;
  int rank = 0, worldSize = 1;
  if (!train.mesh.mesh.empty()) {
    if (train.device != "cpu" || !train.exportPath.empty())
      return fail(context, kExitBadInput,
                  "--mesh trains on CPU ranks (mpirun) for now, without --export");
    bool pipeline = parseParallelPreset(train.mesh.parallel).value_or(ParallelPreset{}).pipeline;
    if (ExitCode code = pipeline
                            ? buildPipelineTraining(options, train, context, sourceMgr, step,
                                                    rank, worldSize)
                            : buildPartitionedTraining(options, train, context, sourceMgr,
                                                       step, rank, worldSize))
      return code;
  } else if (ExitCode code =
                 train.fakeStep.empty()
                     ? buildCompiledTraining(options, train, context, sourceMgr, step,
                                             evaluator)
                     : buildFakeStep(options, train, context, step, evaluator)) {
    return code;
  }
  const std::vector<data::TensorSpec> &inputs = step->inputs();
  data::Dataset trainData, evalData;
  if (ExitCode code = loadDataset(train.data, data::IdxSplit::Train, inputs,
                                  context, trainData))
    return code;
  bool haveEval = false;
  if (!train.eval.empty()) {
    if (ExitCode code = loadDataset(train.eval, data::IdxSplit::Test, inputs,
                                    context, evalData))
      return code;
    haveEval = true;
  } else if (data::isDatasetFolder(train.data) &&
             data::hasIdxSplit(train.data, data::IdxSplit::Test)) {
    if (ExitCode code = loadDataset(train.data, data::IdxSplit::Test, inputs,
                                    context, evalData))
      return code;
    haveEval = true;
  }

  // A partitioned step is compiled for one global batch: an epoch's partial
  // last batch would need another, so say so before training, not at it.
  if (!train.mesh.mesh.empty() && !train.dropLast &&
      trainData.numSamples % train.batchSize != 0 &&
      (!train.maxSteps || *train.maxSteps > trainData.numSamples / train.batchSize))
    return fail(context, kExitBadInput,
                "--mesh trains on one global batch size, and the data (" +
                    std::to_string(trainData.numSamples) + " samples) ends each epoch with a "
                    "batch of " + std::to_string(trainData.numSamples % train.batchSize) +
                    ": add --drop-last");

  // 3. The loop, with Ctrl-C asking it to stop.
  train::TrainLoopOptions loop;
  loop.epochs = train.epochs;
  loop.batchSize = train.batchSize;
  loop.dropLast = train.dropLast;
  loop.seed = train.seed;
  loop.maxSteps = train.maxSteps;
  loop.schedule.kind = *kind;
  loop.schedule.warmupSteps = train.warmupSteps;
  loop.schedule.stepSize = train.lrStepSize;
  loop.schedule.gamma = train.lrGamma;
  loop.schedule.minLr = train.minLr;
  loop.checkpointDir = train.checkpointDir;
  loop.keepCheckpoints = train.keepCheckpoints;
  loop.resume = train.resume;
  loop.deterministic = train.deterministic;
  loop.logJsonPath = train.logJson;
  loop.rank = rank;
  loop.worldSize = worldSize;
  loop.dataRank = step->dataRank();
  loop.dataRanks = step->dataRanks();
  loop.progress = ::isatty(STDERR_FILENO) ? &std::cerr : nullptr;
  loop.interrupt = &interruptRequested;

  llvm::outs().flush();
  interruptRequested.store(false);
  struct sigaction action = {}, previous = {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous);
  ExitCode code = train::runTrainLoop(*step, evaluator.get(), trainData,
                                      haveEval ? &evalData : nullptr, loop,
                                      std::cout, std::cerr);
  sigaction(SIGINT, &previous, nullptr);
  std::cout.flush();
  if (code == kExitSuccess && !train.exportPath.empty()) {
    if (ExitCode c = exportTrainedModel(options, train, *step, context, sourceMgr))
      return c;
    std::cout << "exported: " << train.exportPath << "\n";
  }
  return code;
}

} // namespace dlc
