//===- PlanReport.cpp - what the memory plan of a graph costs -------------===//

#include "driver/PlanReport.h"

#include "ir/DlcDialect.h"
#include "passes/Passes.h"
#include "passes/analysis/Liveness.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace dlc {

int64_t countKernels(func::FuncOp func) {
  return func.isExternal() ? 0 : int64_t(kernelsOf(func).size());
}

LogicalResult runCompilePipeline(ModuleOp module, int64_t memoryBudget, bool cpuLayout) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  buildCompilePipeline(pm, memoryBudget, cpuLayout);
  return pm.run(module);
}

PlanReport summarizePlan(func::FuncOp func, int64_t kernelsBefore) {
  PlanReport report;
  report.kernelsBefore = kernelsBefore;
  report.kernelsAfter = countKernels(func);
  auto intAttr = [&](StringRef name) {
    auto attr = func->getAttrOfType<IntegerAttr>(name);
    return attr ? attr.getInt() : 0;
  };
  report.arenaBytes = intAttr("dlc.arena_size");
  report.lowerBound = intAttr("dlc.peak_live_bytes");
  if (auto packer = func->getAttrOfType<StringAttr>("dlc.packer"))
    report.packer = packer.str();
  if (!func.isExternal()) {
    BufferLiveness liveness = analyzeBuffers(kernelsOf(func));
    report.naiveBytes = liveness.naiveBytes;
    report.buffers = liveness.buffers.size();
  }
  func.walk([&](Operation *op) {
    if (auto inPlace = op->getAttrOfType<DenseI64ArrayAttr>("dlc.inplace"))
      report.inPlaceBuffers +=
          llvm::count_if(inPlace.asArrayRef(), [](int64_t i) { return i >= 0; });
  });
  for (Operation &op : func.getBody().getOps())
    if (isa<ParamOp, ConstantOp>(op)) {
      ++report.weightTensors;
      report.weightBytes += tensorBytes(op.getResult(0).getType());
    }
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
    (func.getArgAttr(i, "dlc.state") ? report.stateBytes : report.inputBytes) +=
        tensorBytes(type);
  return report;
}

std::string withCommas(int64_t value) {
  std::string digits = std::to_string(value), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-')
      out += ',';
    out += digits[i];
  }
  return out;
}

/// a / b to three decimals, or "-" when b is 0.
static std::string ratio(int64_t a, int64_t b) {
  return b ? llvm::formatv("{0:F3}", double(a) / double(b)).str() : "-";
}

void printPlanReport(const PlanReport &r, llvm::raw_ostream &os) {
  os << "kernels: " << r.kernelsBefore << " before fusion, " << r.kernelsAfter
     << " after\n";
  os << "arena: " << withCommas(r.arenaBytes) << " bytes (" << r.buffers
     << " buffers, " << r.inPlaceBuffers << " written in place; packer: "
     << (r.packer.empty() ? "none" : r.packer) << ")\n";
  os << "lower bound: " << withCommas(r.lowerBound)
     << " bytes (the largest sum of live bytes at one step)\n";
  os << "naive: " << withCommas(r.naiveBytes)
     << " bytes (every intermediate its own buffer)\n";
  os << "arena / lower bound: " << ratio(r.arenaBytes, r.lowerBound) << "\n";
  os << "naive / arena: " << ratio(r.naiveBytes, r.arenaBytes) << "\n";
  os << "weights: " << withCommas(r.weightBytes) << " bytes in "
     << r.weightTensors << " tensors\n";
  os << "inputs: " << withCommas(r.inputBytes)
     << " bytes (the caller's buffers)\n";
  if (r.stateBytes)
    os << "state: " << withCommas(r.stateBytes)
       << " bytes (parameters and optimizer state, outside the arena)\n";
  os << "device memory: "
     << withCommas(r.weightBytes + r.arenaBytes + r.inputBytes + r.stateBytes)
     << " bytes (weights + arena + inputs" << (r.stateBytes ? " + state" : "")
     << ")\n";
}

TrainReport summarizeTrainStep(func::FuncOp func) {
  TrainReport report;
  llvm::StringSet<> stateNames;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto name = func.getArgAttrOfType<StringAttr>(i, "dlc.state"))
      stateNames.insert(name.getValue());
  // Names as dlc-differentiate gives them: `step`, `<param>.<moment>`.
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto name = func.getArgAttrOfType<StringAttr>(i, "dlc.state");
    if (!name)
      continue;
    auto [param, moment] = name.getValue().rsplit('.');
    int64_t bytes = tensorBytes(type);
    if (name.getValue() == "step") {
      report.stepBytes += bytes;
    } else if (!moment.empty() && stateNames.contains(param)) {
      report.momentBytes += bytes;
      ++report.momentTensors;
    } else {
      report.parameterBytes += bytes;
      ++report.parameterTensors;
    }
  }

  TrainStepParts parts(func);
  BufferLiveness liveness = analyzeBuffers(kernelsOf(func));
  groupAllocations(liveness, chooseInPlace(liveness));
  report.peakBytes = liveness.peakBytes;
  report.peakStep = liveness.peakStep + 1;
  report.steps = liveness.kernels.size();
  if (!liveness.kernels.empty())
    report.peak = breakDownStep(liveness, parts, liveness.peakStep);
  report.flops = countStepFlops(func, parts);

  if (auto remat = func->getAttrOfType<DictionaryAttr>("dlc.rematerialization")) {
    auto get = [&](StringRef key) {
      auto attr = remat.getAs<IntegerAttr>(key);
      return attr ? attr.getInt() : 0;
    };
    report.rematerialized = true;
    auto met = remat.getAs<BoolAttr>("met");
    report.budgetMet = met && met.getValue();
    report.budget = get("budget");
    report.arenaBefore = get("arena_before");
    report.arenaAfter = get("arena_after");
    report.peakBefore = get("peak_before");
    report.peakAfter = get("peak_after");
    report.recomputedValues = get("values");
    report.recomputedOps = get("ops");
  }
  return report;
}

void printTrainReport(const TrainReport &r, llvm::raw_ostream &os) {
  os << "state by kind: parameters " << withCommas(r.parameterBytes)
     << " bytes in " << r.parameterTensors << " tensors, optimizer moments "
     << withCommas(r.momentBytes) << " bytes in " << r.momentTensors
     << ", step counter " << withCommas(r.stepBytes) << " bytes\n";
  auto buffers = [](unsigned n) {
    return " in " + std::to_string(n) + (n == 1 ? " buffer" : " buffers");
  };
  os << "peak: " << withCommas(r.peakBytes) << " bytes live at kernel "
     << r.peakStep << " of " << r.steps << "\n";
  auto line = [&](const char *what, BufferRole role) {
    os << "  " << what << ": " << withCommas(r.peak.of(role)) << " bytes"
       << buffers(r.peak.count(role)) << "\n";
  };
  line("saved for the backward pass", BufferRole::Saved);
  line("gradients", BufferRole::Gradient);
  if (r.peak.of(BufferRole::NewState))
    line("new state", BufferRole::NewState);
  line("temporaries", BufferRole::Temporary);
  os << "FLOPs: forward " << withCommas(r.flops.forward) << ", backward "
     << withCommas(r.flops.backward);
  if (r.flops.recomputed)
    os << " (recomputation " << withCommas(r.flops.recomputed) << ")";
  os << ", update " << withCommas(r.flops.update) << " ("
     << withCommas(r.flops.total()) << " in all)\n";
  if (!r.rematerialized)
    return;
  os << "memory budget: " << withCommas(r.budget) << " bytes, "
     << (r.budgetMet ? "met" : "not met: the smallest arena reached is " +
                                   withCommas(r.arenaAfter) + " bytes")
     << "\n";
  os << "recomputed in the backward pass: " << r.recomputedValues
     << (r.recomputedValues == 1 ? " value (" : " values (") << r.recomputedOps
     << (r.recomputedOps == 1 ? " op), " : " ops), ")
     << withCommas(r.flops.recomputed) << " FLOPs\n";
  os << "arena before -> after: " << withCommas(r.arenaBefore) << " -> "
     << withCommas(r.arenaAfter) << " bytes\n";
  os << "peak before -> after: " << withCommas(r.peakBefore) << " -> "
     << withCommas(r.peakAfter) << " bytes\n";
  os << "FLOPs before -> after: "
     << withCommas(r.flops.total() - r.flops.recomputed) << " -> "
     << withCommas(r.flops.total()) << "\n";
}

} // namespace dlc
