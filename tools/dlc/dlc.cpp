//===- dlc.cpp - the dlc command-line driver ------------------------------===//
//
// `dlc <command> <model> [options]`: check, compile, run. Parses the command
// line (llvm::cl, with MLIR's own flags unchanged), installs a diagnostic
// handler that prints `file:line:col: error:` with the source line and a
// caret, and hands over to driver/Commands.
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

namespace cl = llvm::cl;
using namespace dlc;

static cl::OptionCategory category("dlc options");

static cl::opt<std::string> command(cl::Positional, cl::Required,
                                    cl::desc("<check|compile|plan|run>"),
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
           cl::desc("run: where to run: cpu (compiled; the default), "
                    "cuda-emu (the CUDA kernels on the CPU), cuda[:N] or "
                    "reference (the float64 oracle)"),
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
static cl::opt<uint64_t> seed("seed",
                              cl::desc("run: seed of the random inputs"),
                              cl::init(0), cl::cat(category));
static cl::opt<std::string> saveParams(
    "save-params",
    cl::desc("run: save every parameter's value to a .npz/.safetensors file"),
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
static cl::opt<unsigned> showValues("show", cl::desc("run: values printed per output"),
                                    cl::init(8), cl::cat(category));

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
  mlir::registerMLIRContextCLOptions();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "dlc: a dataflow graph compiler for deep-learning models\n\n"
          "  dlc check M.dlg [--dim N=64]         inputs, outputs, "
          "parameters, FLOPs\n"
          "  dlc compile M.dlg -o M.dlcm [--target cpu]  write a module\n"
          "  dlc compile M.dlg --emit=ast|mlir|fused|cpp  print a stage\n"
          "  dlc compile M.dlg --stats            compile; print the memory "
          "plan's figures\n"
          "  dlc plan M.dlg [--dim N=64]          kernels, arena, lower "
          "bound, weights\n"
          "  dlc run M.dlg|M.dlcm [--device cpu|reference] [--input x=@x.npy]\n"
          "            [--output y=@y.npy]\n"
          "            [--expected-output y=@y.npy --rtol R --atol A] "
          "[--seed S]\n",
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
  if (command == "compile")
    return runCompile(common,
                      {emit, outputPath, llvm::AreStatisticsEnabled(), target},
                      context, sourceMgr);
  if (command == "plan")
    return runPlan(common, context, sourceMgr, llvm::outs());
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
    run.showValues = showValues;
    run.stage = stage;
    return runRun(common, run, context, sourceMgr, llvm::outs());
  }
  llvm::errs() << "dlc: error: unknown command '" << command
               << "' (expected check, compile, plan or run)\n";
  return kExitBadInput;
}
