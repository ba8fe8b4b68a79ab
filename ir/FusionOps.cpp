//===- FusionOps.cpp - dlc.fusion and dlc.yield ---------------------------===//

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace dlc;

void FusionOp::build(OpBuilder &builder, OperationState &state,
                     TypeRange resultTypes, ValueRange inputs, StringRef kind) {
  state.addOperands(inputs);
  state.addTypes(resultTypes);
  state.addAttribute(getKindAttrName(state.name), builder.getStringAttr(kind));
  Region *body = state.addRegion();
  Block *block = new Block();
  for (Value input : inputs)
    block->addArgument(input.getType(), input.getLoc());
  body->push_back(block);
}

LogicalResult FusionOp::verify() {
  Block &block = getBody().front();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError("has ") << getInputs().size() << " operands but its "
                               << "body takes " << block.getNumArguments()
                               << " arguments";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(getInputs(), block.getArguments())))
    if (std::get<0>(pair).getType() != std::get<1>(pair).getType())
      return emitOpError("operand ")
             << i << " is " << formatType(std::get<0>(pair).getType())
             << " but body argument " << i << " is "
             << formatType(std::get<1>(pair).getType());
  auto yield = cast<YieldOp>(block.getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ")
           << yield.getValues().size() << " values that differ in number or "
           << "type from its " << getNumResults() << " results";
  return success();
}

/// A kernel costs what its ops cost.
int64_t FusionOp::getFlops() {
  int64_t flops = 0;
  for (Operation &op : getBody().front())
    if (auto cost = dyn_cast<CostOpInterface>(op))
      flops += cost.getFlops();
  return flops;
}
