//===- State.cpp - a train step's state and where it is written -----------===//

#include "passes/analysis/State.h"

#include "ir/DlcDialect.h"
#include "passes/analysis/Liveness.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace dlc {

StringRef stateName(func::FuncOp func, unsigned index, bool result) {
  auto attr = result ? func.getResultAttrOfType<StringAttr>(index, "dlc.state")
                     : func.getArgAttrOfType<StringAttr>(index, "dlc.state");
  return attr ? attr.getValue() : StringRef();
}

bool kernelReads(Operation *kernel, Value value) {
  bool reads = false;
  kernel->walk([&](Operation *nested) {
    reads |= llvm::is_contained(nested->getOperands(), value);
  });
  return reads;
}

FailureOr<SmallVector<StateTie>> stateTies(func::FuncOp func) {
  llvm::StringMap<BlockArgument> args;
  for (BlockArgument arg : func.getArguments())
    if (StringRef name = stateName(func, arg.getArgNumber(), false); !name.empty())
      args[name] = arg;
  Block &body = func.getBody().front();
  Operation *ret = body.getTerminator();
  SmallVector<StateTie> ties;
  llvm::StringMap<unsigned> seen;
  llvm::DenseMap<Value, unsigned> writtenOnce;
  for (unsigned r = 0; r < func.getNumResults(); ++r) {
    StringRef name = stateName(func, r, true);
    if (name.empty())
      continue;
    auto found = args.find(name);
    if (found == args.end())
      return func.emitError("state result ")
             << r << " ('" << name << "') has no state argument of its name";
    if (!seen.try_emplace(name, r).second)
      return func.emitError("two results update state '") << name << "'";
    StateTie tie{r, found->second, ret->getOperand(r)};
    Operation *def = tie.value.getDefiningOp();
    if (def && def->getBlock() == &body && isKernel(def))
      tie.writer = def;
    ++writtenOnce[tie.value];
    ties.push_back(tie);
  }
  // In place: one state per value; no reader of the old value depends on
  // the writer (it must run first); and the writer reads its own state only
  // element by element (the pairs the memory planner's in-place rule
  // allows).
  for (StateTie &tie : ties) {
    if (!tie.writer || writtenOnce[tie.value] != 1)
      continue;
    llvm::DenseSet<Operation *> after{tie.writer};
    bool readAfter = false;
    for (Operation &op : llvm::make_range(std::next(tie.writer->getIterator()),
                                          body.end())) {
      bool depends = llvm::any_of(op.getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && after.contains(def);
      });
      if (!depends)
        continue;
      after.insert(&op);
      readAfter |= kernelReads(&op, tie.arg);
    }
    if (readAfter)
      continue;
    unsigned result = cast<OpResult>(tie.value).getResultNumber();
    bool readsArg = kernelReads(tie.writer, tie.arg);
    bool aligned = llvm::any_of(
        inPlaceCandidates(tie.writer), [&](std::pair<unsigned, unsigned> pair) {
          return pair.second == result &&
                 tie.writer->getOperand(pair.first) == tie.arg;
        });
    // An aligned writer must not also read the argument some other way.
    unsigned uses = llvm::count(tie.writer->getOperands(), tie.arg);
    tie.inPlace = !readsArg || (aligned && uses == 1);
  }
  return ties;
}

llvm::DenseSet<Value> inPlaceStateValues(func::FuncOp func) {
  llvm::DenseSet<Value> values;
  auto ties = stateTies(func);
  if (succeeded(ties))
    for (const StateTie &tie : *ties)
      if (tie.inPlace)
        values.insert(tie.value);
  return values;
}

} // namespace dlc
