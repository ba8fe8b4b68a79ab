//===- OpTable.cpp - the op vocabulary of the .dlg format -----------------===//
//
// One entry per op a .dlg file can call: arity, keywords, and a builder that
// reads the keywords (with their defaults, as docs/format.md states them),
// turns them into the `dlc` op's attributes, and creates the op. Shape
// errors come from the ops' own inference; this file checks only what the
// surface syntax adds (keyword kinds, Python-style slices, -1 in reshape).
//
//===----------------------------------------------------------------------===//

#include "frontend/text/GraphBuilder.h"
#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace dlc::dlg {

// IR types print in the .dlg notation, as AST types do.
using dlc::formatType;

using Result = FailureOr<Value>;

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

template <typename OpTy>
static Result buildUnary(CallBuilder &call) {
  auto x = call.tensorArg(0);
  if (failed(x)) return failure();
  return call.graph.create<OpTy>(call.loc(), {*x});
}

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

template <typename OpTy>
static Result buildBinary(CallBuilder &call) {
  auto element = peerElementType(call, 0, 1);
  if (failed(element)) return failure();
  auto lhs = call.arg(0, *element), rhs = call.arg(1, *element);
  if (failed(lhs) || failed(rhs)) return failure();
  return call.graph.create<OpTy>(call.loc(), {*lhs, *rhs});
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

static Result buildSelect(CallBuilder &call) {
  auto cond = call.tensorArg(0);
  if (failed(cond)) return failure();
  auto element = peerElementType(call, 1, 2);
  if (failed(element)) return failure();
  auto onTrue = call.arg(1, *element), onFalse = call.arg(2, *element);
  if (failed(onTrue) || failed(onFalse)) return failure();
  return call.graph.create<SelectOp>(call.loc(), {*cond, *onTrue, *onFalse});
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

static Result buildMatmul(CallBuilder &call) {
  auto lhs = call.tensorArg(0), rhs = call.tensorArg(1);
  auto ta = call.boolKw("transpose_a", false);
  auto tb = call.boolKw("transpose_b", false);
  if (failed(lhs) || failed(rhs) || failed(ta) || failed(tb)) return failure();
  auto &b = call.graph.builder;
  return call.graph.create<MatmulOp>(
      call.loc(), {*lhs, *rhs},
      {b.getNamedAttr("transpose_a", b.getBoolAttr(*ta)),
       b.getNamedAttr("transpose_b", b.getBoolAttr(*tb))});
}

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
// Reductions and normalisation
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

template <typename OpTy>
static Result buildSoftmax(CallBuilder &call) {
  auto x = call.tensorArg(0);
  auto axis = call.intKw("axis", -1);
  if (failed(x) || failed(axis)) return failure();
  auto &b = call.graph.builder;
  return call.graph.create<OpTy>(
      call.loc(), {*x}, {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis))});
}

template <typename OpTy>
static Result buildNorm(CallBuilder &call, double defaultEpsilon) {
  SmallVector<Value> operands;
  for (size_t i = 0; i < call.args.size(); ++i) {
    auto v = call.tensorArg(i);
    if (failed(v)) return failure();
    operands.push_back(*v);
  }
  auto axis = call.intKw("axis", -1);
  auto epsilon = call.floatKw("epsilon", defaultEpsilon);
  if (failed(axis) || failed(epsilon)) return failure();
  auto &b = call.graph.builder;
  return call.graph.create<OpTy>(
      call.loc(), operands,
      {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis)),
       b.getNamedAttr("epsilon", b.getF64FloatAttr(*epsilon))});
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

static Result buildEmbedding(CallBuilder &call) {
  auto table = call.tensorArg(0), ids = call.tensorArg(1);
  if (failed(table) || failed(ids)) return failure();
  return call.graph.create<EmbeddingOp>(call.loc(), {*table, *ids});
}

static Result buildPad(CallBuilder &call) {
  auto x = call.tensorArg(0);
  auto low = call.intListKw("low", std::nullopt);
  auto high = call.intListKw("high", std::nullopt);
  auto value = call.floatKw("value", 0.0);
  if (failed(x) || failed(low) || failed(high) || failed(value))
    return failure();
  auto &b = call.graph.builder;
  return call.graph.create<PadOp>(
      call.loc(), {*x},
      {b.getNamedAttr("low", b.getDenseI64ArrayAttr(*low)),
       b.getNamedAttr("high", b.getDenseI64ArrayAttr(*high)),
       b.getNamedAttr("value", b.getF64FloatAttr(*value))});
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
// Losses
//===----------------------------------------------------------------------===//

template <typename OpTy>
static Result buildLoss(CallBuilder &call) {
  auto a = call.tensorArg(0), c = call.tensorArg(1);
  auto reduction = call.choiceKw("reduction", {"mean", "sum", "none"}, "mean");
  if (failed(a) || failed(c) || failed(reduction)) return failure();
  auto kind = llvm::StringSwitch<LossReduction>(*reduction)
                  .Case("sum", LossReduction::sum)
                  .Case("none", LossReduction::none)
                  .Default(LossReduction::mean);
  auto &b = call.graph.builder;
  return call.graph.create<OpTy>(
      call.loc(), {*a, *c},
      {b.getNamedAttr("reduction", LossReductionAttr::get(b.getContext(), kind))});
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

static const std::vector<OpSpec> &opTable() {
  static const std::vector<OpSpec> table = {
      // Element-wise.
      {"abs", 1, 1, {}, buildUnary<AbsOp>},
      {"exp", 1, 1, {}, buildUnary<ExpOp>},
      {"log", 1, 1, {}, buildUnary<LogOp>},
      {"neg", 1, 1, {}, buildUnary<NegOp>},
      {"relu", 1, 1, {}, buildUnary<ReluOp>},
      {"rsqrt", 1, 1, {}, buildUnary<RsqrtOp>},
      {"sigmoid", 1, 1, {}, buildUnary<SigmoidOp>},
      {"silu", 1, 1, {}, buildUnary<SiluOp>},
      {"sqrt", 1, 1, {}, buildUnary<SqrtOp>},
      {"tanh", 1, 1, {}, buildUnary<TanhOp>},
      {"gelu", 1, 1, {"approximate"}, buildGelu},
      {"add", 2, 2, {}, buildBinary<AddOp>},
      {"sub", 2, 2, {}, buildBinary<SubOp>},
      {"mul", 2, 2, {}, buildBinary<MulOp>},
      {"div", 2, 2, {}, buildBinary<DivOp>},
      {"pow", 2, 2, {}, buildBinary<PowOp>},
      {"max", 2, 2, {}, buildBinary<MaxOp>},
      {"min", 2, 2, {}, buildBinary<MinOp>},
      {"eq", 2, 2, {}, buildCompare<ComparePredicate::eq>},
      {"ne", 2, 2, {}, buildCompare<ComparePredicate::ne>},
      {"lt", 2, 2, {}, buildCompare<ComparePredicate::lt>},
      {"le", 2, 2, {}, buildCompare<ComparePredicate::le>},
      {"gt", 2, 2, {}, buildCompare<ComparePredicate::gt>},
      {"ge", 2, 2, {}, buildCompare<ComparePredicate::ge>},
      {"select", 3, 3, {}, buildSelect},
      {"cast", 1, 1, {"to"}, buildCast},
      // Contraction, convolution, pooling.
      {"matmul", 2, 2, {"transpose_a", "transpose_b"}, buildMatmul},
      {"conv2d", 2, 3, {"stride", "padding", "dilation", "groups"}, buildConv2d},
      {"max_pool2d", 1, 1, {"kernel", "stride", "padding"}, buildPool<MaxPool2dOp>},
      {"avg_pool2d", 1, 1, {"kernel", "stride", "padding", "count_include_pad"},
       buildPool<AvgPool2dOp>},
      // Reductions and normalisation.
      {"reduce_sum", 1, 1, {"axes", "keepdims"}, buildReduce<ReduceSumOp>},
      {"reduce_mean", 1, 1, {"axes", "keepdims"}, buildReduce<ReduceMeanOp>},
      {"reduce_max", 1, 1, {"axes", "keepdims"}, buildReduce<ReduceMaxOp>},
      {"reduce_min", 1, 1, {"axes", "keepdims"}, buildReduce<ReduceMinOp>},
      {"softmax", 1, 1, {"axis"}, buildSoftmax<SoftmaxOp>},
      {"log_softmax", 1, 1, {"axis"}, buildSoftmax<LogSoftmaxOp>},
      {"layer_norm", 2, 3, {"axis", "epsilon"},
       [](CallBuilder &c) { return buildNorm<LayerNormOp>(c, 1e-5); }},
      {"rms_norm", 2, 2, {"axis", "epsilon"},
       [](CallBuilder &c) { return buildNorm<RmsNormOp>(c, 1e-6); }},
      // Data movement.
      {"reshape", 1, 1, {"shape"}, buildReshape},
      {"transpose", 1, 1, {"perm"}, buildTranspose},
      {"broadcast_to", 1, 1, {"shape"}, buildBroadcastTo},
      {"concat", 1, ~0u, {"axis"}, buildConcat},
      {"slice", 1, 1, {"starts", "ends", "axes", "steps"}, buildSlice},
      {"gather", 2, 2, {"axis"}, buildGather},
      {"embedding", 2, 2, {}, buildEmbedding},
      {"pad", 1, 1, {"low", "high", "value"}, buildPad},
      {"iota", 0, 0, {"shape", "axis", "dtype"}, buildIota},
      // Losses.
      {"cross_entropy", 2, 2, {"reduction"}, buildLoss<CrossEntropyOp>},
      {"mse", 2, 2, {"reduction"}, buildLoss<MseOp>},
  };
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
