//===- Reductions.cpp - ONNX Reduce*, ArgMax/ArgMin, CumSum ---------------===//
//
// Sum, mean, max, min and product map to the dialect's reductions; the L1,
// L2, log-sum, log-sum-exp and sum-of-squares variants compose them.
// ArgMax/ArgMin pick the first (or last) index where the extreme is met,
// with iota, compare and a min (max) reduction. TopK repeats that k times,
// each pick masked out of the next. CumSum is a product with a triangular
// matrix of ones.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

#include <numeric>

using namespace mlir;

namespace dlc::onnximport {

/// The reduced axes of a Reduce* node (normalised), or nullopt with an
/// error. An empty result with `noop` set means "reduce nothing".
static std::optional<SmallVector<int64_t>> reducedAxes(NodeImporter &n,
                                                       int64_t rank,
                                                       bool &noop) {
  auto noopAttr = n.intAttr("noop_with_empty_axes", 0);
  if (!noopAttr)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> axes;
  // ReduceSum takes its axes as an input from opset 13, the others from 18.
  bool axesInput = n.opset() >= 18 ||
                   (n.opType() == "ReduceSum" && n.opset() >= 13);
  if (axesInput)
    axes = n.hasInput(1) ? n.intsInput(1, "axes")
                         : std::optional<SmallVector<int64_t>>(
                               SmallVector<int64_t>{});
  else
    axes = n.intsAttr("axes", {});
  if (!axes)
    return std::nullopt;
  noop = axes->empty() && *noopAttr;
  if (axes->empty() && !noop) {
    axes->resize(rank);
    std::iota(axes->begin(), axes->end(), 0);
  }
  for (int64_t &a : *axes) {
    auto axis = normalizeAxisOrError(n, a, rank, "axis");
    if (!axis)
      return std::nullopt;
    a = *axis;
  }
  return axes;
}

template <typename OpTy>
static Value reduce(NodeImporter &n, Value x, ArrayRef<int64_t> axes,
                    bool keepdims) {
  return n.create<OpTy>({x}, {n.i64s("axes", axes),
                              n.named("keepdims", n.b.getBoolAttr(keepdims))});
}

static LogicalResult importReduce(NodeImporter &n) {
  Value x = n.input(0);
  auto keep = n.intAttr("keepdims", 1);
  if (!x || !keep)
    return failure();
  bool keepdims = *keep != 0, noop = false;
  auto axes = reducedAxes(n, shapeOf(x).size(), noop);
  if (!axes)
    return failure();
  if (noop)
    return n.setOutput(0, x);
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  auto scalar = [&](double v) { return n.scalar(v, element); };
  StringRef op = n.opType();
  Value y;
  if (op == "ReduceSum")
    y = reduce<ReduceSumOp>(n, x, *axes, keepdims);
  else if (op == "ReduceMean")
    y = reduce<ReduceMeanOp>(n, x, *axes, keepdims);
  else if (op == "ReduceMax")
    y = reduce<ReduceMaxOp>(n, x, *axes, keepdims);
  else if (op == "ReduceMin")
    y = reduce<ReduceMinOp>(n, x, *axes, keepdims);
  else if (op == "ReduceProd")
    y = reduce<ReduceProdOp>(n, x, *axes, keepdims);
  else if (op == "ReduceL1")
    y = reduce<ReduceSumOp>(n, n.create<AbsOp>({x}), *axes, keepdims);
  else if (op == "ReduceL2")
    y = n.create<SqrtOp>(
        {reduce<ReduceSumOp>(n, n.create<MulOp>({x, x}), *axes, keepdims)});
  else if (op == "ReduceSumSquare")
    y = reduce<ReduceSumOp>(n, n.create<MulOp>({x, x}), *axes, keepdims);
  else if (op == "ReduceLogSum")
    y = n.create<LogOp>({reduce<ReduceSumOp>(n, x, *axes, keepdims)});
  else if (op == "ReduceLogSumExp") {
    // max + log(sum(exp(x - max))), with the max kept finite.
    Value m = reduce<ReduceMaxOp>(n, x, *axes, true);
    Value finite = n.create<SelectOp>(
        {n.compare(ComparePredicate::lt, n.create<AbsOp>({m}),
                   scalar(INFINITY)),
         m, scalar(0)});
    Value s = reduce<ReduceSumOp>(
        n, n.create<ExpOp>({n.create<SubOp>({x, finite})}), *axes, true);
    y = n.create<AddOp>({n.create<LogOp>({s}), finite});
    if (!keepdims && y) {
      SmallVector<int64_t> shape;
      for (auto [d, size] : llvm::enumerate(shapeOf(y)))
        if (!llvm::is_contained(*axes, static_cast<int64_t>(d)))
          shape.push_back(size);
      y = n.reshape(y, shape);
    }
  }
  return n.setOutput(0, y);
}

static LogicalResult importArgExtreme(NodeImporter &n, bool isMax) {
  Value x = n.input(0);
  auto axisAttr = n.intAttr("axis", 0), keep = n.intAttr("keepdims", 1);
  auto last = n.intAttr("select_last_index", 0);
  if (!x || !axisAttr || !keep || !last)
    return failure();
  auto shape = shapeOf(x);
  auto axis = normalizeAxisOrError(n, *axisAttr, shape.size());
  if (!axis)
    return failure();
  Value extreme = isMax ? reduce<ReduceMaxOp>(n, x, {*axis}, true)
                        : reduce<ReduceMinOp>(n, x, {*axis}, true);
  Value hit = n.compare(ComparePredicate::eq, x, extreme);
  Value index = n.iota(shape, *axis);
  Value y;
  if (*last)
    y = reduce<ReduceMaxOp>(
        n, n.create<SelectOp>({hit, index, n.scalar(-1, n.i64())}), {*axis},
        *keep != 0);
  else
    y = reduce<ReduceMinOp>(
        n, n.create<SelectOp>({hit, index, n.scalar(shape[*axis], n.i64())}),
        {*axis}, *keep != 0);
  return n.setOutput(0, y);
}

/// TopK: k rounds of "the extreme among the elements not yet taken, at its
/// first index", so ties go to the lower index as ONNX asks. O(k n): meant
/// for the small k of beam search and top-k sampling.
static LogicalResult importTopK(NodeImporter &n) {
  Value x = n.input(0);
  auto axisAttr = n.intAttr("axis", -1), largest = n.intAttr("largest", 1);
  auto sortedAttr = n.intAttr("sorted", 1);
  if (!x || !axisAttr || !largest || !sortedAttr)
    return failure();
  int64_t k;
  if (n.opset() < 10) {
    auto kAttr = n.intAttr("k", 0);
    if (!kAttr)
      return failure();
    k = *kAttr;
  } else {
    auto kValue = n.intsInput(1, "K");
    if (!kValue)
      return failure();
    if (kValue->size() != 1)
      return n.error() << "K must hold one value";
    k = (*kValue)[0];
  }
  auto shape = shapeOf(x);
  auto axis = normalizeAxisOrError(n, *axisAttr, shape.size());
  if (!axis)
    return failure();
  int64_t size = shape[*axis];
  if (k < 0 || k > size)
    return n.error() << "K (" << k << ") must be in [0, " << size << "]";
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  double worst = isa<FloatType>(element) ? INFINITY
                 : element.isInteger(64) ? double(INT64_MAX)
                                         : double(INT32_MAX);
  if (*largest)
    worst = -worst;
  Value index = n.iota(shape, *axis);
  Value taken = n.broadcastTo(n.scalar(0, n.i1()), shape);
  SmallVector<Value> values, indices;
  for (int64_t r = 0; r < k; ++r) {
    Value open = n.create<SelectOp>({taken, n.scalar(worst, element), x});
    Value best = *largest ? reduce<ReduceMaxOp>(n, open, {*axis}, true)
                          : reduce<ReduceMinOp>(n, open, {*axis}, true);
    Value hit = n.create<SelectOp>(
        {taken, n.scalar(0, n.i1()), n.compare(ComparePredicate::eq, x, best)});
    Value at = reduce<ReduceMinOp>(
        n, n.create<SelectOp>({hit, index, n.scalar(size, n.i64())}), {*axis},
        true);
    taken = n.create<SelectOp>(
        {n.compare(ComparePredicate::eq, index, at), n.scalar(1, n.i1()), taken});
    values.push_back(best);
    indices.push_back(at);
    if (!taken)
      return failure();
  }
  auto join = [&](SmallVector<Value> &parts, Type type) -> Value {
    if (parts.size() == 1)
      return parts[0];
    if (!parts.empty())
      return n.create<ConcatOp>(parts, {n.i64("axis", *axis)});
    SmallVector<int64_t> empty(shape);
    empty[*axis] = 0;
    return n.constant(Constant::empty(type, {empty.begin(), empty.end()}));
  };
  if (failed(n.setOutput(0, join(values, element))))
    return failure();
  return n.setOutput(1, join(indices, n.i64()));
}

static LogicalResult importCumSum(NodeImporter &n) {
  auto exclusive = n.intAttr("exclusive", 0), reverse = n.intAttr("reverse", 0);
  Value x = n.input(0);
  auto axisValue = n.intsInput(1, "axis");
  if (!exclusive || !reverse || !x || !axisValue)
    return failure();
  auto shape = shapeOf(x);
  int64_t rank = shape.size();
  if (axisValue->size() != 1)
    return n.error() << "axis must hold one value";
  auto axis = normalizeAxisOrError(n, (*axisValue)[0], rank);
  if (!axis)
    return failure();
  // Move the axis last and flatten the rest: [rows, D] @ T[D, D].
  SmallVector<int64_t> perm, moved;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      perm.push_back(d);
  perm.push_back(*axis);
  int64_t size = shape[*axis], rows = 1;
  for (int64_t d : perm)
    moved.push_back(shape[d]);
  for (int64_t d = 0; d + 1 < rank; ++d)
    rows *= moved[d];
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  Constant tri = Constant::empty(element, {size, size});
  for (int64_t j = 0; j < size; ++j)
    for (int64_t i = 0; i < size; ++i) {
      bool take = *reverse ? (*exclusive ? j > i : j >= i)
                           : (*exclusive ? j < i : j <= i);
      tri.pushInt(take);
    }
  Value flat = n.reshape(n.transpose(x, perm), {rows, size});
  Value y = n.create<MatmulOp>({flat, n.constant(tri)});
  y = n.reshape(y, moved);
  SmallVector<int64_t> inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  return n.setOutput(0, y ? n.transpose(y, inverse) : Value());
}

void addReductionOps(OpTable &t) {
  for (const char *op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                         "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
                         "ReduceLogSumExp", "ReduceSumSquare"})
    t[op] = {{"axes", "keepdims", "noop_with_empty_axes"}, importReduce};
  t["ArgMax"] = {{"axis", "keepdims", "select_last_index"},
                 [](NodeImporter &n) { return importArgExtreme(n, true); }};
  t["ArgMin"] = {{"axis", "keepdims", "select_last_index"},
                 [](NodeImporter &n) { return importArgExtreme(n, false); }};
  t["CumSum"] = {{"exclusive", "reverse"}, importCumSum};
  t["TopK"] = {{"axis", "k", "largest", "sorted"}, importTopK};
}

} // namespace dlc::onnximport
