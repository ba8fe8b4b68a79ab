//===- Commands.h - the verbs of the dlc tool -------------------*- C++ -*-===//
//
// Each verb takes its options as a plain struct and returns an exit code of
// ExitCodes.h; the command line lives in tools/dlc. One file per verb
// (Check.cpp, Compile.cpp, Plan.cpp, Run.cpp), sharing DriverSupport.h.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_COMMANDS_H
#define DLC_DRIVER_COMMANDS_H

#include "driver/ExitCodes.h"

#include <cstdint>
#include <map>
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
};

/// `dlc check M`: inputs, outputs, parameters (count, bytes) and FLOPs.
ExitCode runCheck(const CommonOptions &options, mlir::MLIRContext &context,
                  llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os);

struct CompileOptions {
  /// `ast`, `mlir`, `fused` or `cpp`; empty: write a module to `output`.
  std::string emit;
  /// Where to write; "-" is standard output.
  std::string output = "-";
  /// `--stats`: run the dlc-compile pipeline and print its plan report.
  bool stats = false;
  /// `--target`: what the module's kernels run on.
  std::string target = "cpu";
};

/// `dlc compile M --emit=...`: prints a stage of the pipeline; with
/// `--stats`, then runs the dlc-compile pipeline and prints runPlan's report.
ExitCode runCompile(const CommonOptions &options,
                    const CompileOptions &compile, mlir::MLIRContext &context,
                    llvm::SourceMgr &sourceMgr);

/// `dlc plan M`: runs the dlc-compile pipeline (the plan verifier included)
/// and prints kernels before and after fusion, the arena against its lower
/// bound and the naive sum, and the weights (driver/PlanReport.h).
ExitCode runPlan(const CommonOptions &options, mlir::MLIRContext &context,
                 llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os);

struct RunOptions {
  /// `cpu` (compile, then run through the runtime) or `reference` (the
  /// float64 oracle on the IR).
  std::string device = "cpu";
  /// `NAME=@file` arguments, unparsed.
  std::vector<std::string> inputs, outputs, expectedOutputs;
  double rtol = 1e-5, atol = 1e-8;
  uint64_t seed = 0;
  /// Where to save every parameter's value (.npz or .safetensors).
  std::string saveParams;
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

} // namespace dlc

#endif // DLC_DRIVER_COMMANDS_H
