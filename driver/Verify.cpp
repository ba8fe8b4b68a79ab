//===- Verify.cpp - dlc verify: every kernel against the oracle -----------===//
//
// The model is fused as `dlc compile` fuses it; then every kernel's results
// are added to the graph's outputs, and the rest of dlc-compile (schedule,
// memory plan) and the backend run as usual, so the compiled module keeps
// the very kernels a normal compile makes and hands each one's output back.
// The float64 oracle evaluates the same fused graph (its ops one by one,
// unfused in effect: a kernel is only a grouping) on the same inputs. The
// kernels are compared in the order they run; the first out of tolerance
// is named with its ops and their source locations (file:line:col of a
// .dlg, node names of an ONNX model). A kernel fed by a faulty one also
// differs, so the first is the one to look at.
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"

#include "driver/CompiledModel.h"
#include "driver/DriverSupport.h"
#include "driver/Inputs.h"
#include "driver/TensorReport.h"
#include "passes/analysis/Liveness.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

using namespace mlir;

namespace dlc {
namespace {

/// The source locations of the ops in `kernel`: `file:line:col` and ONNX
/// node names, each once, in op order.
std::vector<std::string> sourceLocations(Operation *kernel) {
  std::vector<std::string> found;
  auto add = [&](std::string text) {
    if (llvm::find(found, text) == found.end())
      found.push_back(std::move(text));
  };
  std::function<void(Location)> visit = [&](Location loc) {
    if (auto file = dyn_cast<FileLineColLoc>(loc)) {
      if (file.getLine() == 0) // an ONNX model's: the file, no place in it
        return;
      add(llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(), file.getLine(),
                                 file.getColumn())
                       .str());
    } else if (auto name = dyn_cast<NameLoc>(loc)) {
      add("node '" + name.getName().str() + "'");
      visit(name.getChildLoc());
    } else if (auto fused = dyn_cast<FusedLoc>(loc))
      for (Location inner : fused.getLocations())
        visit(inner);
    else if (auto callSite = dyn_cast<CallSiteLoc>(loc))
      visit(callSite.getCallee());
  };
  kernel->walk([&](Operation *op) {
    if (op == kernel || !op->hasTrait<OpTrait::IsTerminator>())
      visit(op->getLoc());
  });
  return found;
}

/// `value` as C++ streams print it by default (1e-05, 0.0001).
std::string shortest(double value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

/// Makes every kernel's results outputs of `func` too (after the graph's
/// own), so that the compiled module returns them.
void returnEveryKernel(func::FuncOp func) {
  Operation *terminator = func.getBody().front().getTerminator();
  SmallVector<Value> results(terminator->getOperands());
  SmallVector<DictionaryAttr> attributes;
  func.getAllResultAttrs(attributes);
  attributes.resize(results.size());
  Builder b(func.getContext());
  for (auto [k, op] : llvm::enumerate(kernelsOf(func)))
    for (Value v : op->getResults())
      if (isa<RankedTensorType>(v.getType())) {
        results.push_back(v);
        attributes.push_back(b.getDictionaryAttr(b.getNamedAttr(
            "dlc.name", b.getStringAttr("kernel" + std::to_string(k) + "." +
                                        std::to_string(cast<OpResult>(v).getResultNumber())))));
      }
  terminator->setOperands(results);
  SmallVector<Type> types;
  for (Value v : results)
    types.push_back(v.getType());
  func.setFunctionType(FunctionType::get(func.getContext(), func.getArgumentTypes(), types));
  func.setAllResultAttrs(attributes);
}

/// The unit roundoff of a --precision mode's products: 2^-11 for TF32 and
/// f16 (10 stored mantissa bits), 2^-8 for bf16 (7).
double unitRoundoff(llvm::StringRef mode) {
  return mode == "bf16" ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
}

/// What dlc states for a --precision mode: each output of the model within
/// 16 unit roundoffs of its f32 value, in the normwise relative error
/// ||y - y_f32|| / ||y_f32|| (an element-wise bound would be broken by
/// cancellation in any sum, whatever the precision).
double statedPrecisionError(llvm::StringRef mode) { return 16 * unitRoundoff(mode); }

double normwiseRelativeError(const oracle::Tensor &actual, const oracle::Tensor &expected) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < actual.data.size() && i < expected.data.size(); ++i) {
    double d = actual.data[i] - expected.data[i];
    diff += d * d;
    norm += expected.data[i] * expected.data[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

} // namespace

ExitCode runVerify(const CommonOptions &options, const MeasureOptions &measure,
                   MLIRContext &context, llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os) {
  std::map<std::string, oracle::Tensor> given;
  if (ExitCode code = readInputFiles(context, measure.inputs, given))
    return code;
  if (measure.perturbKernel >= 0) // the runtime's test hook (Session.h)
    setenv("DLC_DEBUG_PERTURB_KERNEL", std::to_string(measure.perturbKernel).c_str(), 1);

  // The fused graph with every kernel's results returned; the oracle's copy
  // is taken before the schedule and the memory plan.
  OwningOpRef<ModuleOp> reference;
  size_t graphOutputs = 0;
  CompileForDevice compile;
  compile.device = measure.device;
  compile.params = measure.params;
  // Under --precision, the graph as written too: the oracle's f32 answer the
  // reduced precision is measured against.
  OwningOpRef<ModuleOp> asWritten;
  bool reduced = options.precision != "f32";
  if (reduced)
    compile.afterLoad = [&](ModuleOp module) { asWritten = module.clone(); };
  compile.afterFusion = [&](func::FuncOp func) {
    graphOutputs = func.getNumResults();
    returnEveryKernel(func);
    reference = cast<ModuleOp>(func->getParentOp()->clone());
    return success();
  };
  CompiledModel compiled;
  if (ExitCode code = compileForDevice(options, compile, given, context, sourceMgr, compiled))
    return code;

  std::vector<ModuleTensorInfo> graphInputs = compiled.inputs;
  std::vector<oracle::Tensor> inputs;
  if (ExitCode code = assembleInputs(context, graphInputs, given, measure.inputs,
                                     /*randomByDefault=*/true, compiled.what(), inputs))
    return code;
  std::vector<oracle::Tensor> actual;
  std::string error;
  if (ExitCode code = compiled.module.run(measure.device, inputs, actual, error))
    return fail(context, code, error);
  ParamStore params;
  auto expected = oracle::evaluate(entryGraph(*reference), inputs, params);
  if (failed(expected))
    return kExitRuntimeFault;

  // --precision: each graph output against the f32 graph's, by the mode's
  // stated bound.
  struct PrecisionCheck {
    std::string output;
    double error;
    bool within;
  };
  std::vector<PrecisionCheck> precisionChecks;
  double bound = statedPrecisionError(options.precision);
  if (reduced) {
    ParamStore f32Params;
    auto f32 = oracle::evaluate(entryGraph(*asWritten), inputs, f32Params);
    if (failed(f32))
      return kExitRuntimeFault;
    for (size_t i = 0; i < graphOutputs && i < f32->size(); ++i) {
      double error = normwiseRelativeError(actual[i], (*f32)[i]);
      precisionChecks.push_back({compiled.outputs[i].name, error, error <= bound});
    }
  }
  bool precisionOk = llvm::all_of(precisionChecks, [](const PrecisionCheck &c) { return c.within; });

  // Output i of the planned function is its return's operand i: the kernel
  // that computes it, in the order the kernels run.
  func::FuncOp planned = compiled.planned;
  Operation *terminator = planned.getBody().front().getTerminator();
  SmallVector<Operation *> kernels = kernelsOf(planned);
  llvm::DenseMap<Operation *, size_t> order;
  for (auto [i, op] : llvm::enumerate(kernels))
    order[op] = i;
  struct Checked {
    size_t kernel;
    size_t output;
  };
  std::vector<Checked> checks;
  for (size_t i = graphOutputs; i < terminator->getNumOperands(); ++i) {
    Operation *producer = terminator->getOperand(i).getDefiningOp();
    auto found = producer ? order.find(producer) : order.end();
    if (found != order.end())
      checks.push_back({found->second, i});
  }
  std::stable_sort(checks.begin(), checks.end(),
                   [](const Checked &a, const Checked &b) { return a.kernel < b.kernel; });

  struct Result {
    size_t kernel;
    bool match;
    std::string report;
  };
  std::vector<Result> results;
  std::optional<size_t> firstBad;
  for (const Checked &c : checks) {
    std::string report;
    bool match = compareTensors(actual[c.output], (*expected)[c.output], measure.rtol,
                                measure.atol, report);
    if (!results.empty() && results.back().kernel == c.kernel) {
      results.back().match &= match;
      if (!match)
        results.back().report = report;
    } else {
      results.push_back({c.kernel, match, report});
    }
    if (!match && !firstBad)
      firstBad = results.size() - 1;
  }

  auto kernelName = [](size_t index) { return "dlc_kernel_" + std::to_string(index); };
  if (measure.json) {
    llvm::json::Array rows;
    for (const Result &r : results)
      rows.push_back(llvm::json::Object{{"kernel", kernelName(r.kernel)},
                                        {"ops", fusedOpNames(kernels[r.kernel])},
                                        {"match", r.match},
                                        {"report", r.report}});
    llvm::json::Object out{{"model", options.modelPath},
                           {"device", measure.device},
                           {"rtol", measure.rtol},
                           {"atol", measure.atol},
                           {"kernels", std::move(rows)}};
    if (reduced) {
      llvm::json::Array outputs;
      for (const PrecisionCheck &c : precisionChecks)
        outputs.push_back(llvm::json::Object{
            {"output", c.output}, {"error", c.error}, {"within", c.within}});
      out["precision"] = llvm::json::Object{{"mode", options.precision},
                                            {"stated_error", bound},
                                            {"outputs", std::move(outputs)}};
    }
    if (firstBad) {
      const Result &bad = results[*firstBad];
      llvm::json::Array locations;
      for (const std::string &l : sourceLocations(kernels[bad.kernel]))
        locations.push_back(l);
      out["first_mismatch"] = llvm::json::Object{{"kernel", kernelName(bad.kernel)},
                                                 {"ops", fusedOpNames(kernels[bad.kernel])},
                                                 {"locations", std::move(locations)},
                                                 {"report", bad.report}};
    }
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
    return firstBad || !precisionOk ? kExitCheckFailed : kExitSuccess;
  }

  os << "dlc verify " << options.modelPath << " on " << measure.device << ": " << results.size()
     << " kernels against the float64 oracle (rtol " << shortest(measure.rtol) << ", atol "
     << shortest(measure.atol) << ")\n";
  for (const Result &r : results)
    os << llvm::formatv("  {0,-16} {1,-4} {2}  [{3}]\n", kernelName(r.kernel),
                        r.match ? "ok" : "OFF", r.report, fusedOpNames(kernels[r.kernel]));
  if (reduced) {
    os << "--precision " << options.precision << ": the outputs against the f32 graph's "
       << "(float64 oracle), normwise relative error, stated at most "
       << shortest(bound) << " (16 unit roundoffs)\n";
    for (const PrecisionCheck &c : precisionChecks)
      os << llvm::formatv("  {0,-16} {1,-4} {2}\n", c.output, c.within ? "ok" : "OFF",
                          shortest(c.error));
  }
  if (!firstBad) {
    os << "every kernel is within tolerance\n";
    return precisionOk ? kExitSuccess : kExitCheckFailed;
  }
  const Result &bad = results[*firstBad];
  os << "first kernel out of tolerance: " << kernelName(bad.kernel) << " (ops "
     << fusedOpNames(kernels[bad.kernel]) << ")\n";
  for (const std::string &l : sourceLocations(kernels[bad.kernel]))
    os << "  from " << l << "\n";
  os << "  " << bad.report << "\n";
  return kExitCheckFailed;
}

} // namespace dlc
