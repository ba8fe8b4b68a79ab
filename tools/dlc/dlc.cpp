//===- dlc.cpp - the dlc command-line driver ------------------------------===//
//
// `dlc <command> <model> [options]`: check, compile, plan, run, train.
// Parses the command line (llvm::cl, with MLIR's own flags unchanged),
// installs a diagnostic handler that prints `file:line:col: error:` with the
// source line and a caret, and hands over to driver/Commands.
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"
#include "frontend/text/MLIRGen.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <malloc.h>

namespace cl = llvm::cl;
using namespace dlc;

static cl::OptionCategory category("dlc options");

static cl::opt<std::string> command(cl::Positional, cl::Required,
                                    cl::desc("<check|compile|plan|run|train>"),
                                    cl::cat(category));
static cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                                      cl::desc("<model.dlg|.onnx|.dlcm>"),
                                      cl::cat(category));
static cl::list<std::string>
    dims("dim", cl::desc("Size of a symbolic dimension, e.g. --dim N=64"),
         cl::value_desc("NAME=SIZE"), cl::cat(category));
static cl::opt<std::string>
    emit("emit",
         cl::desc("compile: the stage to print (ast, mlir, fused: after "
                  "dlc-fuse, cpp: the CPU kernels' source)"),
         cl::value_desc("stage"), cl::cat(category));
static cl::opt<std::string> outputPath("o", cl::desc("compile: output file"),
                                       cl::init("-"), cl::cat(category));
// `compile --stats` is LLVM's own -stats flag (registering another would
// clash with it), read through llvm::AreStatisticsEnabled().
static cl::opt<std::string>
    device("device",
           cl::desc("run, train: where to run: cpu (compiled; the default), "
                    "cuda-emu (the CUDA kernels on the CPU), cuda[:N] or "
                    "(run only) reference (the float64 oracle)"),
           cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    target("target", cl::desc("compile: what the kernels run on (cpu, or "
                            "cuda:sm_80,sm_90)"),
           cl::init("cpu"), cl::cat(category));
static cl::list<std::string>
    inputs("input", cl::desc("run: an input from a file, e.g. x=@x.npy"),
           cl::value_desc("NAME=@FILE"), cl::cat(category));
static cl::list<std::string>
    outputs("output", cl::desc("run: save an output, e.g. y=@y.npy"),
            cl::value_desc("NAME=@FILE"), cl::cat(category));
static cl::list<std::string> expectedOutputs(
    "expected-output",
    cl::desc("run: compare an output with a file; exit 1 if they differ"),
    cl::value_desc("NAME=@FILE"), cl::cat(category));
static cl::opt<double> relativeTolerance("rtol", cl::desc("run: relative tolerance"),
                            cl::init(1e-5), cl::cat(category));
static cl::opt<double> absoluteTolerance("atol", cl::desc("run: absolute tolerance"),
                            cl::init(1e-8), cl::cat(category));
static cl::opt<uint64_t>
    seed("seed",
         cl::desc("run: seed of the random inputs; train: seed of the data "
                  "order (the shuffle of each epoch)"),
         cl::init(0), cl::cat(category));
static cl::opt<std::string> saveParams(
    "save-params",
    cl::desc("run: save every parameter's value to a .npz/.safetensors file"),
    cl::value_desc("FILE"), cl::cat(category));
static cl::opt<bool> trainStep(
    "train",
    cl::desc("compile, plan: the train block's train step (forward, "
             "backward, update; state: parameters, optimizer moments, step) "
             "instead of the graph"),
    cl::cat(category));
static cl::opt<std::string> paramsFile(
    "params",
    cl::desc("run, compile: every parameter's value from this .safetensors "
             "or .npz (a dlc train checkpoint), by name"),
    cl::value_desc("FILE"), cl::cat(category));
static cl::opt<std::string> gradients(
    "gradients",
    cl::desc("run: evaluate the train block's loss and every parameter's "
             "gradient instead of the graph, and save them to a .npz or "
             ".safetensors file"),
    cl::value_desc("FILE"), cl::cat(category));
static cl::opt<std::string> stage(
    "stage",
    cl::desc("run: the IR the oracle evaluates: graph (as built) or fused "
             "(after canonicalisation, constant folding, CSE and dlc-fuse)"),
    cl::init("graph"), cl::cat(category));
static cl::opt<int64_t> memoryBudget(
    "memory-budget",
    cl::desc("plan --train, compile --train, train: recompute activations "
             "in the backward pass (dlc-rematerialize) to fit an arena of "
             "this many bytes"),
    cl::value_desc("BYTES"), cl::cat(category));
static cl::opt<std::string> meshSpec(
    "mesh",
    cl::desc("run --device reference, compile --emit=mlir-partitioned: the "
             "device mesh to partition for, e.g. data=2,model=2"),
    cl::value_desc("AXIS=N,..."), cl::cat(category));
static cl::opt<std::string> parallel(
    "parallel",
    cl::desc("with --mesh: data (inputs' batch over 'data'), tensor "
             "(Megatron matmul pairs over 'model'), pipeline (stages over 'pipe'), "
             "several comma-separated; auto (plan --devices N, train: the cost "
             "model's choice)"),
    cl::value_desc("data|tensor|pipeline|auto"), cl::cat(category));
static cl::opt<double> collectiveTimeout(
    "collective-timeout",
    cl::desc("run, train on MPI ranks (--mesh): seconds a collective may wait "
             "for its peers before every rank exits 3 (default 300, or "
             "DLC_COLLECTIVE_TIMEOUT)"),
    cl::value_desc("SECONDS"), cl::cat(category));
static cl::opt<int64_t> deviceMemory(
    "device-memory",
    cl::desc("plan --mesh: say whether a rank's plan fits in this many bytes"),
    cl::value_desc("BYTES"), cl::cat(category));
static cl::opt<std::string> deviceSpec(
    "device-spec",
    cl::desc("plan: predict the time on this device: h100, h200, a100, v100 "
             "(devices/*.json) or a .json file of the same form"),
    cl::value_desc("NAME|FILE"), cl::cat(category));
static cl::opt<std::string> linkSpec(
    "link",
    cl::desc("plan --mesh --device-spec: the link between devices: nvlink4, nvlink3, "
             "nvlink2, pcie5, pcie4, ib-ndr, ib-hdr, loopback (default: the device's)"),
    cl::value_desc("NAME"), cl::cat(category));
static cl::opt<int64_t> devices(
    "devices",
    cl::desc("plan --parallel auto: the number of devices to plan for (every "
             "data x model x pipe mesh of that many is predicted)"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<unsigned> showValues("show", cl::desc("run: values printed per output"),
                                    cl::init(8), cl::cat(category));

// ---- train ---------------------------------------------------------------
static cl::OptionCategory trainCategory("dlc train options");
static cl::opt<std::string>
    dataPath("data",
             cl::desc("train: the training data: an .npz of arrays named "
                      "after the model's inputs, or an MNIST-style IDX folder"),
             cl::value_desc("PATH"), cl::cat(trainCategory));
static cl::opt<std::string> evalPath(
    "eval",
    cl::desc("train: the evaluation data (default: an IDX folder's t10k set)"),
    cl::value_desc("PATH"), cl::cat(trainCategory));
static cl::opt<int64_t> epochs("epochs", cl::desc("train: passes over the data"),
                               cl::init(1), cl::cat(trainCategory));
static cl::opt<int64_t> batchSize("batch-size",
                                  cl::desc("train: samples per step"),
                                  cl::init(32), cl::cat(trainCategory));
static cl::opt<double>
    learningRate("lr",
                 cl::desc("train: the learning rate (default: the train "
                          "block's optimizer statement)"),
                 cl::cat(trainCategory));
static cl::opt<std::string>
    optimizer("optimizer",
              cl::desc("train: adam, adamw or sgd (default: the train "
                       "block's)"),
              cl::cat(trainCategory));
static cl::opt<std::string>
    lrSchedule("lr-schedule",
               cl::desc("train: constant, step (x --lr-gamma every "
                        "--lr-step-size steps) or cosine (to --min-lr)"),
               cl::init("constant"), cl::cat(trainCategory));
static cl::opt<int64_t>
    warmupSteps("warmup-steps",
                cl::desc("train: steps of linear learning-rate warm-up"),
                cl::init(0), cl::cat(trainCategory));
static cl::opt<int64_t> lrStepSize("lr-step-size",
                                   cl::desc("train: --lr-schedule step's period"),
                                   cl::init(0), cl::cat(trainCategory));
static cl::opt<double> lrGamma("lr-gamma",
                               cl::desc("train: --lr-schedule step's factor"),
                               cl::init(0.1), cl::cat(trainCategory));
static cl::opt<double> minLr("min-lr",
                             cl::desc("train: --lr-schedule cosine's floor"),
                             cl::init(0), cl::cat(trainCategory));
static cl::opt<std::string> checkpointDir(
    "checkpoint-dir",
    cl::desc("train: where to write ckpt-<step>.safetensors after each "
             "epoch, at --max-steps and on Ctrl-C"),
    cl::value_desc("DIR"), cl::cat(trainCategory));
static cl::opt<int64_t>
    keepCheckpoints("keep-checkpoints",
                    cl::desc("train: how many of the newest checkpoints to keep"),
                    cl::init(3), cl::cat(trainCategory));
static cl::opt<bool>
    resume("resume",
           cl::desc("train: continue from the newest checkpoint in "
                    "--checkpoint-dir"),
           cl::cat(trainCategory));
static cl::opt<std::string>
    logJson("log-json",
            cl::desc("train: one JSON object per line per epoch (appended to "
                     "when resuming)"),
            cl::value_desc("FILE"), cl::cat(trainCategory));
static cl::opt<bool> deterministic(
    "deterministic",
    cl::desc("train: refuse to --resume on another device or thread count "
             "than the checkpoint's (runs are bit-reproducible on the same "
             "configuration: the kernels use fixed reduction orders)"),
    cl::cat(trainCategory));
static cl::opt<int64_t> zeroStage(
    "zero",
    cl::desc("train, compile --train, plan --train with --parallel data: 1 "
             "splits the optimizer moments over the "
             "data ranks (ZeRO stage 1: gradients reduce-scattered, each rank "
             "updates its block, parameters all-gathered)"),
    cl::value_desc("0|1"), cl::init(0), cl::cat(trainCategory));
static cl::opt<int64_t> microbatches(
    "microbatches",
    cl::desc("with a 'pipe' mesh axis: micro-batches per batch (gradients "
             "accumulated over them)"),
    cl::init(1), cl::cat(category));
static cl::opt<std::string> pipelineSchedule(
    "schedule",
    cl::desc("with a 'pipe' mesh axis: 1f1b (one forward, one backward; "
             "default) or gpipe (all forwards, then all backwards)"),
    cl::init("1f1b"), cl::cat(category));
static cl::opt<double> bucketMb(
    "bucket-mb",
    cl::desc("train --parallel data: all-reduce gradients in buckets of about "
             "this many MiB, each as soon as its gradients are ready (as DDP)"),
    cl::value_desc("MIB"), cl::init(25), cl::cat(trainCategory));
static cl::opt<int64_t> deterministicShards(
    "deterministic-shards",
    cl::desc("train --parallel data --deterministic: compute each step as G "
             "shards of the global batch summed in shard order, so any rank "
             "count dividing G gives the same bits (default 8)"),
    cl::value_desc("G"), cl::init(0), cl::cat(trainCategory));
static cl::opt<int64_t>
    maxSteps("max-steps",
             cl::desc("train: stop (and checkpoint) once N steps are taken "
                      "in all"),
             cl::value_desc("N"), cl::cat(trainCategory));
static cl::opt<std::string> exportPath(
    "export",
    cl::desc("train: after training, write the model's graph with the "
             "trained parameters as a module for the training device"),
    cl::value_desc("FILE.dlcm"), cl::cat(trainCategory));
static cl::opt<std::string> compileOnly(
    "compile-only",
    cl::desc("train: compile the train step and evaluation modules for the "
             "data's batch sizes into this folder (a training job, for "
             "dlc-train-job to run without the compiler) and stop"),
    cl::value_desc("DIR"), cl::cat(trainCategory));
static cl::opt<bool>
    dropLast("drop-last",
             cl::desc("train: drop each epoch's last batch when it is partial"),
             cl::cat(trainCategory));
// Test-only: driver/train/FakeStep.h's hand-written model instead of the
// compiled train step, so the loop's tests need no compiler.
static cl::opt<std::string> fakeStep("fake-step", cl::Hidden,
                                     cl::desc("train, tests only: linear:F or "
                                              "softmax:FxC"),
                                     cl::cat(trainCategory));

/// `NAME=SIZE` arguments of --dim as a map; false after printing an error.
static bool parseDims(std::map<std::string, int64_t> &out) {
  for (const std::string &arg : dims) {
    size_t eq = arg.find('=');
    long long size = -1;
    if (eq != std::string::npos && eq > 0 &&
        !llvm::StringRef(arg).substr(eq + 1).getAsInteger(10, size) &&
        size >= 0) {
      std::string name = arg.substr(0, eq);
      auto [it, inserted] = out.try_emplace(name, size);
      if (!inserted && it->second != size) {
        llvm::errs() << "dlc: error: --dim " << name << " is given twice, as "
                     << it->second << " and " << size << "\n";
        return false;
      }
      continue;
    }
    llvm::errs() << "dlc: error: --dim expects NAME=SIZE with a size of at "
                    "least 0, got '" << arg << "'\n";
    return false;
  }
  return true;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // A train step's host path allocates the same large tensors every step
  // (a segment's outputs, a collective's results). glibc serves blocks
  // over its mmap threshold with fresh mappings, whose pages fault and are
  // zeroed by the kernel on every step (a third of the GPT-2 block's step
  // on CPU ranks); kept in the heap instead, freed blocks are reused warm.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mlir::registerMLIRContextCLOptions();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  // --help lists dlc's options; LLVM's and MLIR's stay under --help-hidden.
  cl::HideUnrelatedOptions({&category, &trainCategory});
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "dlc: a dataflow graph compiler for deep-learning models\n\n"
          "  dlc check M.dlg [--dim N=64]         inputs, outputs, "
          "parameters, FLOPs\n"
          "  dlc compile M.dlg -o M.dlcm [--target cpu] [--params CKPT]  "
          "write a module\n"
          "  dlc compile M.dlg --train -o S.dlcm [--memory-budget BYTES]  "
          "the train step as a module\n"
          "  dlc compile M.dlg --emit=ast|mlir|fused|cpp  print a stage\n"
          "  dlc compile M.dlg --emit=mlir-partitioned --mesh data=2 --parallel data\n"
          "  dlc run M.dlg --device reference --mesh model=2 --parallel tensor\n"
          "  dlc plan M.dlg --mesh data=2,model=2 --parallel data,tensor [--device-memory B]\n"
          "  dlc plan M.dlg --train --parallel auto --devices 8 --device-spec v100 "
          "[--batch-size B]\n"
          "  dlc compile M.dlg --stats            compile; print the memory "
          "plan's figures\n"
          "  dlc plan M.dlg [--dim N=64]          kernels, arena, lower "
          "bound, weights\n"
          "  dlc plan M.dlg --train [--memory-budget BYTES]  the train step: "
          "state, peak, FLOPs\n"
          "  dlc run M.dlg|M.dlcm [--device cpu|reference] [--input x=@x.npy]\n"
          "            [--output y=@y.npy]\n"
          "            [--expected-output y=@y.npy --rtol R --atol A] "
          "[--seed S]\n"
          "  dlc train M.dlg --data D.npz|IDX-DIR [--eval E] --epochs E "
          "--batch-size B\n"
          "            [--lr X] [--optimizer adam|adamw|sgd] [--lr-schedule "
          "constant|step|cosine]\n"
          "            [--checkpoint-dir D [--resume]] [--log-json F] "
          "[--max-steps N]\n"
          "            [--device cpu|cuda|cuda-emu] [--memory-budget BYTES] "
          "[--deterministic]\n"
          "            [--export M.dlcm] [--compile-only JOB-DIR]\n"
          "  mpirun -np N dlc train M.dlg ... --mesh data=N --parallel data "
          "[--zero 1] [--bucket-mb MIB]\n"
          "  mpirun -np P dlc train M.dlg ... --mesh pipe=P --parallel pipeline "
          "--microbatches M [--schedule gpipe]\n"
          "  mpirun -np N dlc train M.dlg ... --parallel auto  the cost model's plan\n"
          "  dlc run M.dlg --params CKPT.safetensors  run with trained "
          "parameters\n",
          &llvm::errs()))
    return kExitBadInput;

  CommonOptions common;
  common.modelPath = modelPath;
  if (!parseDims(common.dims))
    return kExitBadInput;

  mlir::MLIRContext context;
  dlg::loadBuilderDialects(context);
  llvm::SourceMgr sourceMgr;
  // Errors in a source file print `file:line:col: error:`, the line and a
  // caret; errors with no location (command line, files) `dlc: error:`.
  // The IR of a failing op is an implementation detail users never see.
  context.printOpOnDiagnostic(false);
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  mlir::ScopedDiagnosticHandler unlocated(
      &context, [](mlir::Diagnostic &diagnostic) -> mlir::LogicalResult {
        if (!llvm::isa<mlir::UnknownLoc>(diagnostic.getLocation()))
          return mlir::failure(); // to the source manager's handler
        llvm::errs() << "dlc: "
                     << (diagnostic.getSeverity() ==
                                 mlir::DiagnosticSeverity::Error
                             ? "error: "
                             : "note: ")
                     << diagnostic.str() << "\n";
        return mlir::success();
      });

  if (command == "check")
    return runCheck(common, context, sourceMgr, llvm::outs());
  if (command == "compile") {
    CompileOptions compile{emit, outputPath, llvm::AreStatisticsEnabled(),
                           target, trainStep, paramsFile, std::nullopt,
                           {meshSpec, parallel, 0, zeroStage, microbatches, pipelineSchedule}};
    if (memoryBudget.getNumOccurrences())
      compile.memoryBudget = memoryBudget;
    return runCompile(common, compile, context, sourceMgr);
  }
  if (command == "plan") {
    PlanOptions plan;
    plan.train = trainStep;
    if (memoryBudget.getNumOccurrences())
      plan.memoryBudget = memoryBudget;
    plan.mesh = {meshSpec, parallel, 0, zeroStage, microbatches, pipelineSchedule};
    if (deviceMemory.getNumOccurrences())
      plan.deviceMemory = deviceMemory;
    plan.deviceSpec = deviceSpec;
    plan.link = linkSpec;
    plan.devices = devices;
    if (batchSize.getNumOccurrences())
      plan.batchSize = batchSize;
    return runPlan(common, plan, context, sourceMgr, llvm::outs());
  }
  if (command == "run") {
    RunOptions run;
    run.device = device;
    // --stage picks the IR the oracle evaluates: it implies the reference
    // device unless a device is named.
    if (stage.getNumOccurrences() && !device.getNumOccurrences())
      run.device = "reference";
    run.inputs = inputs;
    run.outputs = outputs;
    run.expectedOutputs = expectedOutputs;
    run.rtol = relativeTolerance;
    run.atol = absoluteTolerance;
    run.seed = seed;
    run.saveParams = saveParams;
    run.gradients = gradients;
    run.params = paramsFile;
    run.showValues = showValues;
    run.stage = stage;
    run.mesh = {meshSpec, parallel, collectiveTimeout, zeroStage, microbatches, pipelineSchedule};
    return runRun(common, run, context, sourceMgr, llvm::outs());
  }
  if (command == "train") {
    TrainOptions train;
    train.data = dataPath;
    train.eval = evalPath;
    train.epochs = epochs;
    train.batchSize = batchSize;
    if (learningRate.getNumOccurrences())
      train.learningRate = learningRate;
    train.optimizer = optimizer;
    train.lrSchedule = lrSchedule;
    train.warmupSteps = warmupSteps;
    train.lrStepSize = lrStepSize;
    train.lrGamma = lrGamma;
    train.minLr = minLr;
    train.device = device;
    train.seed = seed;
    train.checkpointDir = checkpointDir;
    train.keepCheckpoints = keepCheckpoints;
    train.resume = resume;
    train.logJson = logJson;
    train.deterministic = deterministic;
    if (maxSteps.getNumOccurrences())
      train.maxSteps = maxSteps;
    train.dropLast = dropLast;
    train.exportPath = exportPath;
    train.compileOnly = compileOnly;
    train.mesh = {meshSpec, parallel, collectiveTimeout, zeroStage, microbatches, pipelineSchedule};
    train.bucketMb = bucketMb;
    train.deviceSpec = deviceSpec;
    train.link = linkSpec;
    train.deterministicShards = deterministicShards;
    if (memoryBudget.getNumOccurrences())
      train.memoryBudget = memoryBudget;
    train.fakeStep = fakeStep;
    return runTrain(common, train, context, sourceMgr);
  }
  llvm::errs() << "dlc: error: unknown command '" << command
               << "' (expected check, compile, plan, run or train)\n";
  return kExitBadInput;
}
