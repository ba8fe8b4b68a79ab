//===- TrainStep.cpp - forward, backward and update of a train step -------===//

#include "passes/analysis/TrainStep.h"

#include "ir/DlcDialect.h"
#include "passes/FlopCount.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace dlc {

bool isTrainStep(func::FuncOp func) {
  return func->hasAttr("dlc.train_step");
}

/// The ops that compute from `v`, looking through fusion regions (into one
/// through its operands, out of one through its yield); not the return.
static SmallVector<Operation *> readersOf(Value v) {
  SmallVector<Operation *> readers;
  SmallVector<Value> worklist{v};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto fusion = dyn_cast<FusionOp>(user))
        worklist.push_back(
            fusion.getBody().front().getArgument(use.getOperandNumber()));
      else if (isa<YieldOp>(user))
        worklist.push_back(user->getParentOp()->getResult(use.getOperandNumber()));
      else if (!user->hasTrait<mlir::OpTrait::IsTerminator>())
        readers.push_back(user);
    }
  }
  return readers;
}

/// What computes `v`, looking through fusion regions: an op, or the
/// function argument it is.
static PointerUnion<Operation *, BlockArgument> sourceOf(Value v) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto fusion = dyn_cast<FusionOp>(arg.getOwner()->getParentOp());
      if (!fusion)
        return arg;
      v = fusion->getOperand(arg.getArgNumber());
      continue;
    }
    auto fusion = dyn_cast<FusionOp>(v.getDefiningOp());
    if (!fusion)
      return v.getDefiningOp();
    v = fusion.getBody().front().getTerminator()->getOperand(
        cast<OpResult>(v).getResultNumber());
  }
}

TrainStepParts::TrainStepParts(func::FuncOp func) {
  if (func.isExternal())
    return;
  Block &body = func.getBody().front();
  if (!isTrainStep(func)) {
    func.walk([&](Operation *op) {
      if (op != func)
        forward.insert(op);
    });
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      forwardArguments.insert(i);
    return;
  }
  Operation *ret = body.getTerminator();
  if (ret->getNumOperands() == 0)
    return;

  // 1. Forward: what the loss is computed from.
  SmallVector<Value> values{ret->getOperand(0)};
  while (!values.empty()) {
    auto source = sourceOf(values.pop_back_val());
    if (auto arg = dyn_cast<BlockArgument>(source))
      forwardArguments.insert(arg.getArgNumber());
    else if (auto *op = cast<Operation *>(source); forward.insert(op).second)
      llvm::append_range(values, op->getOperands());
  }

  // 2. Update: what is computed from the learning rate or optimizer state.
  SmallVector<Operation *> ops;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto name = func.getArgAttrOfType<StringAttr>(i, "dlc.name");
    bool lr = name && name.getValue() == "lr";
    bool optimizerState =
        func.getArgAttr(i, "dlc.state") && !forwardArguments.contains(i);
    if (lr || optimizerState)
      llvm::append_range(ops, readersOf(arg));
  }
  while (!ops.empty()) {
    Operation *op = ops.pop_back_val();
    if (forward.contains(op) || !update.insert(op).second)
      continue;
    for (Value result : op->getResults())
      llvm::append_range(ops, readersOf(result));
  }

  // 3. ... and the element-wise ops that only prepare a gradient for it
  // (Adam's g² and (1 - β₁)·g, weight decay): read by update ops alone,
  // reading no activation (a forward op's result or a data input).
  // Latest first, so that a chain joins in one sweep.
  SmallVector<Operation *> all;
  func.walk([&](Operation *op) {
    if (kernelRoleOf(op) == KernelRole::Elementwise && op->getNumResults())
      all.push_back(op);
  });
  for (bool grew = true; grew;) {
    grew = false;
    for (Operation *op : llvm::reverse(all)) {
      if (forward.contains(op) || update.contains(op))
        continue;
      bool readsForward = llvm::any_of(op->getOperands(), [&](Value v) {
        auto source = sourceOf(v);
        if (auto *def = dyn_cast<Operation *>(source))
          return forward.contains(def) &&
                 kernelRoleOf(def) != KernelRole::Source;
        unsigned i = cast<BlockArgument>(source).getArgNumber();
        return forwardArguments.contains(i) && !func.getArgAttr(i, "dlc.state");
      });
      SmallVector<Operation *> readers;
      for (Value result : op->getResults())
        llvm::append_range(readers, readersOf(result));
      if (readsForward || readers.empty() ||
          !llvm::all_of(readers, [&](Operation *r) { return update.contains(r); }))
        continue;
      update.insert(op);
      grew = true;
    }
  }
}

StepPart TrainStepParts::part(Operation *op) const {
  if (forward.contains(op))
    return StepPart::Forward;
  return update.contains(op) ? StepPart::Update : StepPart::Backward;
}

StepPart TrainStepParts::phase(Operation *kernel) const {
  if (!isa<FusionOp>(kernel))
    return part(kernel);
  StepPart phase = StepPart::Backward;
  for (Operation &op : cast<FusionOp>(kernel).getBody().front()) {
    StepPart p = part(&op);
    if (p == StepPart::Forward)
      return p;
    if (p == StepPart::Update)
      phase = p;
  }
  return phase;
}

BufferRole TrainStepParts::role(const BufferLiveness &liveness,
                                unsigned index) const {
  Value value = liveness.buffers[index].value;
  Operation *kernel = value.getDefiningOp();
  Block *block = kernel->getBlock();
  Operation *ret = block->getTerminator();
  auto func = cast<func::FuncOp>(block->getParentOp());
  for (OpOperand &use : value.getUses())
    if (use.getOwner() == ret &&
        func.getResultAttr(use.getOperandNumber(), "dlc.state"))
      return BufferRole::NewState;
  switch (phase(kernel)) {
  case StepPart::Backward:
    return BufferRole::Gradient;
  case StepPart::Update:
    return BufferRole::Temporary;
  case StepPart::Forward:
    break;
  }
  for (Operation *user : value.getUsers()) {
    Operation *reader = block->findAncestorOpInBlock(*user);
    if (reader && isKernel(reader) && phase(reader) != StepPart::Forward)
      return BufferRole::Saved;
  }
  return BufferRole::Temporary;
}

PeakBreakdown breakDownStep(const BufferLiveness &liveness,
                            const TrainStepParts &parts, int64_t step) {
  PeakBreakdown breakdown;
  for (const Allocation &a : liveness.allocations) {
    if (a.first > step || a.last < step || a.size == 0)
      continue;
    // The buffers of a chain follow one another; the last one written by
    // `step` holds the allocation there.
    unsigned holder = a.buffers.front();
    for (unsigned b : a.buffers)
      if (liveness.buffers[b].first <= step)
        holder = b;
    unsigned role = unsigned(parts.role(liveness, holder));
    breakdown.bytes[role] += a.size;
    ++breakdown.buffers[role];
  }
  return breakdown;
}

StepFlops countStepFlops(func::FuncOp func, const TrainStepParts &parts) {
  StepFlops flops;
  func.walk([&](Operation *op) {
    if (isa<FusionOp>(op) || op == func.getOperation())
      return;
    int64_t n = countFlops(op).total();
    switch (parts.part(op)) {
    case StepPart::Forward:
      flops.forward += n;
      break;
    case StepPart::Backward:
      flops.backward += n;
      break;
    case StepPart::Update:
      flops.update += n;
      break;
    }
    if (op->hasAttr(kRecomputeAttr))
      flops.recomputed += n;
  });
  return flops;
}

} // namespace dlc
