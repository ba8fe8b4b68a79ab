//===- Differentiate.cpp - a loss graph to its train step -----------------===//
//
// Rewrites a function carrying `dlc.optimizer` (a loss graph: one scalar
// float result) into its train step, as docs/design/2026-11-25-training.md
// §2 specifies: forward, reverse-mode gradients (one vector-Jacobian product
// per op, DifferentiableOpInterface), clipping, and the optimizer's update.
// Parameters become state arguments, returned updated. Expects a graph
// before fusion, with static shapes.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/autodiff/Optimizers.h"
#include "passes/autodiff/TrainingGraphs.h"
#include "passes/partition/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace dlc {
#define GEN_PASS_DEF_DLCDIFFERENTIATE
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

/// Dynamic loss scaling of f16 training: PyTorch GradScaler's defaults.
static constexpr float kInitialLossScale = 65536.0f;
static constexpr int64_t kLossScaleGrowthInterval = 2000;

/// Only floating-point values carry gradients.
static bool isDifferentiable(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && isa<FloatType>(type.getElementType());
}

namespace {

/// One tensor of state: its argument, name and new value.
struct State {
  BlockArgument arg;
  std::string name;
  Value next;
};

struct DifferentiatePass
    : public dlc::impl::DlcDifferentiateBase<DifferentiatePass> {
  using DlcDifferentiateBase::DlcDifferentiateBase;
  void runOnOperation() override;

private:
  void returnGradients(func::FuncOp func, Value loss);
};

} // namespace

/// Adds a state argument at the end of `func`'s arguments.
static State addState(func::FuncOp func, Type type, StringRef name,
                      DictionaryAttr init, Location loc) {
  OpBuilder b(func.getContext());
  unsigned index = func.getNumArguments();
  auto attrs = b.getDictionaryAttr({b.getNamedAttr("dlc.state", b.getStringAttr(name)),
                                    b.getNamedAttr("dlc.init", init)});
  (void)func.insertArgument(index, type, attrs, loc);
  return State{func.getArgument(index), name.str(), Value()};
}

/// The reverse sweep: the gradient of the loss with respect to every value
/// it depends on through differentiable ops, seeded with 1 at the loss (or
/// with `seed`: the loss scale of f16 training).
static FailureOr<llvm::DenseMap<Value, Value>>
reverseSweep(VjpBuilder &b, Block &body, Value loss, Value seed = Value()) {
  llvm::DenseMap<Value, Value> grads;
  b.setLocation(loss.getLoc());
  grads[loss] = seed ? seed : b.like(loss, 1.0);
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value r : op->getResults()) {
      auto found = grads.find(r);
      resultGrads.push_back(found == grads.end() ? Value() : found->second);
      any |= found != grads.end();
    }
    if (!any)
      continue;
    auto rule = dyn_cast<DifferentiableOpInterface>(op);
    if (!rule)
      return op->emitOpError("has no derivative rule (not a dlc op)");
    b.setLocation(op->getLoc());
    Operation *last = body.getTerminator()->getPrevNode();
    SmallVector<Value> operandGrads;
    if (failed(rule.buildVjp(b, resultGrads, operandGrads)) || b.failed())
      return failure();
    for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!g || !isDifferentiable(operand))
        continue;
      auto [it, inserted] = grads.try_emplace(operand, g);
      if (!inserted)
        it->second = b.add(it->second, g);
    }
    // A pipeline stage (dlc-pipeline-stages) runs its ops' backward too.
    if (Attribute stage = op->getAttr(kStageAttr))
      for (Operation *added = last->getNextNode(); added != body.getTerminator();
           added = added->getNextNode())
        if (!added->hasAttr(kStageAttr))
          added->setAttr(kStageAttr, stage);
  }
  return grads;
}

/// The gradients-only form: the loss and d loss / d param for every float
/// parameter, in program order (zeros where the loss does not depend on it).
void DifferentiatePass::returnGradients(func::FuncOp func, Value loss) {
  Block &body = func.getBody().front();
  Operation *ret = body.getTerminator();
  OpBuilder builder(ret);
  VjpBuilder b(builder, func.getLoc());
  auto grads = reverseSweep(b, body, loss);
  if (failed(grads))
    return signalPassFailure();
  SmallVector<Value> results{loss};
  SmallVector<std::string> names{"loss"};
  func.walk([&](ParamOp p) {
    if (!isDifferentiable(p.getResult()))
      return;
    auto found = grads->find(p.getResult());
    b.setLocation(p.getLoc());
    results.push_back(found != grads->end()
                          ? found->second
                          : b.broadcastTo(b.like(p.getResult(), 0),
                                          p.getType().getShape()));
    names.push_back("grad." + p.getName().str());
  });
  builder.setInsertionPoint(ret);
  builder.create<func::ReturnOp>(ret->getLoc(), results);
  ret->erase();
  func.setFunctionType(FunctionType::get(&getContext(), func.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  SmallVector<DictionaryAttr> attrs;
  for (const std::string &name : names)
    attrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("dlc.name", builder.getStringAttr(name))}));
  func.setAllResultAttrs(attrs);
  func->removeAttr("dlc.optimizer");
}

void DifferentiatePass::runOnOperation() {
  // 1. A loss graph: `dlc.optimizer` and one scalar float result.
  func::FuncOp func = getOperation();
  auto dict = func->getAttrOfType<DictionaryAttr>("dlc.optimizer");
  if (!dict)
    return;
  auto config = OptimizerConfig::read(dict, func);
  if (failed(config))
    return signalPassFailure();
  Block &body = func.getBody().front();
  Operation *ret = body.getTerminator();
  if (ret->getNumOperands() != 1 || !isDifferentiable(ret->getOperand(0)) ||
      cast<RankedTensorType>(ret->getOperand(0).getType()).getRank() != 0) {
    func.emitError("dlc-differentiate: a loss graph returns one scalar float "
                   "(the loss)");
    return signalPassFailure();
  }
  Value loss = ret->getOperand(0);
  OpBuilder builder(ret);
  MLIRContext *context = &getContext();
  Location loc = func.getLoc();
  if (gradientsOnly)
    return returnGradients(func, loss);

  // 2. Arguments: the learning rate, then the state: every float parameter,
  // its moments, the step counter.
  unsigned lrIndex = func.getNumArguments();
  (void)func.insertArgument(
      lrIndex, RankedTensorType::get({}, builder.getF32Type()),
      builder.getDictionaryAttr(
          {builder.getNamedAttr("dlc.name", builder.getStringAttr("lr"))}),
      loc);
  Value lr = func.getArgument(lrIndex);
  SmallVector<State> params;
  for (StateArgument p : paramsToState(func))
    params.push_back({p.arg, p.name, Value()});
  auto zeros = builder.getDictionaryAttr(
      {builder.getNamedAttr("kind", builder.getStringAttr("zeros"))});
  SmallVector<std::string> momentNames = config->momentNames();
  SmallVector<SmallVector<State>> moments;
  for (const State &p : params) {
    moments.emplace_back();
    for (const std::string &m : momentNames)
      moments.back().push_back(
          addState(func, p.arg.getType(), p.name + "." + m, zeros, p.arg.getLoc()));
  }
  State step = addState(func, RankedTensorType::get({}, builder.getI64Type()),
                        "step", zeros, loc);
  // f16 training scales the loss so that small gradients survive in f16
  // (dynamic loss scaling, as PyTorch's GradScaler: 2^16 to start, halved
  // on an overflow, doubled after 2000 clean steps).
  bool lossScaling = modulePrecision(func) == "f16";
  auto scalarF32 = RankedTensorType::get({}, builder.getF32Type());
  State scale, cleanSteps;
  if (lossScaling) {
    auto initial = builder.getDictionaryAttr(
        {builder.getNamedAttr("kind", builder.getStringAttr("data")),
         builder.getNamedAttr("value", DenseElementsAttr::get(scalarF32, kInitialLossScale))});
    scale = addState(func, scalarF32, "loss_scale", initial, loc);
    cleanSteps = addState(func, RankedTensorType::get({}, builder.getI64Type()),
                          "loss_scale.clean_steps", zeros, loc);
  }

  // 3. Gradients.
  VjpBuilder b(builder, loc);
  auto grads = reverseSweep(b, body, loss,
                            lossScaling ? b.cast(scale.arg, cast<RankedTensorType>(
                                                                loss.getType())
                                                                .getElementType())
                                        : Value());
  if (failed(grads))
    return signalPassFailure();
  SmallVector<Value> paramGrads;
  for (const State &p : params) {
    auto found = grads->find(p.arg);
    paramGrads.push_back(found == grads->end() ? Value() : found->second);
  }
  // Unscaled, and checked: `finite` is false when any gradient overflowed
  // (inf or NaN times 0 is NaN, so the sum of g·0 is 0 only when all are
  // finite); the step then changes no parameter, moment or step count.
  Value finite;
  if (lossScaling) {
    b.setLocation(loc);
    Value inverse = b.div(b.like(scale.arg, 1.0), scale.arg);
    Value check = b.like(scale.arg, 0.0);
    for (Value &g : paramGrads) {
      if (!g)
        continue;
      Type element = cast<RankedTensorType>(g.getType()).getElementType();
      g = b.mul(g, b.cast(inverse, element));
      check = b.add(check, sumToF32(b, b.mul(g, b.like(g, 0.0))));
    }
    finite = b.compare(ComparePredicate::eq, check, b.like(check, 0.0));
  }

  // 4. Clipping and the update; a parameter the loss does not depend on
  // keeps its value and moments (PyTorch skips parameters without .grad).
  b.setLocation(loc);
  if (config->clipNorm > 0)
    clipByGlobalNorm(b, paramGrads, config->clipNorm);
  step.next = b.add(step.arg, b.like(step.arg, 1));
  UpdateScalars scalars = buildUpdateScalars(b, *config, lr, step.next);
  for (auto [i, p] : llvm::enumerate(params)) {
    if (!paramGrads[i]) {
      p.next = p.arg;
      for (State &m : moments[i])
        m.next = m.arg;
      continue;
    }
    b.setLocation(p.arg.getLoc());
    SmallVector<Value> current;
    for (const State &m : moments[i])
      current.push_back(m.arg);
    SmallVector<Value> next =
        buildUpdate(b, *config, scalars, p.arg, paramGrads[i], current);
    p.next = next[0];
    for (auto [m, value] : llvm::zip(moments[i], llvm::drop_begin(next)))
      m.next = value;
  }
  if (lossScaling) {
    // An overflowed step keeps everything; the scale halves. A clean step
    // counts, and the 2000th in a row doubles the scale.
    auto keepUnlessFinite = [&](State &s) { s.next = b.select(finite, s.next, s.arg); };
    for (State &p : params)
      keepUnlessFinite(p);
    for (auto &list : moments)
      for (State &m : list)
        keepUnlessFinite(m);
    keepUnlessFinite(step);
    Value clean = b.select(finite, b.add(cleanSteps.arg, b.like(cleanSteps.arg, 1)),
                           b.like(cleanSteps.arg, 0));
    Value grow = b.compare(ComparePredicate::ge, clean,
                           b.like(cleanSteps.arg, kLossScaleGrowthInterval));
    scale.next = b.select(finite,
                          b.select(grow, b.mul(scale.arg, b.like(scale.arg, 2.0)), scale.arg),
                          b.mul(scale.arg, b.like(scale.arg, 0.5)));
    cleanSteps.next = b.select(grow, b.like(cleanSteps.arg, 0), clean);
  }
  if (b.failed())
    return signalPassFailure();

  // 5. Results: the loss, then every state's new value.
  SmallVector<Value> results{loss};
  SmallVector<std::string> stateNames;
  auto addResult = [&](const State &s) {
    results.push_back(s.next);
    stateNames.push_back(s.name);
  };
  for (const State &p : params)
    addResult(p);
  for (const auto &list : moments)
    for (const State &m : list)
      addResult(m);
  addResult(step);
  if (lossScaling) {
    addResult(scale);
    addResult(cleanSteps);
  }
  builder.setInsertionPoint(ret);
  builder.create<func::ReturnOp>(ret->getLoc(), results);
  ret->erase();
  func.setFunctionType(FunctionType::get(
      context, func.getArgumentTypes(), ValueRange(results).getTypes()));
  SmallVector<DictionaryAttr> attrs{builder.getDictionaryAttr(
      {builder.getNamedAttr("dlc.name", builder.getStringAttr("loss"))})};
  for (const std::string &name : stateNames)
    attrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("dlc.state", builder.getStringAttr(name))}));
  func.setAllResultAttrs(attrs);
  func->removeAttr("dlc.optimizer");
  func->setAttr("dlc.train_step", dict);
}
