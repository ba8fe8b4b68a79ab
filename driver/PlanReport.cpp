//===- PlanReport.cpp - what the memory plan of a graph costs -------------===//

#include "driver/PlanReport.h"

#include "ir/DlcDialect.h"
#include "passes/Passes.h"
#include "passes/analysis/Liveness.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace dlc {

int64_t countKernels(func::FuncOp func) {
  return func.isExternal() ? 0 : int64_t(kernelsOf(func).size());
}

LogicalResult runCompilePipeline(ModuleOp module) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  buildCompilePipeline(pm);
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
  for (Type type : func.getArgumentTypes())
    report.inputBytes += tensorBytes(type);
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
  os << "device memory: " << withCommas(r.weightBytes + r.arenaBytes + r.inputBytes)
     << " bytes (weights + arena + inputs)\n";
}

} // namespace dlc
