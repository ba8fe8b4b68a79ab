//===- TrainingGraphs.cpp - the functions training compiles ---------------===//

#include "passes/autodiff/TrainingGraphs.h"

#include "ir/Vjp.h"

using namespace mlir;

namespace dlc {

SmallVector<StateArgument> paramsToState(func::FuncOp func) {
  SmallVector<ParamOp> params;
  func.walk([&](ParamOp p) {
    if (isa<FloatType>(p.getType().getElementType()))
      params.push_back(p);
  });
  OpBuilder b(func.getContext());
  SmallVector<StateArgument> state;
  for (ParamOp p : params) {
    unsigned index = func.getNumArguments();
    auto attrs = b.getDictionaryAttr(
        {b.getNamedAttr("dlc.state", p.getNameAttr()),
         b.getNamedAttr("dlc.init", p.getInit())});
    (void)func.insertArgument(index, p.getType(), attrs, p.getLoc());
    BlockArgument arg = func.getArgument(index);
    p.getResult().replaceAllUsesWith(arg);
    state.push_back({arg, p.getName().str()});
    p.erase();
  }
  return state;
}

/// The number of examples whose label's logit is the largest of its row
/// (ties count as correct), as an f32 scalar; an example whose label is the
/// loss's ignore_index is never correct.
static Value correctCount(VjpBuilder &b, CrossEntropyOp ce) {
  Value logits = ce.getLogits(), labels = ce.getLabels();
  ArrayRef<int64_t> full = shapeOfValue(logits);
  int64_t last = full.size() - 1;
  Type labelType = cast<RankedTensorType>(labels.getType()).getElementType();
  SmallVector<int64_t> kept(shapeOfValue(labels));
  kept.push_back(1);
  Value isLabel = b.compare(ComparePredicate::eq, b.iota(full, last, labelType),
                            b.broadcastTo(b.reshape(labels, kept), full));
  Value picked = b.reduceSum(b.select(isLabel, logits, b.like(logits, 0)), {last},
                             false);
  Value best = b.create<ReduceMaxOp>(
      {logits}, {b.builder().getNamedAttr(
                     "axes", b.builder().getDenseI64ArrayAttr({last}))});
  Value zero = b.scalar(0, b.builder().getF32Type());
  Value hit = b.select(b.compare(ComparePredicate::ge, picked, best),
                       b.scalar(1, b.builder().getF32Type()), zero);
  // (ODS hands I64Attr out as uint64_t.)
  double ignored = double(static_cast<int64_t>(ce.getIgnoreIndex()));
  hit = b.select(b.compare(ComparePredicate::ne, labels, b.like(labels, ignored)),
                 hit, zero);
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < (int64_t)shapeOfValue(hit).size(); ++d)
    all.push_back(d);
  return b.reduceSum(hit, all, false);
}

/// The number of labels that are not the loss's ignore_index, as an f32
/// scalar: the predictions accuracy is counted over.
static Value labelledCount(VjpBuilder &b, CrossEntropyOp ce) {
  Value labels = ce.getLabels();
  Type f32 = b.builder().getF32Type();
  double ignored = double(static_cast<int64_t>(ce.getIgnoreIndex()));
  Value counted = b.select(b.compare(ComparePredicate::ne, labels, b.like(labels, ignored)),
                           b.scalar(1, f32), b.scalar(0, f32));
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < (int64_t)shapeOfValue(counted).size(); ++d)
    all.push_back(d);
  return b.reduceSum(counted, all, false);
}

func::FuncOp buildEvalGraph(func::FuncOp loss) {
  OpBuilder builder(loss);
  builder.setInsertionPointAfter(loss);
  auto eval = cast<func::FuncOp>(builder.clone(*loss));
  std::string graph = loss.getSymName().str();
  if (auto name = loss->getAttrOfType<StringAttr>("dlc.graph"))
    graph = name.str();
  eval.setSymName(graph + "_eval");
  eval->removeAttr("dlc.optimizer");
  // The loop copies the train step's parameters into the evaluator before
  // each evaluation (driver/train's Evaluator::loadParameters), so the
  // evaluator's own initial values are never read: zeros, rather than
  // drawing every parameter again when its session is created.
  for (const StateArgument &s : paramsToState(eval))
    eval.removeArgAttr(s.arg.getArgNumber(), "dlc.init");
  Operation *ret = eval.getBody().front().getTerminator();
  auto ce = ret->getOperand(0).getDefiningOp<CrossEntropyOp>();
  if (!ce || ce.getReduction() == LossReduction::none)
    return eval;
  builder.setInsertionPoint(ret);
  VjpBuilder b(builder, ce.getLoc());
  SmallVector<Value> results{ret->getOperand(0), correctCount(b, ce),
                             labelledCount(b, ce)};
  builder.create<func::ReturnOp>(ret->getLoc(), results);
  ret->erase();
  eval.setFunctionType(FunctionType::get(eval.getContext(),
                                         eval.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  SmallVector<DictionaryAttr> names;
  for (StringRef name : {"loss", "correct", "labelled"})
    names.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("dlc.name", builder.getStringAttr(name))}));
  eval.setAllResultAttrs(names);
  return eval;
}

} // namespace dlc
