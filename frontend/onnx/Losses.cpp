//===- Losses.cpp - ONNX NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ===//
//
// SoftmaxCrossEntropyLoss without class weights is `dlc.cross_entropy`
// (classes moved to the last axis), whose `ignore_index` and `mean` are
// ONNX's. Otherwise both pick the log-probability of each target class
// along axis 1 (a one-hot selection), weight it by the class weight (0 for
// `ignore_index`) and reduce: `mean` divides by the sum of the weights used.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

using namespace mlir;

namespace dlc::onnximport {

/// The NLL loss of log-probabilities `logp` [N, C, d...] against `target`
/// [N, d...], with optional class `weight` [C].
static Value nllLoss(NodeImporter &n, Value logp, Value target, Value weight,
                     std::optional<int64_t> ignoreIndex,
                     const std::string &reduction) {
  if (!logp || !target)
    return {};
  auto tshape = shapeOf(target);
  // Shapes first: the gathers below index one by the other.
  auto lshape = shapeOf(logp);
  bool fits = lshape.size() >= 2 && lshape.size() == tshape.size() + 1 &&
              lshape[0] == tshape[0] &&
              llvm::equal(ArrayRef<int64_t>(lshape).drop_front(2),
                          ArrayRef<int64_t>(tshape).drop_front(1));
  if (!fits) {
    n.error() << "the input " << formatShape(lshape) << " and the target "
              << formatShape(tshape) << " do not match: expected [N, C, d...] and [N, d...]";
    return {};
  }
  if (weight && !llvm::equal(shapeOf(weight), ArrayRef<int64_t>{lshape[1]})) {
    n.error() << "the weight " << formatShape(shapeOf(weight)) << " must be [C] = ["
              << lshape[1] << "]";
    return {};
  }
  Type element = cast<RankedTensorType>(logp.getType()).getElementType();
  Type index = cast<RankedTensorType>(target.getType()).getElementType();
  Value used = n.broadcastTo(n.scalar(1, n.i1()), tshape);
  if (ignoreIndex) {
    used = n.compare(ComparePredicate::ne, target, n.scalar(*ignoreIndex, index));
    target = n.create<SelectOp>({used, target, n.scalar(0, index)});
  }
  SmallVector<int64_t> withClass(tshape);
  withClass.insert(withClass.begin() + 1, 1);
  Value picked =
      n.reshape(n.gatherElements(logp, n.reshape(target, withClass), 1), tshape);
  Value w = weight ? n.create<GatherOp>({weight, target}, {n.i64("axis", 0)})
                   : n.broadcastTo(n.scalar(1, element), tshape);
  w = n.create<SelectOp>({used, w, n.scalar(0, element)});
  Value loss = n.create<NegOp>({n.create<MulOp>({picked, w})});
  if (reduction == "none")
    return loss;
  SmallVector<int64_t> all;
  for (size_t d = 0; d < tshape.size(); ++d)
    all.push_back(d);
  auto sum = [&](Value v) {
    return n.create<ReduceSumOp>({v}, {n.i64s("axes", all)});
  };
  if (reduction == "sum")
    return sum(loss);
  return n.create<DivOp>({sum(loss), sum(w)});
}

/// Reads reduction and ignore_index; nullopt on a bad reduction.
static std::optional<std::string> readReduction(NodeImporter &n,
                                                std::optional<int64_t> &ignore) {
  auto reduction = n.stringAttr("reduction", "mean");
  if (!reduction)
    return std::nullopt;
  if (*reduction != "none" && *reduction != "sum" && *reduction != "mean") {
    (void)n.unsupported("reduction", "unknown value '" + *reduction + "'");
    return std::nullopt;
  }
  if (n.hasAttr("ignore_index")) {
    auto i = n.intAttr("ignore_index", 0);
    if (!i)
      return std::nullopt;
    ignore = *i;
  }
  return reduction;
}

static LogicalResult importNll(NodeImporter &n) {
  std::optional<int64_t> ignore;
  auto reduction = readReduction(n, ignore);
  if (!reduction)
    return failure();
  Value weight = n.hasInput(2) ? n.input(2) : Value();
  if (n.hasInput(2) && !weight)
    return failure();
  return n.setOutput(
      0, nllLoss(n, n.input(0), n.input(1), weight, ignore, *reduction));
}

/// `dlc.cross_entropy` of `scores` [N, C, d...] against `labels` [N, d...].
static Value crossEntropy(NodeImporter &n, Value scores, Value labels,
                          std::optional<int64_t> ignoreIndex,
                          StringRef reduction) {
  if (!scores || !labels)
    return {};
  int64_t rank = shapeOf(scores).size();
  if (rank > 2) { // [N, d..., C]
    SmallVector<int64_t> perm{0};
    for (int64_t d = 2; d < rank; ++d)
      perm.push_back(d);
    perm.push_back(1);
    scores = n.transpose(scores, perm);
  }
  SmallVector<NamedAttribute> attrs{n.named(
      "reduction", LossReductionAttr::get(scores.getContext(),
                                          *symbolizeLossReduction(reduction)))};
  if (ignoreIndex)
    attrs.push_back(n.i64("ignore_index", *ignoreIndex));
  return n.create<CrossEntropyOp>({scores, labels}, attrs);
}

static LogicalResult importSoftmaxCrossEntropy(NodeImporter &n) {
  std::optional<int64_t> ignore;
  auto reduction = readReduction(n, ignore);
  if (!reduction)
    return failure();
  Value weight = n.hasInput(2) ? n.input(2) : Value();
  if (n.hasInput(2) && !weight)
    return failure();
  Value logp;
  if (weight || n.wantsOutput(1))
    logp = n.create<LogSoftmaxOp>({n.input(0)}, {n.i64("axis", 1)});
  Value loss = weight ? nllLoss(n, logp, n.input(1), weight, ignore, *reduction)
                      : crossEntropy(n, n.input(0), n.input(1), ignore,
                                     *reduction);
  if (failed(n.setOutput(0, loss)))
    return failure();
  if (n.wantsOutput(1))
    return n.setOutput(1, logp);
  return success();
}

void addLossOps(OpTable &t) {
  t["NegativeLogLikelihoodLoss"] = {{"ignore_index", "reduction"}, importNll};
  t["SoftmaxCrossEntropyLoss"] = {{"ignore_index", "reduction"},
                                  importSoftmaxCrossEntropy};
}

} // namespace dlc::onnximport
