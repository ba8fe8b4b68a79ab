//===- dlc.cpp - the dlc command-line driver ------------------------------===//
//
// `dlc VERB MODEL [options]`. Each verb is an llvm::cl subcommand with only
// its own options, grouped by category (`dlc run --help`); LLVM's and
// MLIR's options are hidden (`--help-hidden`), and the few a user needs
// (`--mlir-print-debuginfo`, ...) are accepted by the verbs that print IR.
// Installs a diagnostic handler that prints `file:line:col: error:` with the
// source line and a caret, and hands over to driver/Commands.
//
//===----------------------------------------------------------------------===//

#include "CommandLine.h"
#include "driver/Commands.h"
#include "frontend/text/MLIRGen.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <malloc.h>
#include <new>
#include <unistd.h>

namespace cl = llvm::cl;
using namespace dlc;

// ---- verbs -----------------------------------------------------------------
static cl::SubCommand checkVerb("check", "Inputs, outputs, parameters and FLOPs of a model; a .dlcm validated");
static cl::SubCommand compileVerb("compile",
                                  "Compile a model into a module (.dlcm), or print a stage");
static cl::SubCommand planVerb("plan", "The memory plan; with --mesh or --device-spec, the "
                                       "predicted step time; --parallel auto: the best mesh");
static cl::SubCommand runVerb("run", "Run a model on given or seeded random inputs");
static cl::SubCommand trainVerb("train", "Train a model's train block on a dataset");
static cl::SubCommand benchVerb("bench", "Latency percentiles, throughput and what bounds them");
static cl::SubCommand profileVerb("profile", "Time every kernel; a Chrome trace with --trace");
static cl::SubCommand verifyVerb("verify",
                                 "Run kernel by kernel against the float64 oracle");

// ---- categories (each verb's --help groups its options by these) ------------
static cl::OptionCategory modelCategory("Model");
static cl::OptionCategory ioCategory("Inputs and outputs");
static cl::OptionCategory executionCategory("Execution");
static cl::OptionCategory compileCategory("Compilation");
static cl::OptionCategory parallelCategory("Parallelism (mpirun ranks)");
static cl::OptionCategory costCategory("Cost model");
static cl::OptionCategory trainCategory("Training");
static cl::OptionCategory measureCategory("Measurement");

// Options of several verbs list each with cl::sub.
#define ALL_VERBS                                                              \
  cl::sub(checkVerb), cl::sub(compileVerb), cl::sub(planVerb),                 \
      cl::sub(runVerb), cl::sub(trainVerb), cl::sub(benchVerb),                \
      cl::sub(profileVerb), cl::sub(verifyVerb)
#define EXECUTING_VERBS                                                        \
  cl::sub(runVerb), cl::sub(trainVerb), cl::sub(benchVerb),                    \
      cl::sub(profileVerb), cl::sub(verifyVerb)
#define MEASURING_VERBS cl::sub(benchVerb), cl::sub(profileVerb), cl::sub(verifyVerb)
#define PARTITIONING_VERBS                                                     \
  cl::sub(compileVerb), cl::sub(planVerb), cl::sub(runVerb), cl::sub(trainVerb)

// ---- model -----------------------------------------------------------------
static cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.dlg|.onnx|.dlcm>"),
                                      ALL_VERBS);
static cl::list<std::string>
    dims("dim", cl::desc("Size of a symbolic dimension (.dlg, .onnx), e.g. --dim N=64; "
                         "dlc compile also takes a range, --dim N=1..64: one module "
                         "for every N in it"),
         cl::value_desc("NAME=SIZE"), cl::cat(modelCategory), ALL_VERBS);
static cl::opt<std::string> paramsFile(
    "params",
    cl::desc("Every parameter's value from this .safetensors or .npz (a dlc "
             "train checkpoint), by name"),
    cl::value_desc("FILE"), cl::cat(modelCategory), cl::sub(runVerb),
    cl::sub(compileVerb), MEASURING_VERBS);
static cl::opt<bool> trainStep(
    "train",
    cl::desc("The train block's train step (forward, backward, update; "
             "state: parameters, optimizer moments, step) instead of the graph"),
    cl::cat(modelCategory), cl::sub(compileVerb), cl::sub(planVerb));
static cl::opt<int64_t> memoryBudget(
    "memory-budget",
    cl::desc("With a train step: recompute activations in the backward pass "
             "(dlc-rematerialize) to fit an arena of this many bytes"),
    cl::value_desc("BYTES"), cl::cat(modelCategory), cl::sub(compileVerb),
    cl::sub(planVerb), cl::sub(trainVerb));

// ---- compilation -----------------------------------------------------------
static cl::opt<std::string> precision(
    "precision",
    cl::desc("Products of matmuls and convolutions in f32, tf32, bf16 or f16, "
             "accumulated in f32; reductions, softmax, norms, losses and a train "
             "step's weights and update stay f32 (default: f32)"),
    cl::value_desc("MODE"), cl::init("f32"), cl::cat(compileCategory), cl::sub(compileVerb),
    cl::sub(planVerb), EXECUTING_VERBS);
static cl::opt<std::string>
    emit("emit",
         cl::desc("The stage to print instead of writing a module: ast, mlir, "
                  "fused (after dlc-fuse), cpp (the CPU kernels' source), "
                  "mlir-partitioned (with --mesh)"),
         cl::value_desc("STAGE"), cl::cat(compileCategory), cl::sub(compileVerb));
static cl::opt<bool> drawParams(
    "draw-params",
    cl::desc("Record each parameter drawn by an initialiser (normal, uniform, xavier, he, "
             "ones) as that initialiser instead of its values: the runtime draws the same "
             "values when it loads the module, which stays the size of its code"),
    cl::cat(compileCategory), cl::sub(compileVerb));
static cl::opt<std::string> outputPath("o", cl::desc("Where to write the module (default: standard output)"),
                                       cl::value_desc("FILE.dlcm"), cl::init("-"),
                                       cl::cat(compileCategory), cl::sub(compileVerb));
static cl::opt<bool> stats("stats",
                           cl::desc("Also run the dlc-compile pipeline and print "
                                    "the memory plan's figures"),
                           cl::cat(compileCategory), cl::sub(compileVerb));
static cl::opt<std::string>
    target("target", cl::desc("What the module's kernels run on: cpu, or "
                              "cuda:sm_80,sm_90 (default: cpu)"),
           cl::init("cpu"), cl::cat(compileCategory), cl::sub(compileVerb));

static cl::opt<bool> noCache(
    "no-cache",
    cl::desc("Compile every kernel again instead of taking it from the kernel cache "
             "(DLC_CACHE_DIR, else XDG_CACHE_HOME/dlc or ~/.cache/dlc; at most "
             "DLC_CACHE_MAX_MB, default 2048)"),
    cl::cat(compileCategory), cl::sub(compileVerb), EXECUTING_VERBS);

// ---- execution -------------------------------------------------------------
static cl::opt<std::string>
    device("device",
           cl::desc("Where to run: cpu (compiled), cuda-emu (the CUDA kernels "
                    "on the CPU), cuda[:N]; run also reference (the float64 oracle) (default: cpu)"),
           cl::init("cpu"), cl::cat(executionCategory), EXECUTING_VERBS);
static cl::opt<unsigned>
    threads("threads",
            cl::desc("Worker threads of a cpu or cuda-emu device (default: the "
                     "cores this process may use, shared among the ranks on "
                     "this host)"),
            cl::value_desc("N"), cl::cat(executionCategory), EXECUTING_VERBS);
static cl::opt<std::string> stage(
    "stage",
    cl::desc("With --device reference: the IR the oracle evaluates, graph (as "
             "built) or fused (after canonicalisation, folding, CSE, dlc-fuse) (default: graph)"),
    cl::init("graph"), cl::cat(executionCategory), cl::sub(runVerb));

// ---- inputs and outputs ----------------------------------------------------
static cl::list<std::string>
    inputs("input", cl::desc("An input from a .npy/.npz/.safetensors file, e.g. x=@x.npy"),
           cl::value_desc("NAME=@FILE"), cl::cat(ioCategory), cl::sub(runVerb),
           MEASURING_VERBS);
static cl::opt<bool> randomInputs(
    "random-inputs",
    cl::desc("Generate the inputs not given by --input (seeded by --seed, "
             "which implies this; floats standard normal, integers in [0, 10))"),
    cl::cat(ioCategory), cl::sub(runVerb), MEASURING_VERBS);
static cl::opt<uint64_t>
    seed("seed",
         cl::desc("Seed of the random inputs; train: of the data order (default: 0)"),
         cl::init(0), cl::cat(ioCategory), cl::sub(runVerb), cl::sub(trainVerb),
         MEASURING_VERBS);
static cl::list<std::string>
    outputs("output", cl::desc("Save an output, e.g. y=@y.npy (several into one "
                               ".npz keep all)"),
            cl::value_desc("NAME=@FILE"), cl::cat(ioCategory), cl::sub(runVerb));
static cl::list<std::string> expectedOutputs(
    "expected-output",
    cl::desc("Compare an output with a file; exit 1 if they differ"),
    cl::value_desc("NAME=@FILE"), cl::cat(ioCategory), cl::sub(runVerb));
static cl::opt<double> relativeTolerance("rtol", cl::desc("Relative tolerance (default: 1e-5; verify: 1e-4)"),
                                         cl::init(1e-5), cl::cat(ioCategory),
                                         cl::sub(runVerb), cl::sub(verifyVerb));
static cl::opt<double> absoluteTolerance("atol", cl::desc("Absolute tolerance (default: 1e-8; verify: 1e-5)"),
                                         cl::init(1e-8), cl::cat(ioCategory),
                                         cl::sub(runVerb), cl::sub(verifyVerb));
static cl::opt<std::string> saveParams(
    "save-params", cl::desc("Save every parameter's value to a .npz/.safetensors file"),
    cl::value_desc("FILE"), cl::cat(ioCategory), cl::sub(runVerb));
static cl::opt<std::string> gradients(
    "gradients",
    cl::desc("Evaluate the train block's loss and every parameter's gradient "
             "instead of the graph, and save them to a .npz or .safetensors file"),
    cl::value_desc("FILE"), cl::cat(ioCategory), cl::sub(runVerb));
static cl::opt<unsigned> showValues("show", cl::desc("Values printed per output (default: 8)"),
                                    cl::init(8), cl::cat(ioCategory), cl::sub(runVerb));

// ---- parallelism -----------------------------------------------------------
static cl::opt<std::string> meshSpec(
    "mesh",
    cl::desc("The device mesh to partition for, e.g. data=2,model=2 (run and "
             "train under mpirun -np N, or run --device reference)"),
    cl::value_desc("AXIS=N,..."), cl::cat(parallelCategory), PARTITIONING_VERBS);
static cl::opt<std::string> parallel(
    "parallel",
    cl::desc("With --mesh: data (inputs' batch over 'data'), tensor (Megatron "
             "matmul pairs over 'model'), pipeline (stages over 'pipe'), "
             "comma-separated; auto (plan --devices N, train: the cost model's choice)"),
    cl::value_desc("data|tensor|pipeline|auto"), cl::cat(parallelCategory),
    PARTITIONING_VERBS);
static cl::opt<int64_t> microbatches(
    "microbatches",
    cl::desc("With a 'pipe' axis: micro-batches per batch (gradients "
             "accumulated over them) (default: 1)"),
    cl::init(1), cl::cat(parallelCategory), PARTITIONING_VERBS);
static cl::opt<std::string> pipelineSchedule(
    "schedule",
    cl::desc("With a 'pipe' axis: 1f1b (one forward, one backward) or gpipe "
             "(all forwards, then all backwards) (default: 1f1b)"),
    cl::init("1f1b"), cl::cat(parallelCategory), PARTITIONING_VERBS);
static cl::opt<int64_t> zeroStage(
    "zero",
    cl::desc("With --parallel data and a train step: 1 splits the optimizer "
             "moments over the data ranks (ZeRO stage 1) (default: 0)"),
    cl::value_desc("0|1"), cl::init(0), cl::cat(parallelCategory),
    cl::sub(trainVerb), cl::sub(compileVerb), cl::sub(planVerb));
static cl::opt<double> collectiveTimeout(
    "collective-timeout",
    cl::desc("Seconds a collective may wait for its peers before every rank "
             "exits 3 (default: 300, or DLC_COLLECTIVE_TIMEOUT)"),
    cl::value_desc("SECONDS"), cl::cat(parallelCategory), cl::sub(runVerb),
    cl::sub(trainVerb));
static cl::opt<double> bucketMb(
    "bucket-mb",
    cl::desc("--parallel data: all-reduce gradients in buckets of about this "
             "many MiB, each as soon as its gradients are ready (as DDP) (default: 25)"),
    cl::value_desc("MIB"), cl::init(25), cl::cat(parallelCategory), cl::sub(trainVerb));
static cl::opt<int64_t> deterministicShards(
    "deterministic-shards",
    cl::desc("--parallel data --deterministic: compute each step as G shards "
             "of the global batch summed in shard order, so any rank count "
             "dividing G gives the same bits (default: 8)"),
    cl::value_desc("G"), cl::init(0), cl::cat(parallelCategory), cl::sub(trainVerb));

// ---- cost model ------------------------------------------------------------
static cl::opt<std::string> deviceSpec(
    "device-spec",
    cl::desc("Predict the time on this device: cpu, h100, h200, a100, v100 "
             "(devices/*.json) or a .json file of the same form"),
    cl::value_desc("NAME|FILE"), cl::cat(costCategory), cl::sub(planVerb),
    cl::sub(trainVerb));
static cl::opt<std::string> linkSpec(
    "link",
    cl::desc("The link between devices: nvlink4, nvlink3, nvlink2, pcie5, "
             "pcie4, ib-ndr, ib-hdr, loopback (default: the device's)"),
    cl::value_desc("NAME"), cl::cat(costCategory), cl::sub(planVerb), cl::sub(trainVerb));
static cl::opt<int64_t> deviceMemory(
    "device-memory", cl::desc("With --mesh: say whether a rank's plan fits in this many bytes"),
    cl::value_desc("BYTES"), cl::cat(costCategory), cl::sub(planVerb));
static cl::opt<int64_t> devices(
    "devices",
    cl::desc("--parallel auto: the number of devices to plan for (every "
             "data x model x pipe mesh of that many is predicted)"),
    cl::value_desc("N"), cl::init(0), cl::cat(costCategory), cl::sub(planVerb));

// ---- measurement (bench, profile, verify) ------------------------------------
static cl::opt<int64_t> warmup("warmup", cl::desc("Runs before measuring (default: 5)"),
                               cl::value_desc("N"), cl::init(5),
                               cl::cat(measureCategory), cl::sub(benchVerb),
                               cl::sub(profileVerb));
static cl::opt<int64_t> iterations(
    "iterations", cl::desc("Runs measured (default: as many as --duration allows)"),
    cl::value_desc("N"), cl::init(0), cl::cat(measureCategory), cl::sub(benchVerb),
    cl::sub(profileVerb));
static cl::opt<double> duration(
    "duration", cl::desc("Seconds to measure for, when --iterations is not given (default: 3)"),
    cl::value_desc("S"), cl::init(3), cl::cat(measureCategory), cl::sub(benchVerb),
    cl::sub(profileVerb));
static cl::opt<bool> json("json", cl::desc("Print the results as one JSON object"),
                          cl::cat(measureCategory), cl::sub(benchVerb),
                          cl::sub(profileVerb), cl::sub(verifyVerb));
static cl::opt<std::string> tracePath(
    "trace",
    cl::desc("Write a Chrome trace (Perfetto, chrome://tracing) of the measured runs"),
    cl::value_desc("FILE.json"), cl::cat(measureCategory), cl::sub(profileVerb));
static cl::opt<std::string> peakSpec(
    "peak-spec",
    cl::desc("The device's peak FLOP/s and bandwidth, for the achieved share "
             "(default: devices/cpu.json, measured on this machine, or the GPU's)"),
    cl::value_desc("NAME|FILE"), cl::cat(measureCategory), cl::sub(benchVerb),
    cl::sub(profileVerb));
// Test-only: verify's fault injection.
static cl::opt<int64_t> perturbKernel(
    "debug-perturb-kernel", cl::Hidden,
    cl::desc("verify, tests only: add 1 to the first element of kernel N's "
             "output in the compiled module, to check that verify finds it"),
    cl::init(-1), cl::cat(measureCategory), cl::sub(verifyVerb));

// ---- train -----------------------------------------------------------------
static cl::opt<std::string>
    dataPath("data",
             cl::desc("The training data: an .npz of arrays named "
                      "after the model's inputs, or an MNIST-style IDX folder"),
             cl::value_desc("PATH"), cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<std::string> evalPath(
    "eval",
    cl::desc("The evaluation data (default: an IDX folder's t10k set)"),
    cl::value_desc("PATH"), cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<int64_t> epochs("epochs", cl::desc("Passes over the data (default: 1)"),
                               cl::init(1), cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<int64_t> batchSize("batch-size",
                                  cl::desc("Samples per step (plan: the global batch) (default: 32)"),
                                  cl::init(32), cl::cat(trainCategory), cl::sub(trainVerb),
                                  cl::sub(planVerb));
static cl::opt<double>
    learningRate("lr",
                 cl::desc("The learning rate (default: the train "
                          "block's optimizer statement)"),
                 cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<std::string>
    optimizer("optimizer",
              cl::desc("adam, adamw or sgd (default: the train "
                       "block's)"),
              cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<std::string>
    lrSchedule("lr-schedule",
               cl::desc("constant, step (x --lr-gamma every "
                        "--lr-step-size steps) or cosine (to --min-lr) (default: constant)"),
               cl::init("constant"), cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<int64_t>
    warmupSteps("warmup-steps",
                cl::desc("Steps of linear learning-rate warm-up (default: 0)"),
                cl::init(0), cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<int64_t> lrStepSize("lr-step-size",
                                   cl::desc("--lr-schedule step's period"),
                                   cl::init(0), cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<double> lrGamma("lr-gamma",
                               cl::desc("--lr-schedule step's factor (default: 0.1)"),
                               cl::init(0.1), cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<double> minLr("min-lr",
                             cl::desc("--lr-schedule cosine's floor (default: 0)"),
                             cl::init(0), cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<std::string> checkpointDir(
    "checkpoint-dir",
    cl::desc("Where to write ckpt-<step>.safetensors after each "
             "epoch, at --max-steps and on Ctrl-C"),
    cl::value_desc("DIR"), cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<int64_t>
    keepCheckpoints("keep-checkpoints",
                    cl::desc("How many of the newest checkpoints to keep (default: 3)"),
                    cl::init(3), cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<bool>
    resume("resume",
           cl::desc("Continue from the newest checkpoint in "
                    "--checkpoint-dir"),
           cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<std::string>
    logJson("log-json",
            cl::desc("One JSON object per line per epoch (appended to "
                     "when resuming)"),
            cl::value_desc("FILE"), cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<bool> deterministic(
    "deterministic",
    cl::desc("Refuse to --resume on another device or thread count "
             "than the checkpoint's (runs are bit-reproducible on the same "
             "configuration: the kernels use fixed reduction orders)"),
    cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<int64_t>
    maxSteps("max-steps",
             cl::desc("Stop (and checkpoint) once N steps are taken "
                      "in all"),
             cl::value_desc("N"), cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<std::string> exportPath(
    "export",
    cl::desc("After training, write the model's graph with the "
             "trained parameters as a module for the training device"),
    cl::value_desc("FILE.dlcm"), cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<std::string> compileOnly(
    "compile-only",
    cl::desc("Compile the train step and evaluation modules for the "
             "data's batch sizes into this folder (a training job, for "
             "dlc-train-job to run without the compiler) and stop"),
    cl::value_desc("DIR"), cl::cat(trainCategory), cl::sub(trainVerb));
static cl::opt<bool>
    dropLast("drop-last",
             cl::desc("Drop each epoch's last batch when it is partial"),
             cl::cat(trainCategory), cl::sub(trainVerb));
// Test-only: driver/train/FakeStep.h's hand-written model instead of the
// compiled train step, so the loop's tests need no compiler.
static cl::opt<std::string> fakeStep("fake-step", cl::Hidden,
                                     cl::desc("train, tests only: linear:F or "
                                              "softmax:FxC"),
                                     cl::cat(trainCategory), cl::sub(trainVerb));

/// `NAME=SIZE` arguments of --dim as a map; false after printing an error.
static bool parseDims(std::map<std::string, int64_t> &out,
                      std::map<std::string, std::pair<int64_t, int64_t>> &ranges) {
  for (const std::string &arg : dims) {
    size_t eq = arg.find('=');
    llvm::StringRef value = eq == std::string::npos ? "" : llvm::StringRef(arg).substr(eq + 1);
    // NAME=SIZE, or NAME=MIN..MAX (a range: dlc compile's one module for all).
    auto [first, last] = value.split("..");
    bool range = value.contains("..");
    long long low = -1, high = -1;
    bool parsed = eq != std::string::npos && eq > 0 && !first.getAsInteger(10, low) && low >= 0 &&
                  (!range || (!last.getAsInteger(10, high) && high >= 1 && low >= 1 && low <= high));
    if (!parsed) {
      llvm::errs() << "dlc: error: --dim expects NAME=SIZE with a size of at least 0, or "
                      "NAME=MIN..MAX with 1 <= MIN <= MAX, got '" << arg << "'\n";
      return false;
    }
    std::string name = arg.substr(0, eq);
    int64_t size = range ? high : low;
    auto [it, inserted] = out.try_emplace(name, size);
    if (!inserted && (it->second != size || range || ranges.count(name))) {
      llvm::errs() << "dlc: error: --dim " << name << " is given twice\n";
      return false;
    }
    if (range)
      ranges[name] = {low, high};
  }
  return true;
}

/// The MLIR options a user of the IR-printing verbs asks for
/// (`--mlir-print-debuginfo`, `--mlir-timing`, ...): registered by MLIR for
/// the top level, made hidden options of these verbs too.
static void acceptMlirOptions() {
  llvm::StringMap<cl::Option *> &top = cl::getRegisteredOptions(cl::SubCommand::getTopLevel());
  for (cl::SubCommand *verb : {&checkVerb, &compileVerb, &planVerb, &runVerb, &trainVerb,
                               &verifyVerb}) {
    llvm::StringMap<cl::Option *> &own = cl::getRegisteredOptions(*verb);
    for (auto &[name, option] : top)
      if (name.starts_with("mlir-") && !own.count(name)) {
        option->setHiddenFlag(cl::Hidden);
        own[name] = option;
      }
  }
}

/// `--input`, `--random-inputs` and `--seed`, shared by run, bench, profile
/// and verify.
static InputOptions inputOptions() {
  InputOptions in;
  in.files = inputs;
  // A seed is only asked for to generate inputs: --seed implies
  // --random-inputs.
  in.random = randomInputs || seed.getNumOccurrences() > 0;
  in.seed = seed;
  return in;
}

static MeasureOptions measureOptions() {
  MeasureOptions m;
  m.device = device;
  m.inputs = inputOptions();
  m.params = paramsFile;
  m.warmup = warmup;
  m.iterations = iterations;
  m.duration = duration;
  m.json = json;
  m.trace = tracePath;
  m.peakSpec = peakSpec;
  m.rtol = relativeTolerance;
  m.atol = absoluteTolerance;
  m.perturbKernel = perturbKernel;
  return m;
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
  // An allocation the machine cannot meet ends the process with exit 3 and a
  // message, not LLVM's "out of memory" abort and stack dump (InitLLVM's
  // handler). Sizes dlc can check ahead (inputs, arenas) are refused with
  // their names before this.
  std::set_new_handler([] {
    static const char message[] =
        "dlc: error: out of memory: an allocation could not be met (a tensor or "
        "model larger than this machine's memory?)\n";
    (void)!write(STDERR_FILENO, message, sizeof message - 1);
    _exit(kExitRuntimeFault);
  });
  mlir::registerMLIRContextCLOptions();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  acceptMlirOptions();
  cl::SetVersionPrinter(printVersion);

  std::vector<std::string> arguments;
  if (std::optional<int> answered = prepareArguments(argc, argv, arguments, llvm::errs()))
    return *answered;
  std::vector<const char *> args;
  for (const std::string &a : arguments)
    args.push_back(a.c_str());
  if (!cl::ParseCommandLineOptions(static_cast<int>(args.size()), args.data(),
                                   "dlc: a dataflow graph compiler for deep-learning models\n",
                                   &llvm::errs()))
    return kExitBadInput;

  cl::SubCommand *verb = nullptr;
  for (cl::SubCommand *candidate : cl::getRegisteredSubcommands())
    if (*candidate && candidate != &cl::SubCommand::getTopLevel())
      verb = candidate;
  if (!verb) // `dlc --version` was answered while parsing
    return kExitSuccess;
  std::string verbName = verb->getName().str();
  if (modelPath.empty()) {
    llvm::errs() << "dlc " << verbName << ": error: no model given (dlc " << verbName
                 << " MODEL.dlg|.onnx|.dlcm [options]; see dlc " << verbName
                 << " --help)\n";
    return kExitBadInput;
  }
  if (threads.getNumOccurrences()) {
    if (threads == 0 || threads > 1024) { // the devices' limit
      llvm::errs() << "dlc: error: --threads must be from 1 to 1024, not "
                   << threads << "\n";
      return kExitBadInput;
    }
    // The runtime's default for every session this process creates
    // (runtime/base/HostCores.h), the segments of a partitioned step included.
    setenv("DLC_NUM_THREADS", std::to_string(threads).c_str(), 1);
  }

  if (noCache) // codegen/common/HostCompiler.h, codegen/cuda/Nvrtc.cpp
    setenv("DLC_NO_CACHE", "1", 1);

  for (cl::opt<double> *tolerance : {&relativeTolerance, &absoluteTolerance})
    if (!(*tolerance >= 0) || !std::isfinite(*tolerance)) { // NaN compares false
      llvm::errs() << "dlc: error: --" << tolerance->ArgStr
                   << " must be a finite number of at least 0, not " << *tolerance << "\n";
      return kExitBadInput;
    }

  if (collectiveTimeout.getNumOccurrences() &&
      (!(collectiveTimeout > 0) || !std::isfinite(collectiveTimeout))) {
    llvm::errs() << "dlc: error: --collective-timeout must be a finite number "
                    "of seconds above 0, not "
                 << collectiveTimeout << "\n";
    return kExitBadInput;
  }

  if (precision != "f32" && precision != "tf32" && precision != "bf16" && precision != "f16") {
    llvm::errs() << "dlc: error: --precision must be f32, tf32, bf16 or f16, not '"
                 << precision << "'\n";
    return kExitBadInput;
  }

  if (precision != "f32" && llvm::StringRef(modelPath).ends_with(".dlcm")) {
    llvm::errs() << "dlc: error: --precision " << precision
                 << " is chosen when a model is compiled: give the .dlg or .onnx, or compile "
                    "the module with it\n";
    return kExitBadInput;
  }

  CommonOptions common;
  common.modelPath = modelPath;
  common.precision = precision;
  common.dimsGiven = !dims.empty();
  if (!parseDims(common.dims, common.dimRanges))
    return kExitBadInput;
  if (!common.dimRanges.empty() && verb != &compileVerb) {
    llvm::errs() << "dlc: error: --dim " << common.dimRanges.begin()->first
                 << "=MIN..MAX is for dlc compile (one module for every size in the "
                    "range); run the module it writes with --dim "
                 << common.dimRanges.begin()->first << "=SIZE\n";
    return kExitBadInput;
  }

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

  if (verb == &checkVerb)
    return runCheck(common, context, sourceMgr, llvm::outs());
  if (verb == &compileVerb) {
    CompileOptions compile{emit, outputPath, stats,
                           target, trainStep, paramsFile, std::nullopt,
                           {meshSpec, parallel, 0, zeroStage, microbatches, pipelineSchedule}};
    if (memoryBudget.getNumOccurrences())
      compile.memoryBudget = memoryBudget;
    compile.drawParams = drawParams;
    return runCompile(common, compile, context, sourceMgr);
  }
  if (verb == &planVerb) {
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
  if (verb == &runVerb) {
    RunOptions run;
    run.device = device;
    // --stage picks the IR the oracle evaluates: it implies the reference
    // device unless a device is named.
    if (stage.getNumOccurrences() && !device.getNumOccurrences())
      run.device = "reference";
    run.inputs = inputOptions();
    run.outputs = outputs;
    run.expectedOutputs = expectedOutputs;
    run.rtol = relativeTolerance;
    run.atol = absoluteTolerance;
    run.saveParams = saveParams;
    run.gradients = gradients;
    run.params = paramsFile;
    run.showValues = showValues;
    run.stage = stage;
    run.mesh = {meshSpec, parallel, collectiveTimeout, zeroStage, microbatches, pipelineSchedule};
    return runRun(common, run, context, sourceMgr, llvm::outs());
  }
  if (verb == &trainVerb) {
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
    // Kernels split rows as on any thread count (runtime/hal/cpu/Denormals.h).
    if (deterministic)
      setenv("DLC_DETERMINISTIC", "1", 1);
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
  if (verb == &benchVerb)
    return runBench(common, measureOptions(), context, sourceMgr, llvm::outs());
  if (verb == &profileVerb)
    return runProfile(common, measureOptions(), context, sourceMgr, llvm::outs());
  if (verb == &verifyVerb) {
    // A kernel is compared in f32 against float64: looser defaults than
    // run's comparison of two files; under --precision, looser again (the
    // oracle rounds bf16/f16 values as the kernels do, but not TF32
    // operands, and a result rounded to bf16 may land one unit apart).
    MeasureOptions verify = measureOptions();
    bool reduced = precision != "f32";
    if (!relativeTolerance.getNumOccurrences())
      verify.rtol = reduced ? 1e-2 : 1e-4;
    if (!absoluteTolerance.getNumOccurrences())
      verify.atol = reduced ? 1e-2 : 1e-5;
    return runVerify(common, verify, context, sourceMgr, llvm::outs());
  }
  llvm::errs() << "dlc: internal error: verb '" << verbName << "' has no command\n";
  return kExitInternalError;
}
