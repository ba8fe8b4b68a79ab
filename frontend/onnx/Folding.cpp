//===- Folding.cpp - nodes on known values, evaluated by the oracle -------===//
//
// A node whose inputs are all known at import time (constants, folded shape
// arithmetic, small integer initializers) is imported as ops like any other;
// then those ops are evaluated by the oracle (oracle/Interpreter.h, the same
// kernels every backend is tested against) and the node's outputs become
// constants, so that the Shape -> Gather -> ... -> Reshape chains exporters
// write fold however they compute (Mod, Where, Cast, Div, ...). Ops the
// oracle cannot evaluate, and results larger than the fold limit, stay ops.
// Data movement on known values (Gather, Concat, Slice, Reshape, ...) folds
// in its op importer, exactly on int64 (the oracle holds doubles, exact to
// 2^53, and shapes carry INT64_MAX as "to the end").
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

#include "ir/ParamSpec.h"
#include "oracle/Interpreter.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace dlc::onnximport {

/// Largest result that folds on the host; anything bigger is built as ops.
constexpr int64_t kFoldLimit = 4096;

bool inputsKnown(NodeImporter &n) {
  if (n.numInputs() == 0)
    return false;
  for (size_t i = 0; i < n.numInputs(); ++i)
    if (n.hasInput(i) && !n.knownAtImport(i))
      return false;
  return true;
}

void foldWithOracle(NodeImporter &n, Operation *lastBefore) {
  Block *block = n.b.getInsertionBlock();
  if (!block)
    return;
  auto begin = lastBefore ? std::next(Block::iterator(lastBefore))
                          : block->begin();
  SmallVector<Operation *> built;
  for (Operation &op : llvm::make_range(begin, block->end()))
    built.push_back(&op);
  if (built.empty())
    return;

  // 1. Evaluate the node's ops in order; an operand built before the node
  //    must be a constant.
  llvm::DenseMap<Value, oracle::Tensor> values;
  ParamStore params;
  std::string message;
  CaptureDiagnostic capture(n.graph.context, message);
  auto evaluate = [&](Operation *op) -> bool {
    if (op->getNumResults() != 1 || op->getNumRegions() != 0)
      return false;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() > kFoldLimit)
      return false;
    std::vector<oracle::Tensor> operands;
    for (Value v : op->getOperands()) {
      auto found = values.find(v);
      if (found == values.end())
        return false;
      operands.push_back(found->second);
    }
    auto result = oracle::evaluateOp(op, operands, params);
    if (failed(result))
      return false;
    values[op->getResult(0)] = std::move(*result);
    return true;
  };
  for (Operation *op : built) {
    for (Value v : op->getOperands()) {
      if (values.count(v))
        continue;
      Operation *def = v.getDefiningOp();
      if (!def || !isa<ConstantOp>(def) || !evaluate(def))
        return;
    }
    if (!evaluate(op))
      return;
  }

  // 2. The outputs become constants (the IR values are dropped, so that a
  //    later use builds a constant op).
  for (const std::string &output : n.node.output()) {
    auto entry = n.graph.tensors.find(output);
    if (output.empty() || entry == n.graph.tensors.end() ||
        !entry->second.value)
      continue;
    auto found = values.find(entry->second.value);
    if (found == values.end())
      continue;
    auto type = cast<RankedTensorType>(entry->second.value.getType());
    Constant c = Constant::empty(type.getElementType(), found->second.shape);
    for (double v : found->second.data)
      c.push(v);
    entry->second.constant = std::move(c);
    entry->second.value = Value();
  }

  // 3. Erase what the node built that nothing uses any more (an operand it
  //    materialised for an input tensor stays: the tensor refers to it).
  llvm::DenseSet<Value> held;
  for (auto &[name, entry] : n.graph.tensors)
    if (entry.value)
      held.insert(entry.value);
  for (Operation *op : llvm::reverse(built))
    if (op->use_empty() &&
        llvm::none_of(op->getResults(),
                      [&](Value r) { return held.contains(r); }))
      op->erase();
}

} // namespace dlc::onnximport
