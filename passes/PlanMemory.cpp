//===- PlanMemory.cpp - one arena for a graph's intermediate tensors ------===//
//
// Gives every kernel result an offset in one arena, in the current kernel
// order (run dlc-schedule first): liveness over the steps, in-place reuse
// of dying element-wise operands, then the packer(s). Expects static shapes;
// works on unfused and fused IR alike. The attributes it writes are
// specified in docs/design/2026-11-22-memory-planning.md.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/analysis/Liveness.h"
#include "passes/analysis/State.h"
#include "passes/analysis/MemoryPacking.h"

#include "mlir/IR/Builders.h"

namespace dlc {
#define GEN_PASS_DEF_DLCPLANMEMORY
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

namespace {
struct DlcPlanMemoryPass : dlc::impl::DlcPlanMemoryBase<DlcPlanMemoryPass> {
  using DlcPlanMemoryBase::DlcPlanMemoryBase;

  /// 1. Liveness of the kernel results over the current order.
  /// 2. In-place reuse: chains of buffers that share an allocation.
  /// 3. Pack the allocations (the chosen packer; `best` keeps the smallest
  ///    of all, greedy-by-size included).
  /// 4. Record offsets and in-place operands on the kernels, the arena
  ///    size, the lower bound and the packer on the function.
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (packer != "best" && packer != "greedy-by-size") {
      func.emitError() << "unknown packer '" << packer
                       << "' (expected best or greedy-by-size)";
      return signalPassFailure();
    }
    if (failed(checkStaticResults(func)))
      return signalPassFailure();
    BufferLiveness liveness = analyzeBuffers(kernelsOf(func));
    if (inPlace)
      groupAllocations(liveness, chooseInPlace(liveness));

    std::vector<LiveRange> ranges;
    for (const Allocation &a : liveness.allocations)
      ranges.push_back({a.size, a.first, a.last});
    PackingOptions options;
    options.exactLimit = exactLimit;
    options.perturbations = localSearch;
    Packing packing =
        packer == "best" ? packBest(ranges, options) : packGreedyBySize(ranges);

    // New state a kernel writes over the state it reads: that operand is
    // the result's buffer too.
    llvm::DenseMap<Value, Value> stateDonor;
    if (auto ties = stateTies(func); succeeded(ties))
      for (const StateTie &tie : *ties)
        if (tie.inPlace && kernelReads(tie.writer, tie.arg))
          stateDonor[tie.value] = tie.arg;

    Builder b(&getContext());
    for (Operation *kernel : liveness.kernels) {
      SmallVector<int64_t> offsets, donors;
      bool anyInPlace = false;
      for (Value result : kernel->getResults()) {
        const Buffer &buffer = liveness.buffers[liveness.bufferOf.lookup(result)];
        offsets.push_back(packing.offsets[buffer.allocation]);
        int64_t donor = -1;
        if (Value arg = stateDonor.lookup(result)) {
          for (OpOperand &operand : kernel->getOpOperands())
            if (operand.get() == arg)
              donor = operand.getOperandNumber();
          anyInPlace = true;
        } else if (buffer.donor >= 0) {
          Value donated = liveness.buffers[buffer.donor].value;
          for (OpOperand &operand : kernel->getOpOperands())
            if (operand.get() == donated) {
              donor = operand.getOperandNumber();
              break;
            }
          anyInPlace = true;
        }
        donors.push_back(donor);
      }
      kernel->setAttr("dlc.offsets", b.getDenseI64ArrayAttr(offsets));
      if (anyInPlace)
        kernel->setAttr("dlc.inplace", b.getDenseI64ArrayAttr(donors));
      else
        kernel->removeAttr("dlc.inplace");
    }
    func->setAttr("dlc.arena_size", b.getI64IntegerAttr(packing.size));
    func->setAttr("dlc.peak_live_bytes", b.getI64IntegerAttr(liveness.peakBytes));
    func->setAttr("dlc.packer", b.getStringAttr(packing.packer));
  }
};
} // namespace
