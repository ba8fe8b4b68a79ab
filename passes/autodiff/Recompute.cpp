//===- Recompute.cpp - a forward value computed again for the backward ----===//

#include "passes/autodiff/Recompute.h"

#include "ir/DlcDialect.h"
#include "passes/FlopCount.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace dlc {

int recomputeTier(Operation *op) {
  if (!op || !isa<DlcDialect>(op->getDialect()) || op->getNumRegions())
    return 0;
  switch (kernelRoleOf(op)) {
  case KernelRole::Elementwise:
  case KernelRole::Layout:
    return 1;
  case KernelRole::Row:
  case KernelRole::Pooling:
  case KernelRole::DataMovement:
  case KernelRole::Loss:
    return 2;
  case KernelRole::Contraction:
  case KernelRole::Convolution:
    return 3;
  case KernelRole::Source:
  case KernelRole::Structure:
    return 0;
  }
  return 0;
}

SmallVector<OpOperand *> backwardUses(Value v, const TrainStepParts &parts) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : v.getUses())
    if (!use.getOwner()->hasTrait<mlir::OpTrait::IsTerminator>() &&
        parts.part(use.getOwner()) != StepPart::Forward)
      uses.push_back(&use);
  return uses;
}

SmallVector<Value> savedActivations(func::FuncOp func,
                                    const TrainStepParts &parts) {
  SmallVector<Value> saved;
  for (Operation &op : func.getBody().front())
    if (recomputeTier(&op) && parts.part(&op) == StepPart::Forward)
      for (Value result : op.getResults())
        if (!backwardUses(result, parts).empty())
          saved.push_back(result);
  return saved;
}

/// Whether the backward may read `v` at no cost in the arena: an argument,
/// a parameter or constant, or a forward value it reads already.
static bool isAvailable(Value v, const TrainStepParts &parts) {
  Operation *def = v.getDefiningOp();
  return !def || kernelRoleOf(def) == KernelRole::Source ||
         !backwardUses(v, parts).empty();
}

RecomputeChain recomputeChain(Value saved, int maxTier,
                              const TrainStepParts &parts) {
  RecomputeChain chain;
  llvm::SetVector<Operation *> ops;
  llvm::SetVector<Value> leaves;
  SmallVector<Operation *> worklist{saved.getDefiningOp()};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!ops.insert(op))
      continue;
    chain.tier = std::max(chain.tier, recomputeTier(op));
    chain.flops += countFlops(op).total();
    for (Value operand : op->getOperands()) {
      if (isAvailable(operand, parts))
        continue;
      Operation *def = operand.getDefiningOp();
      int tier = recomputeTier(def);
      if (tier > 0 && tier <= maxTier)
        worklist.push_back(def);
      else
        leaves.insert(operand);
    }
  }
  chain.ops.assign(ops.begin(), ops.end());
  llvm::sort(chain.ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  chain.bytesFreed = alignToArena(tensorBytes(saved.getType()));
  for (Value leaf : leaves)
    chain.bytesFreed -= alignToArena(tensorBytes(leaf.getType()));
  return chain;
}

/// A clone of `op` that an earlier recomputation made, with the operands
/// `op` has under `mapping`, or null.
static Operation *findClone(Operation *op, const IRMapping &mapping) {
  if (op->getNumOperands() == 0)
    return nullptr;
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(mapping.lookupOrDefault(operand));
  for (Operation *user : operands.front().getUsers()) {
    if (!user->hasAttr(kRecomputeAttr) || user->getName() != op->getName() ||
        user->getOperands() != ValueRange(operands) ||
        user->getResultTypes() != op->getResultTypes() ||
        user->getAttrs().size() != op->getAttrs().size() + 1)
      continue;
    if (llvm::all_of(op->getAttrs(), [&](NamedAttribute attr) {
          return user->getAttr(attr.getName()) == attr.getValue();
        }))
      return user;
  }
  return nullptr;
}

Value recompute(Value saved, const RecomputeChain &chain,
                const TrainStepParts &parts,
                SmallVectorImpl<Operation *> *clones) {
  SmallVector<OpOperand *> uses = backwardUses(saved, parts);
  if (uses.empty())
    return Value();
  Operation *first = uses.front()->getOwner();
  for (OpOperand *use : uses)
    if (use->getOwner()->isBeforeInBlock(first))
      first = use->getOwner();
  OpBuilder builder(first);
  IRMapping mapping;
  for (Operation *op : chain.ops) {
    if (Operation *clone = findClone(op, mapping)) {
      // Its operands are mapped before `first` already.
      if (first->isBeforeInBlock(clone))
        clone->moveBefore(first);
      mapping.map(op->getResults(), clone->getResults());
      continue;
    }
    Operation *clone = builder.clone(*op, mapping);
    clone->setAttr(kRecomputeAttr, builder.getUnitAttr());
    if (clones)
      clones->push_back(clone);
  }
  Value clone = mapping.lookup(saved);
  for (OpOperand *use : uses)
    use->set(clone);
  return clone;
}

} // namespace dlc
