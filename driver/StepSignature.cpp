//===- StepSignature.cpp - a train step's arguments, as the loop feeds them ===//

#include "driver/StepSignature.h"

#include "driver/DriverSupport.h"
#include "ir/DlcDialect.h"
#include "ir/ParamSpec.h"

using namespace mlir;

namespace dlc {

static std::vector<int64_t> shapeOfType(Type type) {
  auto shape = cast<RankedTensorType>(type).getShape();
  return {shape.begin(), shape.end()};
}

ExitCode readStepSignature(MLIRContext &context, func::FuncOp func,
                           llvm::ArrayRef<Type> wholeTypes, StepSignature &s) {
  s.model = func->getAttrOfType<StringAttr>("dlc.graph").str();
  s.loss = "loss";
  func.walk([&](Operation *op) {
    if (isa<CrossEntropyOp, MseOp>(op) && s.loss == "loss")
      s.loss = op->getName().stripDialect().str();
  });
  auto cfg = func->getAttrOfType<DictionaryAttr>("dlc.train_step");
  s.optimizer.kind = cfg.getAs<StringAttr>("kind").str();
  s.optimizer.learningRate = cfg.getAs<FloatAttr>("lr").getValueAsDouble();
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto state = func.getArgAttrOfType<StringAttr>(i, "dlc.state");
    auto name = func.getArgAttrOfType<StringAttr>(i, "dlc.name");
    std::vector<int64_t> shape = shapeOfType(arg.getType());
    DType dtype = dtypeOf(cast<RankedTensorType>(arg.getType()).getElementType());
    if (state) {
      auto wholeType = cast<RankedTensorType>(wholeTypes[i]);
      size_t index = s.state.size();
      s.arguments.push_back({StepArgument::State, state.str(), shape, index});
      s.stateIndexOf[state.str()] = index;
      s.state.push_back({state.str(), dtype, shapeOfType(wholeType)});
      std::vector<std::string> split;
      if (auto local = func.getArgAttrOfType<ArrayAttr>(i, "dlc.local_sharding"))
        for (Attribute a : local)
          split.push_back(cast<StringAttr>(a).str());
      if (split.empty() && wholeType != arg.getType())
        return fail(context, kExitInternalError,
                    "state '" + state.str() + "' is split with no dlc.local_sharding");
      s.split.push_back(std::move(split));
      auto init = func.getArgAttrOfType<DictionaryAttr>(i, "dlc.init");
      auto value = initialValue(init, wholeType, state.str(), func);
      if (failed(value))
        return kExitBadInput;
      s.initial.push_back(std::move(*value));
    } else if (name && name.getValue() == "lr") {
      s.arguments.push_back({StepArgument::Lr, "lr", shape});
    } else {
      std::string n = name ? name.str() : "arg" + std::to_string(i);
      s.arguments.push_back({StepArgument::Data, n, shape});
      std::vector<int64_t> perSample(shape.begin() + (shape.empty() ? 0 : 1), shape.end());
      s.data.push_back({n, dtype, perSample});
    }
  }
  s.resultState.assign(func.getNumResults(), 0);
  for (unsigned r = 1; r < func.getNumResults(); ++r) {
    auto state = func.getResultAttrOfType<StringAttr>(r, "dlc.state");
    if (!state || !s.stateIndexOf.count(state.str()))
      return fail(context, kExitInternalError, "a train step result without its state");
    s.resultState[r] = s.stateIndexOf[state.str()];
  }
  return kExitSuccess;
}

} // namespace dlc
