//===- VerifyMemoryPlan.cpp - proves a graph's memory plan ----------------===//
//
// Trusts nothing the planner computed: recomputes liveness from the IR as
// it is, then checks the plan's attributes (docs/design/
// 2026-11-22-memory-planning.md) against it. A plan that passes never lets
// a kernel write bytes that a live buffer still holds.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/analysis/Liveness.h"
#include "passes/analysis/State.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <optional>

namespace dlc {
#define GEN_PASS_DEF_DLCVERIFYMEMORYPLAN
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

namespace {

/// Names values as the printed function does: `%3 (dlc.exp)`.
class ValueNamer {
public:
  explicit ValueNamer(func::FuncOp func) : func(func) {}
  std::string operator()(Value v) {
    if (!state)
      state.emplace(func);
    std::string text;
    llvm::raw_string_ostream os(text);
    v.printAsOperand(os, *state);
    if (Operation *def = v.getDefiningOp())
      os << " (" << def->getName() << ")";
    return text;
  }

private:
  func::FuncOp func;
  std::optional<AsmState> state;
};

struct DlcVerifyMemoryPlanPass
    : dlc::impl::DlcVerifyMemoryPlanBase<DlcVerifyMemoryPlanPass> {
  using DlcVerifyMemoryPlanBase::DlcVerifyMemoryPlanBase;

  /// 1. Read the arena size, and each kernel's offsets.
  /// 2. Recompute the buffers and their live ranges from the current order.
  /// 3. Each offset is aligned and its buffer inside the arena.
  /// 4. Each declared in-place reuse is legal: the kernel may write that
  ///    result over that operand (inPlaceCandidates), the operand is an
  ///    arena buffer read for the last time here and not returned, it is
  ///    given to one result only, and both have the same offset.
  /// 5. Sweep the buffers by first step: any two live at a common step
  ///    have disjoint byte ranges, unless they are a legal in-place pair.
  /// 6. The recorded lower bound is the recomputed peak.
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (failed(checkStaticResults(func)))
      return signalPassFailure();
    ValueNamer name(func);
    bool ok = true;
    auto arenaAttr = func->getAttrOfType<IntegerAttr>("dlc.arena_size");
    if (!arenaAttr) {
      func.emitError("has no memory plan: 'dlc.arena_size' is missing (run "
                     "--dlc-plan-memory first)");
      return signalPassFailure();
    }
    int64_t arena = arenaAttr.getInt();

    BufferLiveness liveness = analyzeBuffers(kernelsOf(func));
    // New state written in place: its writer runs after every other reader
    // of the old value, and may declare that value as its in-place operand.
    llvm::DenseMap<Value, Value> stateArgOf;
    if (auto ties = stateTies(func); failed(ties)) {
      return signalPassFailure();
    } else {
      llvm::DenseMap<Operation *, int64_t> stepOf;
      for (auto [step, kernel] : llvm::enumerate(liveness.kernels))
        stepOf[kernel] = step;
      for (const StateTie &tie : *ties) {
        if (!tie.inPlace)
          continue;
        stateArgOf[tie.value] = tie.arg;
        for (Operation *kernel : liveness.kernels)
          if (kernel != tie.writer && kernelReads(kernel, tie.arg) &&
              stepOf[kernel] > stepOf[tie.writer]) {
            tie.writer->emitOpError("writes state '")
                << stateName(func, tie.result, true)
                << "' in place before a kernel at step " << stepOf[kernel]
                << " reads its old value";
            ok = false;
          }
      }
    }
    std::vector<int64_t> offset(liveness.buffers.size(), 0);
    std::vector<bool> donated(liveness.buffers.size());
    SmallVector<std::pair<unsigned, unsigned>> inPlace;
    for (auto [step, kernel] : llvm::enumerate(liveness.kernels)) {
      unsigned results = kernel->getNumResults();
      auto offsets = kernel->getAttrOfType<DenseI64ArrayAttr>("dlc.offsets");
      if (!offsets || offsets.size() != int64_t(results)) {
        kernel->emitOpError("needs 'dlc.offsets' with one offset per result (")
            << results << ")";
        ok = false;
        continue;
      }
      for (unsigned r = 0; r < results; ++r) {
        unsigned index = liveness.bufferOf.lookup(kernel->getResult(r));
        const Buffer &buffer = liveness.buffers[index];
        offset[index] = offsets[r];
        if (offsets[r] < 0 || offsets[r] % kArenaAlignment != 0 ||
            offsets[r] + buffer.bytes > arena) {
          kernel->emitOpError("result #")
              << r << " at offset " << offsets[r] << " (" << buffer.bytes
              << " bytes) is not " << kArenaAlignment
              << "-byte aligned inside the arena of " << arena << " bytes";
          ok = false;
        }
      }
      auto declared = kernel->getAttrOfType<DenseI64ArrayAttr>("dlc.inplace");
      if (!declared)
        continue;
      if (declared.size() != int64_t(results)) {
        kernel->emitOpError("needs 'dlc.inplace' with one entry per result (")
            << results << ")";
        ok = false;
        continue;
      }
      auto candidates = inPlaceCandidates(kernel);
      for (unsigned r = 0; r < results; ++r) {
        int64_t operand = declared[r];
        if (operand < 0)
          continue;
        auto fail = [&]() {
          ok = false;
          return kernel->emitOpError("result #")
                 << r << " cannot reuse operand #" << operand << " in place: ";
        };
        if (operand >= kernel->getNumOperands()) {
          fail() << "there is no such operand";
          continue;
        }
        Value value = kernel->getOperand(operand);
        if (stateArgOf.lookup(kernel->getResult(r)) == value) {
          if (!llvm::is_contained(candidates, std::make_pair(unsigned(operand), r)))
            fail() << "the kernel is not element-wise from its state to the "
                      "new state";
          continue;
        }
        int donor = liveness.lookup(value);
        unsigned taker = liveness.bufferOf.lookup(kernel->getResult(r));
        if (donor < 0) {
          fail() << name(value) << " is not an arena buffer";
          continue;
        }
        const Buffer &d = liveness.buffers[donor];
        if (!llvm::is_contained(candidates, std::make_pair(unsigned(operand), r)))
          fail() << "the kernel is not element-wise from it to the result "
                    "with equal element counts and byte sizes";
        else if (d.isOutput)
          fail() << name(value) << " is a graph output";
        else if (d.last != int64_t(step))
          fail() << name(value) << " is read after this kernel, at step "
                 << d.last;
        else if (donated[donor])
          fail() << name(value) << " is already reused by another result";
        else if (offset[donor] != offset[taker])
          fail() << "they are at different offsets (" << offset[donor]
                 << " and " << offset[taker] << ")";
        else {
          donated[donor] = true;
          inPlace.push_back({unsigned(donor), taker});
        }
      }
    }
    if (!ok)
      return signalPassFailure();
    groupAllocations(liveness, inPlace);

    SmallVector<unsigned> active;
    for (auto [index, buffer] : llvm::enumerate(liveness.buffers)) {
      llvm::erase_if(active, [&, first = buffer.first](unsigned a) {
        return liveness.buffers[a].last < first;
      });
      for (unsigned a : active) {
        const Buffer &other = liveness.buffers[a];
        int64_t lo = offset[index], hi = lo + buffer.bytes;
        int64_t otherLo = offset[a], otherHi = otherLo + other.bytes;
        if (!buffer.bytes || !other.bytes || hi <= otherLo || otherHi <= lo ||
            buffer.donor == int(a))
          continue;
        InFlightDiagnostic diag =
            buffer.value.getDefiningOp()->emitOpError("buffer of ")
            << name(buffer.value) << " at [" << lo << ", " << hi
            << ") overlaps the buffer of " << name(other.value) << " at ["
            << otherLo << ", " << otherHi << ") while both are live at step "
            << buffer.first;
        diag.attachNote(other.value.getLoc())
            << name(other.value) << " is defined here";
        ok = false;
        break;
      }
      active.push_back(index);
    }

    auto peakAttr = func->getAttrOfType<IntegerAttr>("dlc.peak_live_bytes");
    if (ok && peakAttr && peakAttr.getInt() != liveness.peakBytes) {
      func.emitError("'dlc.peak_live_bytes' is ")
          << peakAttr.getInt() << " but the live bytes of the plan peak at "
          << liveness.peakBytes;
      ok = false;
    }
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
