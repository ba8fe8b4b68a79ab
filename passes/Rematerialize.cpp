//===- Rematerialize.cpp - recompute saved activations to fit a budget ----===//
//
// Makes a train step's arena fit a budget by recomputing, in the backward
// pass, forward values that the backward reads (saved activations), cheapest
// first, measuring each choice with the rest of dlc-compile (fuse, schedule,
// plan memory) on a copy of the function. Expects a train step
// (dlc-differentiate) after CSE, which would merge the clones back, and
// before dlc-fuse; static shapes.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/FlopCount.h"
#include "passes/analysis/Liveness.h"
#include "passes/autodiff/Recompute.h"

#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"

#include <tuple>

namespace dlc {
#define GEN_PASS_DEF_DLCREMATERIALIZE
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

namespace {

/// Recompute the saved value `result` of the op at `index` (block order of
/// the function before any recomputation), with ops up to `tier`.
struct Decision {
  unsigned index, result;
  int tier;
};

/// What the rest of dlc-compile plans for a function: the arena, the
/// largest sum of live bytes at one step, and live bytes summed over steps.
struct Measure {
  int64_t arena = 0, peak = 0, liveSum = 0;
  bool operator<(const Measure &o) const {
    return std::tie(arena, peak, liveSum) < std::tie(o.arena, o.peak, o.liveSum);
  }
};

/// What the recomputation of a list of decisions costs.
struct Cost {
  unsigned values = 0, ops = 0;
  int64_t flops = 0;
};

} // namespace

/// Applies `decisions` to `func`, whose ops before any were `ops`.
static Cost applyDecisions(ArrayRef<Operation *> ops,
                           ArrayRef<Decision> decisions, func::FuncOp func) {
  Cost cost;
  for (const Decision &d : decisions) {
    TrainStepParts parts(func);
    Value saved = ops[d.index]->getResult(d.result);
    SmallVector<Operation *> clones;
    if (!recompute(saved, recomputeChain(saved, d.tier, parts), parts, &clones))
      continue;
    ++cost.values;
    cost.ops += clones.size();
    for (Operation *clone : clones)
      cost.flops += countFlops(clone).total();
  }
  return cost;
}

/// The ops of `func`'s body in block order.
static SmallVector<Operation *> opsOf(func::FuncOp func) {
  return llvm::map_to_vector(func.getBody().front(),
                             [](Operation &op) { return &op; });
}

/// A copy of `func` beside it, with `decisions` applied; `ops` receives its
/// ops before them.
static func::FuncOp materialize(func::FuncOp func, ArrayRef<Decision> decisions,
                                SmallVectorImpl<Operation *> *ops = nullptr) {
  OpBuilder builder(func);
  builder.setInsertionPointAfter(func);
  auto copy = cast<func::FuncOp>(builder.clone(*func));
  copy.setSymName((func.getSymName() + ".rematerialize").str());
  copy.setPrivate();
  SmallVector<Operation *> original = opsOf(copy);
  (void)applyDecisions(original, decisions, copy);
  if (ops)
    ops->assign(original.begin(), original.end());
  return copy;
}

/// The saved values of `func` after `decisions` whose recomputation frees
/// bytes and clones ops of `tier` at most and of `tier` at least once, but
/// those in `tried` (which it extends): cheapest FLOPs per byte first.
static SmallVector<Decision>
candidates(func::FuncOp func, ArrayRef<Decision> decisions, int tier,
           llvm::DenseSet<std::pair<unsigned, unsigned>> &tried) {
  SmallVector<Operation *> ops;
  func::FuncOp state = materialize(func, decisions, &ops);
  llvm::DenseMap<Operation *, unsigned> indexOf;
  for (auto [i, op] : llvm::enumerate(ops))
    indexOf[op] = i;
  TrainStepParts parts(state);
  SmallVector<std::pair<double, Decision>> found;
  for (Value saved : savedActivations(state, parts)) {
    auto result = cast<OpResult>(saved);
    std::pair<unsigned, unsigned> key{indexOf.lookup(result.getOwner()),
                                      result.getResultNumber()};
    RecomputeChain chain = recomputeChain(saved, tier, parts);
    if (tried.contains(key) || chain.tier != tier || chain.bytesFreed <= 0)
      continue;
    tried.insert(key);
    found.push_back({double(chain.flops) / double(chain.bytesFreed),
                     {key.first, key.second, tier}});
  }
  state.erase();
  llvm::stable_sort(found, [](const auto &a, const auto &b) {
    return a.first < b.first;
  });
  return llvm::map_to_vector(found, [](const auto &c) { return c.second; });
}

namespace {

struct DlcRematerializePass
    : dlc::impl::DlcRematerializeBase<DlcRematerializePass> {
  using DlcRematerializeBase::DlcRematerializeBase;

  LogicalResult initialize(MLIRContext *) override {
    planPipeline.clear();
    planPipeline.addPass(createDlcFuse());
    planPipeline.addPass(createDlcSchedule());
    planPipeline.addPass(createDlcPlanMemory());
    return success();
  }
  void runOnOperation() override;

private:
  LogicalResult rematerialize(func::FuncOp func);
  /// Plans `func` with `decisions` applied as dlc-compile would, on a copy.
  FailureOr<Measure> measure(func::FuncOp func, ArrayRef<Decision> decisions);

  OpPassManager planPipeline{func::FuncOp::getOperationName()};
};

} // namespace

FailureOr<Measure> DlcRematerializePass::measure(func::FuncOp func,
                                                 ArrayRef<Decision> decisions) {
  func::FuncOp copy = materialize(func, decisions);
  auto erase = llvm::make_scope_exit([&] { copy.erase(); });
  if (failed(runPipeline(planPipeline, copy)))
    return failure();
  Measure m;
  m.arena = copy->getAttrOfType<IntegerAttr>("dlc.arena_size").getInt();
  m.peak = copy->getAttrOfType<IntegerAttr>("dlc.peak_live_bytes").getInt();
  BufferLiveness liveness = analyzeBuffers(kernelsOf(copy));
  groupAllocations(liveness, chooseInPlace(liveness));
  for (const Allocation &a : liveness.allocations)
    m.liveSum += a.size * (a.last - a.first + 1);
  return m;
}

/// 1. Measure the plan as it stands; stop if it fits.
/// 2. Per tier (1, 2, 3), while some candidate is untried: collect the saved
///    values whose chain's highest tier is this one and that free bytes,
///    cheapest FLOPs per byte first; try each on a copy, keep it when the
///    plan shrinks; stop when it fits.
/// 3. Undo kept decisions, latest first, where that grows neither the arena
///    nor the peak (so a plan that fits still does).
/// 4. Apply the decisions to the function; record and report.
LogicalResult DlcRematerializePass::rematerialize(func::FuncOp func) {
  if (failed(checkStaticResults(func)))
    return failure();
  WalkResult fused = func.walk([](FusionOp op) {
    op.emitOpError("dlc-rematerialize expects a graph before dlc-fuse");
    return WalkResult::interrupt();
  });
  if (fused.wasInterrupted())
    return failure();

  SmallVector<Decision> decisions;
  FailureOr<Measure> before = measure(func, decisions);
  if (failed(before))
    return failure();
  Measure current = *before;
  auto fits = [&] { return current.arena <= budget; };

  for (int tier = 1; tier <= 3 && !fits(); ++tier) {
    llvm::DenseSet<std::pair<unsigned, unsigned>> tried;
    for (bool progress = true; progress && !fits();) {
      progress = false;
      for (const Decision &candidate :
           candidates(func, decisions, tier, tried)) {
        decisions.push_back(candidate);
        FailureOr<Measure> m = measure(func, decisions);
        if (failed(m))
          return failure();
        if (!(*m < current)) {
          decisions.pop_back();
          continue;
        }
        current = *m;
        progress = true;
        if (fits())
          break;
      }
    }
  }

  for (size_t i = decisions.size(); i-- > 0;) {
    SmallVector<Decision> fewer(decisions);
    fewer.erase(fewer.begin() + i);
    FailureOr<Measure> m = measure(func, fewer);
    if (failed(m))
      return failure();
    if (m->arena <= current.arena && m->peak <= current.peak) {
      decisions = std::move(fewer);
      current = *m;
    }
  }
  Cost cost = applyDecisions(opsOf(func), decisions, func);

  Builder b(&getContext());
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  func->setAttr("dlc.rematerialization",
                b.getDictionaryAttr({
                    b.getNamedAttr("budget", i64(budget)),
                    b.getNamedAttr("arena_before", i64(before->arena)),
                    b.getNamedAttr("arena_after", i64(current.arena)),
                    b.getNamedAttr("peak_before", i64(before->peak)),
                    b.getNamedAttr("peak_after", i64(current.peak)),
                    b.getNamedAttr("met", b.getBoolAttr(fits())),
                    b.getNamedAttr("values", i64(cost.values)),
                    b.getNamedAttr("ops", i64(cost.ops)),
                    b.getNamedAttr("flops", i64(cost.flops)),
                }));
  if (!fits())
    func.emitWarning() << "memory budget of " << int64_t(budget)
                       << " bytes not met: the smallest arena reached is "
                       << current.arena << " bytes (" << before->arena
                       << " without recomputation)";
  return success();
}

void DlcRematerializePass::runOnOperation() {
  if (budget <= 0)
    return;
  for (auto func : llvm::to_vector(getOperation().getOps<func::FuncOp>()))
    if (!func.isExternal() && isTrainStep(func) && failed(rematerialize(func)))
      return signalPassFailure();
}
