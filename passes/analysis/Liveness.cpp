//===- Liveness.cpp - arena buffers and their live ranges -----------------===//

#include "passes/analysis/Liveness.h"
#include "passes/analysis/State.h"

#include "ir/DlcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cassert>
#include <optional>

using namespace mlir;

namespace dlc {

bool isKernel(Operation *op) {
  return !op->hasTrait<mlir::OpTrait::IsTerminator>() &&
         kernelRoleOf(op) != KernelRole::Source;
}

SmallVector<Operation *> kernelsOf(func::FuncOp func) {
  SmallVector<Operation *> kernels;
  for (Operation &op : func.getBody().front())
    if (isKernel(&op))
      kernels.push_back(&op);
  return kernels;
}

LogicalResult checkStaticResults(func::FuncOp func) {
  for (Operation *kernel : kernelsOf(func))
    for (Type type : kernel->getResultTypes()) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || !tensor.hasStaticShape())
        return kernel->emitOpError("has a result of type ")
               << type << ": memory planning needs statically shaped tensors";
    }
  return success();
}

static int64_t numElements(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

/// The values of `body` computed from `args` (which have `n` elements each)
/// by element-aligned ops alone (Dlc_ElementAligned), `args` included; none when one of them is
/// read by an op that is not element-wise or whose result has another
/// element count. Then element i of each value is computed from element i
/// of the arguments and nothing else of them.
static std::optional<llvm::DenseSet<Value>>
elementwiseClosure(Block &body, ArrayRef<Value> args, int64_t n) {
  llvm::DenseSet<Value> closure(args.begin(), args.end());
  for (Operation &op : body.without_terminator()) {
    bool reads = false;
    op.walk([&](Operation *nested) {
      reads |= llvm::any_of(nested->getOperands(),
                            [&](Value v) { return closure.contains(v); });
    });
    if (!reads)
      continue;
    if (!isElementAligned(&op))
      return std::nullopt;
    for (Value result : op.getResults()) {
      if (numElements(result) != n)
        return std::nullopt;
      closure.insert(result);
    }
  }
  return closure;
}

SmallVector<std::pair<unsigned, unsigned>>
inPlaceCandidates(Operation *kernel) {
  SmallVector<std::pair<unsigned, unsigned>> pairs;
  auto fusion = dyn_cast<FusionOp>(kernel);
  if (!fusion && !isElementAligned(kernel))
    return pairs;
  for (OpOperand &operand : kernel->getOpOperands()) {
    Value value = operand.get();
    int64_t n = numElements(value);
    std::optional<llvm::DenseSet<Value>> closure;
    if (fusion) {
      // Every argument bound to this value, should it be passed twice.
      Block &body = fusion.getBody().front();
      SmallVector<Value> args;
      for (OpOperand &other : kernel->getOpOperands())
        if (other.get() == value)
          args.push_back(body.getArgument(other.getOperandNumber()));
      closure = elementwiseClosure(body, args, n);
      if (!closure)
        continue;
    }
    for (OpResult result : kernel->getResults()) {
      if (numElements(result) != n ||
          tensorBytes(result.getType()) != tensorBytes(value.getType()))
        continue;
      if (fusion && !closure->contains(fusion.getBody().front().getTerminator()
                                           ->getOperand(result.getResultNumber())))
        continue;
      pairs.push_back({operand.getOperandNumber(), result.getResultNumber()});
    }
  }
  return pairs;
}

BufferLiveness analyzeBuffers(ArrayRef<Operation *> kernels) {
  BufferLiveness liveness;
  liveness.kernels.assign(kernels.begin(), kernels.end());
  if (kernels.empty())
    return liveness;
  Block *block = kernels.front()->getBlock();
  llvm::DenseMap<Operation *, int64_t> stepOf;
  for (auto [step, kernel] : llvm::enumerate(kernels))
    stepOf[kernel] = step;
  int64_t lastStep = kernels.size() - 1;
  // New state written straight into its buffer takes no arena space.
  llvm::DenseSet<Value> inState;
  if (auto func = kernels.front()->getParentOfType<func::FuncOp>())
    inState = inPlaceStateValues(func);
  for (auto [step, kernel] : llvm::enumerate(kernels)) {
    for (OpResult result : kernel->getResults()) {
      Buffer buffer;
      buffer.value = result;
      buffer.bytes = inState.contains(result) ? 0 : tensorBytes(result.getType());
      buffer.size = alignToArena(buffer.bytes);
      buffer.first = buffer.last = step;
      for (Operation *user : result.getUsers()) {
        Operation *top = block->findAncestorOpInBlock(*user);
        if (!top)
          continue;
        if (top->hasTrait<mlir::OpTrait::IsTerminator>()) {
          buffer.isOutput = true;
          continue;
        }
        auto it = stepOf.find(top);
        assert((it == stepOf.end() || it->second >= int64_t(step)) &&
               "kernels are not in a topological order");
        if (it != stepOf.end())
          buffer.last = std::max(buffer.last, it->second);
      }
      if (buffer.isOutput)
        buffer.last = lastStep;
      liveness.bufferOf[result] = liveness.buffers.size();
      liveness.naiveBytes += buffer.size;
      liveness.buffers.push_back(buffer);
    }
  }
  groupAllocations(liveness, {});
  return liveness;
}

SmallVector<std::pair<unsigned, unsigned>>
chooseInPlace(const BufferLiveness &liveness) {
  SmallVector<std::pair<unsigned, unsigned>> pairs;
  std::vector<bool> donated(liveness.buffers.size()),
      received(liveness.buffers.size());
  for (auto [step, kernel] : llvm::enumerate(liveness.kernels)) {
    for (auto [operand, result] : inPlaceCandidates(kernel)) {
      int donor = liveness.lookup(kernel->getOperand(operand));
      if (donor < 0)
        continue;
      unsigned taker = liveness.bufferOf.lookup(kernel->getResult(result));
      const Buffer &d = liveness.buffers[donor];
      // A taker of no bytes lives outside the arena (new state written in place).
      if (donated[donor] || received[taker] || d.isOutput ||
          d.last != int64_t(step) || liveness.buffers[taker].bytes == 0)
        continue;
      donated[donor] = received[taker] = true;
      pairs.push_back({unsigned(donor), taker});
    }
  }
  return pairs;
}

void groupAllocations(BufferLiveness &liveness,
                      ArrayRef<std::pair<unsigned, unsigned>> inPlace) {
  for (Buffer &buffer : liveness.buffers)
    buffer.donor = -1;
  for (auto [donor, taker] : inPlace) {
    assert(donor < taker && "a buffer reuses one defined after it");
    liveness.buffers[taker].donor = donor;
  }
  // Buffers are numbered in step order, so a donor's allocation exists
  // before its taker joins it.
  liveness.allocations.clear();
  for (auto [index, buffer] : llvm::enumerate(liveness.buffers)) {
    if (buffer.donor >= 0) {
      buffer.allocation = liveness.buffers[buffer.donor].allocation;
      Allocation &a = liveness.allocations[buffer.allocation];
      a.size = std::max(a.size, buffer.size);
      a.first = std::min(a.first, buffer.first);
      a.last = std::max(a.last, buffer.last);
      a.buffers.push_back(index);
      continue;
    }
    buffer.allocation = liveness.allocations.size();
    Allocation a;
    a.size = buffer.size;
    a.first = buffer.first;
    a.last = buffer.last;
    a.buffers.push_back(index);
    liveness.allocations.push_back(a);
  }
  std::vector<int64_t> delta(liveness.kernels.size() + 1, 0);
  for (const Allocation &a : liveness.allocations) {
    delta[a.first] += a.size;
    delta[a.last + 1] -= a.size;
  }
  liveness.peakBytes = liveness.peakStep = 0;
  int64_t live = 0;
  for (size_t step = 0; step < liveness.kernels.size(); ++step) {
    live += delta[step];
    if (live > liveness.peakBytes) {
      liveness.peakBytes = live;
      liveness.peakStep = step;
    }
  }
}

} // namespace dlc
