//===- Commands.h - the verbs of the dlc tool -------------------*- C++ -*-===//
//
// Each verb takes its options as a plain struct and returns an exit code of
// ExitCodes.h; the command line lives in tools/dlc. One file per verb
// (Check.cpp, Compile.cpp, Plan.cpp, Run.cpp, Train.cpp), sharing
// DriverSupport.h.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_COMMANDS_H
#define DLC_DRIVER_COMMANDS_H

#include "driver/ExitCodes.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
class PassManager;
} // namespace mlir
namespace llvm {
class SourceMgr;
class raw_ostream;
} // namespace llvm

namespace dlc {

struct CommonOptions {
  std::string modelPath;
  /// `--dim N=64`, already split.
  std::map<std::string, int64_t> dims;
  /// Whether --dim was given at all (a .dlcm's shapes are fixed: an error).
  bool dimsGiven = false;
  /// `--dim N=1..64` (dlc compile): one module for every N in the range
  /// (module format 1.3); `dims` holds N's largest size.
  std::map<std::string, std::pair<int64_t, int64_t>> dimRanges;
  /// `--precision f32|tf32|bf16|f16`: the products of matmuls and
  /// convolutions in that precision, accumulated in f32 (dlc-precision).
  std::string precision = "f32";
};

/// A model's inputs on the command line: every input from a file
/// (`--input NAME=@FILE`), or all of them seeded random (`--random-inputs`),
/// never a mix unless `random` is asked for (driver/Inputs.h).
struct InputOptions {
  /// `NAME=@file` arguments, unparsed.
  std::vector<std::string> files;
  /// `--random-inputs`: generate the inputs no file gives.
  bool random = false;
  uint64_t seed = 0;
};

/// `dlc check M`: inputs, outputs, parameters (count, bytes) and FLOPs.
ExitCode runCheck(const CommonOptions &options, mlir::MLIRContext &context,
                  llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os);

/// `--mesh data=2,model=2 [--parallel data|tensor]`: the graph partitioned
/// into its SPMD program (passes/partition) for that mesh.
struct MeshOptions {
  std::string mesh;
  std::string parallel;
  /// `--collective-timeout SECONDS` on MPI ranks (0: DLC_COLLECTIVE_TIMEOUT,
  /// else 300).
  double collectiveTimeout = 0;
  /// `--zero 1`: a train step's optimizer moments split over the `data`
  /// ranks (ZeRO stage 1; PartitionOptions::shardOptimizerState).
  int64_t zero = 0;
  /// `--microbatches M` with a `pipe` axis: each (per data replica) batch
  /// runs as M micro-batches through the stages, gradients accumulated.
  int64_t microbatches = 1;
  /// `--schedule 1f1b|gpipe`: the order of a pipeline's micro-batches.
  std::string schedule = "1f1b";
};

struct CompileOptions {
  /// `ast`, `mlir`, `fused` or `cpp`; empty: write a module to `output`.
  std::string emit;
  /// Where to write; "-" is standard output.
  std::string output = "-";
  /// `--stats`: run the dlc-compile pipeline and print its plan report.
  bool stats = false;
  /// `--target`: what the module's kernels run on.
  std::string target = "cpu";
  /// `--train`: the train block's train step instead of the graph (its
  /// state: parameters, moments, step; inputs: the data and `lr`).
  bool train = false;
  /// `--params FILE`: the parameters' values from a checkpoint (.safetensors
  /// or .npz), by name (bindParameterFile), instead of their initialisers.
  std::string params;
  /// `--memory-budget` with `train`: rematerialise to fit (dlc-rematerialize).
  std::optional<int64_t> memoryBudget;
  /// `--emit=mlir-partitioned`'s mesh and preset.
  MeshOptions mesh;
  /// `--draw-params`: parameters with a drawn initialiser (normal, he, ...)
  /// are recorded as that initialiser, not as values; the runtime draws
  /// them when it loads the module (format 1.5): the same bits, a module
  /// the size of its code (benchmarks of random-weight models).
  bool drawParams = false;
};

/// `dlc compile M --emit=...`: prints a stage of the pipeline; with
/// `--stats`, then runs the dlc-compile pipeline and prints runPlan's report.
ExitCode runCompile(const CommonOptions &options,
                    const CompileOptions &compile, mlir::MLIRContext &context,
                    llvm::SourceMgr &sourceMgr);

struct PlanOptions {
  /// `--train`: plan the train step of the graph's train block (built,
  /// differentiated by dlc-differentiate) instead of the graph.
  bool train = false;
  /// `--memory-budget`: with `train`, rematerialise to fit an arena of this
  /// many bytes (dlc-rematerialize).
  std::optional<int64_t> memoryBudget;
  /// `--mesh`/`--parallel`: plan the partitioned program (one rank's), and
  /// list its collectives with their bytes.
  MeshOptions mesh;
  /// `--device-memory BYTES`: say whether a rank's plan fits.
  std::optional<int64_t> deviceMemory;
  /// `--device-spec NAME|FILE` (devices/*.json) and `--link NAME`: predict
  /// the step's time on that device (passes/analysis/CostModel.h).
  std::string deviceSpec, link;
  /// `--parallel auto --devices N`: search the meshes of N devices
  /// (driver/AutoPlan.h) instead of planning one.
  int64_t devices = 0;
  /// `--batch-size B`: the global batch (binds the model's batch
  /// dimension, as `dlc train` does); unset: `--dim`, else one sample per
  /// device (--parallel auto) or 1.
  std::optional<int64_t> batchSize;
};

/// `dlc plan M`: runs the dlc-compile pipeline (the plan verifier included)
/// and prints kernels before and after fusion, the arena against its lower
/// bound and the naive sum, and the weights (driver/PlanReport.h); with
/// `--train`, of the train step, adding its state, what is live at the
/// peak, FLOPs per part, and the trade a memory budget made.
ExitCode runPlan(const CommonOptions &options, const PlanOptions &plan,
                 mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                 llvm::raw_ostream &os);

struct RunOptions {
  /// `cpu` (compile, then run through the runtime) or `reference` (the
  /// float64 oracle on the IR).
  std::string device = "cpu";
  /// With a mesh, the reference device runs the partitioned program on
  /// every rank (the oracle's SPMD simulation); the outputs are rank 0's
  /// (whole on every rank).
  MeshOptions mesh;
  InputOptions inputs;
  /// `NAME=@file` arguments, unparsed.
  std::vector<std::string> outputs, expectedOutputs;
  double rtol = 1e-5, atol = 1e-8;
  /// Where to save every parameter's value (.npz or .safetensors).
  std::string saveParams;
  /// `--params FILE`: every parameter's value from this .safetensors or
  /// .npz (a `dlc train` checkpoint, or `--save-params`), by name, instead of
  /// its initialiser.
  std::string params;
  /// Run the train block's loss graph differentiated instead of the graph
  /// and save the loss and every parameter's gradient (`grad.<param>`) to
  /// this .npz or .safetensors file.
  std::string gradients;
  /// How many leading values to print per output.
  unsigned showValues = 8;
  /// The IR the oracle evaluates: `graph` (as built) or `fused` (after the
  /// fusion pipeline: canonicalise, fold constants, CSE, dlc-fuse).
  std::string stage = "graph";
};

/// `dlc run M`: runs the model (.dlg/.onnx compiled in memory, or a .dlcm)
/// on seeded random or given inputs, prints (or saves, or checks) its
/// outputs.
ExitCode runRun(const CommonOptions &options, const RunOptions &run,
                mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                llvm::raw_ostream &os);

struct TrainOptions {
  /// `--data`: an .npz of arrays named after the loss graph's inputs, or an
  /// MNIST-style IDX folder (images to the graph's input, labels to the
  /// train block's).
  std::string data;
  /// `--eval`: the same kinds; empty: the IDX folder's t10k set, if any.
  std::string eval;
  int64_t epochs = 1;
  int64_t batchSize = 32;
  /// Override the train block's optimizer statement when given.
  std::optional<double> learningRate;
  std::string optimizer;
  /// `constant`, `step` or `cosine`, with its parameters.
  std::string lrSchedule = "constant";
  int64_t warmupSteps = 0;
  int64_t lrStepSize = 0;
  double lrGamma = 0.1;
  double minLr = 0;
  /// `cpu`, `cuda`, `cuda:N` or `cuda-emu`.
  std::string device = "cpu";
  /// The data order's seed.
  uint64_t seed = 0;
  std::string checkpointDir;
  int64_t keepCheckpoints = 3;
  bool resume = false;
  std::string logJson;
  /// `--deterministic`: a resume must run on the same execution
  /// configuration (device, threads) as the checkpoint's, or it is refused;
  /// the kernels themselves are deterministic on every device.
  bool deterministic = false;
  /// `--memory-budget`: the train step rematerialises activations to fit an
  /// arena of this many bytes (dlc-rematerialize).
  std::optional<int64_t> memoryBudget;
  /// `--export FILE.dlcm`: after training, the model's graph with the
  /// trained parameters compiled for the training device, batch dimension
  /// bound to the batch size.
  std::string exportPath;
  /// `--mesh`/`--parallel`: train on the ranks of a mesh (mpirun), the
  /// train step partitioned (driver/PartitionedStep.h).
  MeshOptions mesh;
  /// `--bucket-mb`: data-parallel gradients are all-reduced in buckets of
  /// about this many MiB, each issued once its gradients are ready.
  double bucketMb = 25;
  /// `--deterministic-shards G`: with `--deterministic` on a data mesh, the
  /// step is computed as G shards of the global batch (G/ranks per rank)
  /// and every reduction over them is summed in shard order, so 1, 2 or 4
  /// ranks give the same bits (0: 8).
  int64_t deterministicShards = 0;
  /// `--compile-only DIR`: write the training job (driver/train/
  /// TrainingJob.h) for dlc-train-job instead of training.
  std::string compileOnly;
  /// `--parallel auto`: the device spec and link the plans are predicted on
  /// (default: `cpu` and its MPI link, what mpirun's CPU ranks run on).
  std::string deviceSpec, link;
  std::optional<int64_t> maxSteps;
  bool dropLast = false;
  /// TEST-ONLY (hidden `--fake-step`): train driver/train/FakeStep.h's
  /// hand-written model ("linear:F", "softmax:FxC") instead of compiling
  /// the model file, whose file name then only names the model.
  std::string fakeStep;
};

/// `dlc train M --data D ...`: compiles the train step, then runs the loop
/// of driver/train/TrainLoop.h (progress, evaluation, checkpoints, resume).
/// Ctrl-C stops after the current step with a checkpoint (exit 130).
ExitCode runTrain(const CommonOptions &options, const TrainOptions &train,
                  mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr);

/// bench, profile, verify: a model compiled for one device and run on one
/// set of inputs (seeded random unless given) many times.
struct MeasureOptions {
  /// `cpu`, `cuda-emu`, `cuda[:N]`.
  std::string device = "cpu";
  /// Random unless files are given: the values do not change the time.
  InputOptions inputs;
  /// `--params FILE`, as for run.
  std::string params;
  /// Runs before measuring; runs measured (0: as many as `duration`
  /// seconds allow, at least 10).
  int64_t warmup = 5, iterations = 0;
  double duration = 3;
  /// `--json`: one JSON object on standard output instead of the tables.
  bool json = false;
  /// profile `--trace FILE`: a Chrome trace of the measured runs.
  std::string trace;
  /// The device's peaks for the achieved shares: devices/*.json by name or
  /// a file (default: `cpu` for the host devices, else `h100`).
  std::string peakSpec;
  /// verify: the tolerance a kernel's output must hold against the oracle.
  double rtol = 1e-5, atol = 1e-8;
  /// verify, TEST-ONLY (hidden `--debug-perturb-kernel N`): kernel N's
  /// output is perturbed in the compiled module.
  int64_t perturbKernel = -1;
};

/// `dlc bench M`: warm-up, then latency min/mean/median/p90/p99/max,
/// throughput, achieved GFLOP/s and GB/s against the device's peaks, host
/// overhead against kernel time, memory, and what bounds the model.
ExitCode runBench(const CommonOptions &options, const MeasureOptions &measure,
                  mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                  llvm::raw_ostream &os);

/// `dlc profile M`: every kernel's calls, time, share, GFLOP/s and GB/s,
/// with the ops fused in it; `--trace` writes a Chrome trace.
ExitCode runProfile(const CommonOptions &options, const MeasureOptions &measure,
                    mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                    llvm::raw_ostream &os);

/// `dlc verify M`: runs the compiled model with every kernel's output kept
/// and compares each with the float64 oracle's value of the same kernel;
/// names the first kernel out of tolerance, its ops and their source
/// locations. Exit 1 when one is.
ExitCode runVerify(const CommonOptions &options, const MeasureOptions &measure,
                   mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                   llvm::raw_ostream &os);

} // namespace dlc

#endif // DLC_DRIVER_COMMANDS_H
