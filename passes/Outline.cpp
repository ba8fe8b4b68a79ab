//===- Outline.cpp - ops of a function as a function of their own ---------===//

#include "passes/Outline.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace dlc {

func::FuncOp outlineOps(OpBuilder &builder, Location loc, StringRef name, ArrayRef<Value> inputs,
                        ArrayRef<Operation *> ops, ArrayRef<Value> outputs) {
  SmallVector<Type> argTypes, resultTypes;
  for (Value v : inputs)
    argTypes.push_back(v.getType());
  for (Value v : outputs)
    resultTypes.push_back(v.getType());
  auto f = builder.create<func::FuncOp>(loc, name, builder.getFunctionType(argTypes, resultTypes));
  Block *entry = f.addEntryBlock();
  IRMapping map;
  for (auto [arg, v] : llvm::zip(entry->getArguments(), inputs))
    map.map(v, arg);
  OpBuilder inner = OpBuilder::atBlockEnd(entry);
  for (Operation *op : ops)
    inner.clone(*op, map);
  SmallVector<Value> results;
  for (Value v : outputs)
    results.push_back(map.lookup(v));
  inner.create<func::ReturnOp>(loc, results);
  for (unsigned a = 0; a < f.getNumArguments(); ++a)
    f.setArgAttr(a, "dlc.name", builder.getStringAttr("in" + std::to_string(a)));
  for (unsigned r = 0; r < f.getNumResults(); ++r)
    f.setResultAttr(r, "dlc.name", builder.getStringAttr("out" + std::to_string(r)));
  return f;
}

} // namespace dlc
