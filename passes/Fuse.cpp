//===- Fuse.cpp - group a graph's ops into dlc.fusion kernels -------------===//
//
// Outlines every op of a graph but params, constants and the return into a
// dlc.fusion region, one region per kernel; the grouping rules are in
// passes/fusion/ (Legality.h says what may share a kernel, Grouping.h in
// which order merges are tried). Expects a canonicalised graph with static
// shapes; regions already present are left as they are.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/fusion/Grouping.h"
#include "passes/fusion/Legality.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace dlc {
#define GEN_PASS_DEF_DLCFUSE
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

/// Moves `ops` (in program order, a legal kernel of kind `kind`) into a new
/// dlc.fusion. Its operands are the values the ops read from outside, in
/// order of first use; its results the values they compute that are read
/// outside (by later kernels or the return), in program order. The region is
/// created before the group's last op; the caller restores a topological
/// order afterwards.
static FusionOp outline(ArrayRef<Operation *> ops, StringRef kind) {
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  llvm::SetVector<Value> inputs;
  SmallVector<Value> outputs;
  SmallVector<Location> locations;
  for (Operation *op : ops) {
    locations.push_back(op->getLoc());
    for (Value operand : op->getOperands())
      if (!members.contains(operand.getDefiningOp()))
        inputs.insert(operand);
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !members.contains(user);
          }))
        outputs.push_back(result);
  }

  OpBuilder builder(ops.back());
  Location loc = builder.getFusedLoc(locations);
  auto fusion = builder.create<FusionOp>(loc, ValueRange(outputs).getTypes(),
                                         inputs.getArrayRef(), kind);
  Block &block = fusion.getBody().front();
  builder.setInsertionPointToEnd(&block);
  auto yield = builder.create<YieldOp>(loc, outputs);
  for (Operation *op : ops)
    op->moveBefore(yield);
  for (auto [input, argument] : llvm::zip(inputs, block.getArguments()))
    Value(input).replaceUsesWithIf(argument, [&](OpOperand &use) {
      return fusion->isProperAncestor(use.getOwner());
    });
  for (auto [output, result] : llvm::zip(outputs, fusion.getResults()))
    output.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !fusion->isProperAncestor(use.getOwner());
    });
  return fusion;
}

namespace {

struct DlcFusePass : dlc::impl::DlcFuseBase<DlcFusePass> {
  using DlcFuseBase::DlcFuseBase;

  /// 1. Partition the graph's fusible ops into legal kernels
  ///    (fusion::formGroups): no cycles, nothing duplicated.
  /// 2. Outline each group, a lone op included, into a dlc.fusion whose
  ///    `kind` names the pattern that formed it.
  /// 3. Sort the graph's top level topologically: a region stands where its
  ///    inputs are ready, otherwise in program order.
  void runOnOperation() override {
    Block &body = getOperation().getBody().front();
    std::vector<SmallVector<Operation *>> groups = fusion::formGroups(body);
    SmallVector<StringRef> kinds;
    for (ArrayRef<Operation *> ops : groups) {
      std::optional<StringRef> kind = fusion::regionKind(ops);
      assert(kind && "formGroups returned an illegal kernel");
      kinds.push_back(*kind);
    }
    for (auto [ops, kind] : llvm::zip(groups, kinds))
      outline(ops, kind);
    if (!sortTopologically(&body)) {
      getOperation().emitError("fusion regions depend on each other in a "
                               "cycle (a bug in dlc-fuse)");
      return signalPassFailure();
    }
  }
};

} // namespace
