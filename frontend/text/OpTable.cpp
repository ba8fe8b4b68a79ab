//===- OpTable.cpp - the op vocabulary of the .dlg format -----------------===//
//
// Every op of the dialect that a .dlg file may call is in the vocabulary,
// built from its ODS (OpVocabulary.cpp): positional operands, keywords named
// as the op's attributes. This file adds what the surface syntax has beyond
// that (compare ops by predicate, Python-style slices, -1 in reshape,
// default axes, convolution sugar, ...), as hand-written entries that take
// precedence over the generated ones. Shape errors come from the ops' own
// inference; these builders check only what the sugar adds.
//
//===----------------------------------------------------------------------===//

#include "frontend/text/GraphBuilder.h"
#include "frontend/text/OpVocabulary.h"
#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"

using namespace mlir;

namespace dlc::dlg {

// IR types print in the .dlg notation, as AST types do.
using dlc::formatType;

using Result = FailureOr<Value>;

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

/// The element type shared by two operands of which at most one may be a
/// number; it decides the type of the number.
static FailureOr<Type> peerElementType(CallBuilder &call, size_t a, size_t b) {
  for (size_t i : {a, b})
    if (!call.args[i].isNumber)
      return cast<RankedTensorType>(call.args[i].value.getType())
          .getElementType();
  return call.error(call.loc())
         << "both operands are bare numbers, which have no type: compute "
            "the value by hand";
}

template <ComparePredicate predicate>
static Result buildCompare(CallBuilder &call) {
  auto element = peerElementType(call, 0, 1);
  if (failed(element)) return failure();
  auto lhs = call.arg(0, *element), rhs = call.arg(1, *element);
  if (failed(lhs) || failed(rhs)) return failure();
  auto &b = call.graph.builder;
  return call.graph.create<CompareOp>(
      call.loc(), {*lhs, *rhs},
      {b.getNamedAttr("predicate",
                      ComparePredicateAttr::get(b.getContext(), predicate))});
}

static Result buildGelu(CallBuilder &call) {
  auto x = call.tensorArg(0);
  auto approximate = call.choiceKw("approximate", {"none", "tanh"}, "none");
  if (failed(x) || failed(approximate)) return failure();
  auto &b = call.graph.builder;
  auto kind = *approximate == "tanh" ? GeluApproximation::tanh
                                     : GeluApproximation::none;
  return call.graph.create<GeluOp>(
      call.loc(), {*x},
      {b.getNamedAttr("approximation",
                      GeluApproximationAttr::get(b.getContext(), kind))});
}

static Result buildCast(CallBuilder &call) {
  auto x = call.tensorArg(0);
  auto to = call.dtypeKw("to", std::nullopt);
  if (failed(x) || failed(to)) return failure();
  auto type = cast<RankedTensorType>(x->getType()).clone(*to);
  return call.graph.createTyped<CastOp>(call.loc(), type, {*x});
}

//===----------------------------------------------------------------------===//
// Contraction, convolution, pooling
//===----------------------------------------------------------------------===//

/// A 2-D window parameter written as `3`, `[3]` or `[3, 5]`.
/// Without a fallback the keyword is required.
static FailureOr<SmallVector<int64_t>>
pair(CallBuilder &call, StringRef name,
     std::optional<SmallVector<int64_t>> fallback) {
  auto values = call.intListKw(name, fallback);
  if (failed(values)) return failure();
  if (values->size() == 1) values->push_back(values->front());
  if (values->size() != 2)
    return call.error(call.keyword(name)->value.loc)
           << name << " needs 1 or 2 values, got " << values->size();
  return values;
}

/// Padding written as `p`, `[ph, pw]` or `[top, left, bottom, right]`.
static FailureOr<SmallVector<int64_t>> padding4(CallBuilder &call) {
  auto values = call.intListKw("padding", SmallVector<int64_t>{0});
  if (failed(values)) return failure();
  SmallVector<int64_t> &p = *values;
  if (p.size() == 1) return SmallVector<int64_t>{p[0], p[0], p[0], p[0]};
  if (p.size() == 2) return SmallVector<int64_t>{p[0], p[1], p[0], p[1]};
  if (p.size() == 4) return p;
  return call.error(call.keyword("padding")->value.loc)
         << "padding needs 1, 2 or 4 values, got " << p.size();
}

static Result buildConv2d(CallBuilder &call) {
  auto x = call.tensorArg(0), w = call.tensorArg(1);
  if (failed(x) || failed(w)) return failure();
  SmallVector<Value> operands{*x, *w};
  if (call.args.size() == 3) {
    auto bias = call.tensorArg(2);
    if (failed(bias)) return failure();
    operands.push_back(*bias);
  }
  auto strides = pair(call, "stride", SmallVector<int64_t>{1});
  auto dilations = pair(call, "dilation", SmallVector<int64_t>{1});
  auto padding = padding4(call);
  auto groups = call.intKw("groups", 1);
  if (failed(strides) || failed(dilations) || failed(padding) || failed(groups))
    return failure();
  auto &b = call.graph.builder;
  return call.graph.create<Conv2dOp>(
      call.loc(), operands,
      {b.getNamedAttr("strides", b.getDenseI64ArrayAttr(*strides)),
       b.getNamedAttr("padding", b.getDenseI64ArrayAttr(*padding)),
       b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(*dilations)),
       b.getNamedAttr("groups", b.getI64IntegerAttr(*groups))});
}

template <typename OpTy>
static Result buildPool(CallBuilder &call) {
  auto x = call.tensorArg(0);
  auto kernel = pair(call, "kernel", std::nullopt);
  if (failed(x) || failed(kernel)) return failure();
  auto strides = pair(call, "stride", *kernel);
  auto padding = padding4(call);
  if (failed(strides) || failed(padding)) return failure();
  auto &b = call.graph.builder;
  SmallVector<NamedAttribute> attrs{
      b.getNamedAttr("kernel", b.getDenseI64ArrayAttr(*kernel)),
      b.getNamedAttr("strides", b.getDenseI64ArrayAttr(*strides)),
      b.getNamedAttr("padding", b.getDenseI64ArrayAttr(*padding))};
  if constexpr (std::is_same_v<OpTy, AvgPool2dOp>) {
    auto include = call.boolKw("count_include_pad", false);
    if (failed(include)) return failure();
    attrs.push_back(
        b.getNamedAttr("count_include_pad", b.getBoolAttr(*include)));
  }
  return call.graph.create<OpTy>(call.loc(), {*x}, attrs);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename OpTy>
static Result buildReduce(CallBuilder &call) {
  auto x = call.tensorArg(0);
  if (failed(x)) return failure();
  // Without `axes`, reduce over every dimension (NumPy's axis=None).
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < cast<RankedTensorType>(x->getType()).getRank(); ++i)
    all.push_back(i);
  auto axes = call.intListKw("axes", all);
  auto keepdims = call.boolKw("keepdims", false);
  if (failed(axes) || failed(keepdims)) return failure();
  auto &b = call.graph.builder;
  return call.graph.create<OpTy>(
      call.loc(), {*x},
      {b.getNamedAttr("axes", b.getDenseI64ArrayAttr(*axes)),
       b.getNamedAttr("keepdims", b.getBoolAttr(*keepdims))});
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

static Result buildReshape(CallBuilder &call) {
  auto x = call.tensorArg(0);
  auto shape = call.intListKw("shape", std::nullopt);
  if (failed(x) || failed(shape)) return failure();
  auto type = cast<RankedTensorType>(x->getType());
  // One -1 takes whatever size the others leave.
  int64_t known = 1, inferred = -1;
  for (auto [i, d] : llvm::enumerate(*shape)) {
    if (d == -1 && inferred < 0) {
      inferred = i;
      continue;
    }
    if (d < 0)
      return call.error(call.keyword("shape")->value.loc)
             << "shape " << formatShape(*shape)
             << " may hold one -1 and otherwise sizes of at least 0";
    known *= d;
  }
  if (inferred >= 0) {
    if (known == 0 || type.getNumElements() % known != 0)
      return call.error(call.keyword("shape")->value.loc)
             << "cannot reshape " << formatType(type) << " ("
             << type.getNumElements() << " elements) to "
             << formatShape(*shape);
    (*shape)[inferred] = type.getNumElements() / known;
  }
  return call.graph.createTyped<ReshapeOp>(
      call.loc(), type.clone(*shape), {*x});
}

static Result buildBroadcastTo(CallBuilder &call) {
  auto x = call.tensorArg(0);
  auto shape = call.shapeKw("shape");
  if (failed(x) || failed(shape)) return failure();
  auto type = cast<RankedTensorType>(x->getType());
  return call.graph.createTyped<BroadcastToOp>(call.loc(), type.clone(*shape),
                                               {*x});
}

static Result buildTranspose(CallBuilder &call) {
  auto x = call.tensorArg(0);
  if (failed(x)) return failure();
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  SmallVector<int64_t> reversed;
  for (int64_t i = rank - 1; i >= 0; --i) reversed.push_back(i);
  auto perm = call.intListKw("perm", reversed);
  if (failed(perm)) return failure();
  for (int64_t &p : *perm)
    if (p < 0) p += rank;
  auto &b = call.graph.builder;
  return call.graph.create<TransposeOp>(
      call.loc(), {*x}, {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(*perm))});
}

static Result buildConcat(CallBuilder &call) {
  SmallVector<Value> inputs;
  for (size_t i = 0; i < call.args.size(); ++i) {
    auto v = call.tensorArg(i);
    if (failed(v)) return failure();
    inputs.push_back(*v);
  }
  auto axis = call.intKw("axis", 0);
  if (failed(axis)) return failure();
  auto &b = call.graph.builder;
  return call.graph.create<ConcatOp>(
      call.loc(), inputs, {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis))});
}

/// Python slicing per listed axis: negative indices count from the end,
/// bounds clamp to the dimension, steps are positive.
static Result buildSlice(CallBuilder &call) {
  auto x = call.tensorArg(0);
  if (failed(x)) return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  auto starts = call.intListKw("starts", std::nullopt);
  auto ends = call.intListKw("ends", std::nullopt);
  if (failed(starts) || failed(ends)) return failure();
  SmallVector<int64_t> defaultAxes, defaultSteps(starts->size(), 1);
  for (size_t i = 0; i < starts->size(); ++i) defaultAxes.push_back(i);
  auto axes = call.intListKw("axes", defaultAxes);
  auto steps = call.intListKw("steps", defaultSteps);
  if (failed(axes) || failed(steps)) return failure();
  if (ends->size() != starts->size() || axes->size() != starts->size() ||
      steps->size() != starts->size())
    return call.error(call.loc())
           << "starts, ends, axes and steps need the same length, got "
           << starts->size() << ", " << ends->size() << ", " << axes->size()
           << " and " << steps->size();
  SmallVector<int64_t> lo(rank, 0), hi(type.getShape()), st(rank, 1);
  for (size_t i = 0; i < axes->size(); ++i) {
    auto axis = normalizeAxis((*axes)[i], rank);
    if (!axis)
      return call.error(call.keyword("axes") ? call.keyword("axes")->value.loc
                                             : call.loc())
             << "axis " << (*axes)[i] << " is out of range for "
             << formatType(type);
    if ((*steps)[i] < 1)
      return call.error(call.keyword("steps")->value.loc)
             << "steps must be at least 1, got " << formatShape(*steps);
    int64_t size = type.getDimSize(*axis);
    auto clampIndex = [size](int64_t v) {
      if (v < 0) v += size;
      return std::clamp<int64_t>(v, 0, size);
    };
    lo[*axis] = clampIndex((*starts)[i]);
    hi[*axis] = std::max(lo[*axis], clampIndex((*ends)[i]));
    st[*axis] = (*steps)[i];
  }
  auto &b = call.graph.builder;
  return call.graph.create<SliceOp>(
      call.loc(), {*x},
      {b.getNamedAttr("starts", b.getDenseI64ArrayAttr(lo)),
       b.getNamedAttr("limits", b.getDenseI64ArrayAttr(hi)),
       b.getNamedAttr("strides", b.getDenseI64ArrayAttr(st))});
}

static Result buildGather(CallBuilder &call) {
  auto x = call.tensorArg(0), indices = call.tensorArg(1);
  auto axis = call.intKw("axis", 0);
  if (failed(x) || failed(indices) || failed(axis)) return failure();
  auto &b = call.graph.builder;
  return call.graph.create<GatherOp>(
      call.loc(), {*x, *indices},
      {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis))});
}

static Result buildIota(CallBuilder &call) {
  auto shape = call.shapeKw("shape");
  auto axis = call.intKw("axis", 0);
  auto dtype = call.dtypeKw("dtype", call.graph.builder.getI64Type());
  if (failed(shape) || failed(axis) || failed(dtype)) return failure();
  auto &b = call.graph.builder;
  return call.graph.createTyped<IotaOp>(
      call.loc(), RankedTensorType::get(*shape, *dtype), {},
      {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis))});
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

/// Surface sugar: the calls whose spelling is not the op's ODS one
/// (another name, keyword or default, or a result type that the call's
/// keywords give). They take precedence over the ops of the same name.
//===----------------------------------------------------------------------===//
// Losses that are compositions of dialect ops
//===----------------------------------------------------------------------===//

/// `reduction` (mean, sum or none) of per-element losses `l`.
static Result reduceLoss(CallBuilder &call, Value l) {
  auto reduction = call.choiceKw("reduction", {"mean", "sum", "none"}, "mean");
  if (failed(reduction)) return failure();
  if (*reduction == "none") return l;
  auto &b = call.graph.builder;
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < cast<RankedTensorType>(l.getType()).getRank(); ++i)
    all.push_back(i);
  SmallVector<NamedAttribute> attrs{
      b.getNamedAttr("axes", b.getDenseI64ArrayAttr(all)),
      b.getNamedAttr("keepdims", b.getBoolAttr(false))};
  return *reduction == "sum"
             ? call.graph.create<ReduceSumOp>(call.loc(), {l}, attrs)
             : call.graph.create<ReduceMeanOp>(call.loc(), {l}, attrs);
}

/// A rank-0 constant of `like`'s element type.
static Result constantLike(CallBuilder &call, Value like, double v) {
  Operand number{call.loc(), Value(), true, false, v};
  return call.graph.materialize(
      number, cast<RankedTensorType>(like.getType()).getElementType());
}

/// bce_with_logits(x, t) = max(x, 0) - x t + log(1 + exp(-|x|)) per
/// element (PyTorch's BCEWithLogitsLoss, stable for any x), then reduced.
static Result buildBceWithLogits(CallBuilder &call) {
  auto x = call.tensorArg(0), t = call.tensorArg(1);
  if (failed(x) || failed(t)) return failure();
  GraphBuilder &g = call.graph;
  auto relu = g.create<ReluOp>(call.loc(), {*x});
  if (failed(relu)) return failure();
  auto xt = g.create<MulOp>(call.loc(), {*x, *t});
  if (failed(xt)) return failure();
  auto absx = g.create<AbsOp>(call.loc(), {*x});
  if (failed(absx)) return failure();
  auto negabs = g.create<NegOp>(call.loc(), {*absx});
  if (failed(negabs)) return failure();
  auto soft = g.create<SoftplusOp>(call.loc(), {*negabs});
  if (failed(soft)) return failure();
  auto diff = g.create<SubOp>(call.loc(), {*relu, *xt});
  if (failed(diff)) return failure();
  auto l = g.create<AddOp>(call.loc(), {*diff, *soft});
  if (failed(l)) return failure();
  return reduceLoss(call, *l);
}

/// nll(log_probs, labels) = -log_probs[..., label] per example (PyTorch's
/// NLLLoss over the last axis), then reduced.
static Result buildNll(CallBuilder &call) {
  auto logp = call.tensorArg(0), labels = call.tensorArg(1);
  if (failed(logp) || failed(labels)) return failure();
  GraphBuilder &g = call.graph;
  auto type = cast<RankedTensorType>(logp->getType());
  auto labelType = cast<RankedTensorType>(labels->getType());
  if (type.getRank() < 1 || labelType.getShape() != type.getShape().drop_back() ||
      !isa<IntegerType>(labelType.getElementType()))
    return call.error(call.loc())
           << "needs log-probabilities [..., C] and integer labels [...], got "
           << formatType(type) << " and " << formatType(labelType);
  auto &b = g.builder;
  SmallVector<int64_t> kept(labelType.getShape());
  kept.push_back(1);
  auto column = g.createTyped<ReshapeOp>(call.loc(), labelType.clone(kept), {*labels});
  if (failed(column)) return failure();
  auto wide = g.createTyped<BroadcastToOp>(
      call.loc(), labelType.clone(type.getShape()), {*column});
  if (failed(wide)) return failure();
  auto classes = g.createTyped<IotaOp>(
      call.loc(), labelType.clone(type.getShape()), {},
      {b.getNamedAttr("axis", b.getI64IntegerAttr(type.getRank() - 1))});
  if (failed(classes)) return failure();
  auto hit = g.create<CompareOp>(
      call.loc(), {*classes, *wide},
      {b.getNamedAttr("predicate", ComparePredicateAttr::get(
                                       b.getContext(), ComparePredicate::eq))});
  if (failed(hit)) return failure();
  auto zero = constantLike(call, *logp, 0);
  if (failed(zero)) return failure();
  auto picked = g.create<SelectOp>(call.loc(), {*hit, *logp, *zero});
  if (failed(picked)) return failure();
  auto perExample = g.create<ReduceSumOp>(
      call.loc(), {*picked},
      {b.getNamedAttr("axes", b.getDenseI64ArrayAttr({type.getRank() - 1})),
       b.getNamedAttr("keepdims", b.getBoolAttr(false))});
  if (failed(perExample)) return failure();
  auto l = g.create<NegOp>(call.loc(), {*perExample});
  if (failed(l)) return failure();
  return reduceLoss(call, *l);
}

static const std::vector<OpSpec> &handWrittenOps() {
  static const std::vector<OpSpec> table = {
      // Element-wise: comparisons by predicate, gelu's `approximate`, and
      // cast's element type as `to=`.
      {"eq", 2, 2, {}, buildCompare<ComparePredicate::eq>},
      {"ne", 2, 2, {}, buildCompare<ComparePredicate::ne>},
      {"lt", 2, 2, {}, buildCompare<ComparePredicate::lt>},
      {"le", 2, 2, {}, buildCompare<ComparePredicate::le>},
      {"gt", 2, 2, {}, buildCompare<ComparePredicate::gt>},
      {"ge", 2, 2, {}, buildCompare<ComparePredicate::ge>},
      {"gelu", 1, 1, {"approximate"}, buildGelu},
      {"cast", 1, 1, {"to"}, buildCast},
      // Convolution and pooling: `stride`, `dilation` and `padding` sugar.
      {"conv2d", 2, 3, {"stride", "padding", "dilation", "groups"}, buildConv2d},
      {"max_pool2d", 1, 1, {"kernel", "stride", "padding"}, buildPool<MaxPool2dOp>},
      {"avg_pool2d", 1, 1, {"kernel", "stride", "padding", "count_include_pad"},
       buildPool<AvgPool2dOp>},
      // Reductions: every axis by default.
      {"reduce_max", 1, 1, {"axes", "keepdims"}, buildReduce<ReduceMaxOp>},
      {"reduce_mean", 1, 1, {"axes", "keepdims"}, buildReduce<ReduceMeanOp>},
      {"reduce_min", 1, 1, {"axes", "keepdims"}, buildReduce<ReduceMinOp>},
      {"reduce_prod", 1, 1, {"axes", "keepdims"}, buildReduce<ReduceProdOp>},
      {"reduce_sum", 1, 1, {"axes", "keepdims"}, buildReduce<ReduceSumOp>},
      // Data movement: shapes given as keywords, Python slices, default
      // axes and permutations.
      {"reshape", 1, 1, {"shape"}, buildReshape},
      {"transpose", 1, 1, {"perm"}, buildTranspose},
      {"broadcast_to", 1, 1, {"shape"}, buildBroadcastTo},
      {"concat", 1, ~0u, {"axis"}, buildConcat},
      {"slice", 1, 1, {"starts", "ends", "axes", "steps"}, buildSlice},
      {"gather", 2, 2, {"axis"}, buildGather},
      {"iota", 0, 0, {"shape", "axis", "dtype"}, buildIota},
      // Losses written as compositions.
      {"bce_with_logits", 2, 2, {"reduction"}, buildBceWithLogits},
      {"nll", 2, 2, {"reduction"}, buildNll},
  };
  return table;
}

/// The entry that builds a dialect op from its ODS alone.
static OpSpec generatedSpec(const OdsOp &op) {
  OpSpec spec{op.mnemonic, 0, 0, {}, buildFromOds, &op};
  bool variadic = false;
  for (const OdsOperand &operand : op.operands) {
    spec.minArgs += operand.arity == OdsArity::Single;
    spec.maxArgs += operand.arity != OdsArity::Variadic;
    variadic |= operand.arity == OdsArity::Variadic;
  }
  if (variadic)
    spec.maxArgs = ~0u;
  for (const OdsAttr &attr : op.attrs)
    spec.keywords.push_back(attr.name);
  return spec;
}

/// The whole vocabulary: the sugar, then every other op of the dialect
/// that a .dlg file may call.
static const std::vector<OpSpec> &opTable() {
  static const std::vector<OpSpec> table = [] {
    std::vector<OpSpec> all = handWrittenOps();
    for (const OdsOp *op : callableOps())
      if (llvm::none_of(handWrittenOps(), [&](const OpSpec &hand) {
            return StringRef(hand.name) == op->mnemonic;
          }))
        all.push_back(generatedSpec(*op));
    return all;
  }();
  return table;
}

const OpSpec *lookupOp(StringRef name) {
  for (const OpSpec &spec : opTable())
    if (name == spec.name)
      return &spec;
  return nullptr;
}

std::string closestOpName(StringRef name) {
  std::string best;
  unsigned bestDistance = 3; // suggest only near misses
  for (const OpSpec &spec : opTable()) {
    unsigned d = name.edit_distance(spec.name, true, bestDistance);
    if (d < bestDistance) {
      bestDistance = d;
      best = spec.name;
    }
  }
  return best;
}

} // namespace dlc::dlg
