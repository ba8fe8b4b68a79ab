//===- Elementwise.cpp - ONNX element-wise ops ----------------------------===//
//
// Arithmetic, comparisons, logic, activations and math functions. Ops the
// dialect has map one to one; the others are compositions (Elu is a
// select of exp, And a select, IsNaN a comparison). On values known at
// import time they fold through the oracle (Folding.cpp), like every node.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

#include "ir/ShapeUtils.h"

#include <cmath>
#include <functional>

using namespace mlir;

namespace dlc::onnximport {

static Type elementOf(Value v) {
  return v ? cast<RankedTensorType>(v.getType()).getElementType() : Type();
}

/// A scalar constant of `v`'s element type.
static Value like(NodeImporter &n, Value v, double value) {
  return v ? n.scalar(value, elementOf(v)) : Value();
}

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

// 8-bit integer inputs are computed in i32 and narrowed back (see
// NodeImporter::widened).

template <typename OpTy>
static LogicalResult importBinary(NodeImporter &n) {
  Value a = n.input(0);
  return n.setOutput(0, n.narrowed(n.create<OpTy>({n.widened(a),
                                                   n.widened(n.input(1))}),
                                   elementOf(a)));
}

/// Max, Min, Sum, Mean over one or more inputs.
template <typename OpTy>
static LogicalResult importVariadic(NodeImporter &n, bool mean = false) {
  Value first = n.input(0);
  Value acc = n.widened(first);
  for (size_t i = 1; i < n.numInputs(); ++i)
    acc = n.create<OpTy>({acc, n.widened(n.input(i))});
  if (mean && n.numInputs() > 1)
    acc = n.create<DivOp>({acc, like(n, acc, n.numInputs())});
  return n.setOutput(0, n.narrowed(acc, elementOf(first)));
}

/// BitShift: x * 2^y or x / 2^y (unsigned inputs), in i64.
static LogicalResult importBitShift(NodeImporter &n) {
  auto direction = n.stringAttr("direction", "");
  Value x = n.input(0), y = n.input(1);
  if (!direction || !x || !y)
    return failure();
  if (*direction != "LEFT" && *direction != "RIGHT")
    return n.error() << "attribute 'direction' must be LEFT or RIGHT (got '"
                     << *direction << "')";
  Type element = elementOf(x);
  auto intType = dyn_cast<IntegerType>(element);
  if (!intType || !intType.isUnsigned())
    return n.error() << "BitShift takes unsigned integers";
  Value wide = n.cast(x, n.i64());
  Value power = n.create<PowOp>({n.scalar(2, n.i64()), n.cast(y, n.i64())});
  Value shifted = *direction == "LEFT" ? n.create<MulOp>({wide, power})
                                       : n.create<DivOp>({wide, power});
  return n.setOutput(0, n.cast(shifted, element));
}

static LogicalResult importPow(NodeImporter &n) {
  Value x = n.input(0), y = n.input(1);
  if (!x || !y)
    return failure();
  if (elementOf(x) == elementOf(y))
    return n.setOutput(0, n.create<PowOp>({x, y}));
  // Mixed types: compute in f64, the result has the base's type.
  Value p = n.create<PowOp>({n.cast(x, n.f64()), n.cast(y, n.f64())});
  return n.setOutput(0, n.cast(p, elementOf(x)));
}

/// trunc(q) for floats: toward zero.
static Value truncate(NodeImporter &n, Value q) {
  Value negative = n.compare(ComparePredicate::lt, q, like(n, q, 0));
  return n.create<SelectOp>({negative, n.create<CeilOp>({q}),
                             n.create<FloorOp>({q})});
}

static LogicalResult importMod(NodeImporter &n) {
  auto fmod = n.intAttr("fmod", 0);
  if (!fmod)
    return failure();
  Value a8 = n.input(0);
  Value a = n.widened(a8), b = n.widened(n.input(1));
  if (!a || !b)
    return failure();
  bool isFloat = isa<FloatType>(elementOf(a));
  if (isFloat && !*fmod)
    return n.error() << "fmod=0 on floating-point inputs is invalid ONNX";
  Value q = n.create<DivOp>({a, b});
  if (isFloat)
    q = truncate(n, q); // integer division already truncates
  Value r = n.create<SubOp>({a, n.create<MulOp>({b, q})});
  if (*fmod)
    return n.setOutput(0, n.narrowed(r, elementOf(a8)));
  // Python's sign rule: a non-zero remainder takes the divisor's sign.
  Value zero = like(n, r, 0);
  Value differ = n.create<CompareOp>(
      {n.compare(ComparePredicate::lt, r, zero),
       n.compare(ComparePredicate::lt, b, zero)},
      {n.named("predicate", ComparePredicateAttr::get(
                                &n.graph.context, ComparePredicate::ne))});
  Value fix = n.create<SelectOp>(
      {n.create<SelectOp>({n.compare(ComparePredicate::ne, r, zero), differ,
                           n.scalar(0, n.i1())}),
       n.create<AddOp>({r, b}), r});
  return n.setOutput(0, n.narrowed(fix, elementOf(a8)));
}

static LogicalResult importClip(NodeImporter &n) {
  Value x8 = n.input(0);
  Value x = n.widened(x8);
  if (!x)
    return failure();
  Value lo, hi;
  if (n.opset() < 11) {
    auto minV = n.floatAttr("min", -INFINITY), maxV = n.floatAttr("max", INFINITY);
    if (!minV || !maxV)
      return failure();
    lo = like(n, x, *minV);
    hi = like(n, x, *maxV);
  } else {
    if (n.hasInput(1))
      lo = n.widened(n.input(1));
    if (n.hasInput(2))
      hi = n.widened(n.input(2));
  }
  if (lo)
    x = n.create<MaxOp>({x, lo});
  if (hi)
    x = n.create<MinOp>({x, hi});
  return n.setOutput(0, n.narrowed(x, elementOf(x8)));
}

//===----------------------------------------------------------------------===//
// Comparisons, logic, select
//===----------------------------------------------------------------------===//

static LogicalResult importCompare(NodeImporter &n, ComparePredicate p) {
  return n.setOutput(0, n.compare(p, n.widened(n.input(0)),
                                  n.widened(n.input(1))));
}

static LogicalResult importWhere(NodeImporter &n) {
  return n.setOutput(0, n.create<SelectOp>({n.input(0), n.input(1), n.input(2)}));
}

static LogicalResult importNot(NodeImporter &n) {
  return n.setOutput(
      0, n.compare(ComparePredicate::eq, n.input(0), n.scalar(0, n.i1())));
}

static LogicalResult importLogic(NodeImporter &n, char op) {
  Value a = n.input(0), b = n.input(1);
  Value t = n.scalar(1, n.i1()), f = n.scalar(0, n.i1());
  switch (op) {
  case '&': return n.setOutput(0, n.create<SelectOp>({a, b, f}));
  case '|': return n.setOutput(0, n.create<SelectOp>({a, t, b}));
  default: return n.setOutput(0, n.compare(ComparePredicate::ne, a, b));
  }
}

static LogicalResult importIsInf(NodeImporter &n) {
  auto neg = n.intAttr("detect_negative", 1), pos = n.intAttr("detect_positive", 1);
  Value x = n.input(0);
  if (!neg || !pos || !x)
    return failure();
  Value result = n.broadcastTo(n.scalar(0, n.i1()), shapeOf(x));
  if (*pos)
    result = n.compare(ComparePredicate::eq, x, like(n, x, INFINITY));
  if (*neg) {
    Value isNeg = n.compare(ComparePredicate::eq, x, like(n, x, -INFINITY));
    result = *pos ? n.create<SelectOp>({result, n.scalar(1, n.i1()), isNeg})
                  : isNeg;
  }
  return n.setOutput(0, result);
}

//===----------------------------------------------------------------------===//
// Activations and math
//===----------------------------------------------------------------------===//

template <typename OpTy>
static LogicalResult importUnary(NodeImporter &n) {
  return n.setOutput(0, n.create<OpTy>({n.input(0)}));
}

/// An activation written as a function of the input and the node.
static LogicalResult
importComposed(NodeImporter &n,
               const std::function<Value(NodeImporter &, Value)> &build) {
  Value x = n.input(0);
  if (!x)
    return failure();
  return n.setOutput(0, build(n, x));
}

static Value lessThanZero(NodeImporter &n, Value x) {
  return n.compare(ComparePredicate::lt, x, like(n, x, 0));
}

static LogicalResult importElu(NodeImporter &n) {
  auto alpha = n.floatAttr("alpha", 1.0);
  if (!alpha)
    return failure();
  return importComposed(n, [&](NodeImporter &n, Value x) {
    Value em1 = n.create<SubOp>({n.create<ExpOp>({x}), like(n, x, 1)});
    return n.create<SelectOp>(
        {lessThanZero(n, x), n.create<MulOp>({em1, like(n, x, *alpha)}), x});
  });
}

static LogicalResult importSelu(NodeImporter &n) {
  auto alpha = n.floatAttr("alpha", 1.67326319217681884765625);
  auto gamma = n.floatAttr("gamma", 1.05070102214813232421875);
  if (!alpha || !gamma)
    return failure();
  return importComposed(n, [&](NodeImporter &n, Value x) {
    Value neg = n.create<MulOp>(
        {n.create<SubOp>({n.create<ExpOp>({x}), like(n, x, 1)}),
         like(n, x, *alpha)});
    Value le = n.compare(ComparePredicate::le, x, like(n, x, 0));
    return n.create<MulOp>({n.create<SelectOp>({le, neg, x}),
                            like(n, x, *gamma)});
  });
}

static LogicalResult importCelu(NodeImporter &n) {
  auto alpha = n.floatAttr("alpha", 1.0);
  if (!alpha)
    return failure();
  return importComposed(n, [&](NodeImporter &n, Value x) {
    Value e = n.create<ExpOp>({n.create<DivOp>({x, like(n, x, *alpha)})});
    Value neg = n.create<MulOp>({n.create<SubOp>({e, like(n, x, 1)}),
                                 like(n, x, *alpha)});
    return n.create<AddOp>({n.create<MaxOp>({x, like(n, x, 0)}),
                            n.create<MinOp>({neg, like(n, x, 0)})});
  });
}

static LogicalResult importLeakyRelu(NodeImporter &n) {
  auto alpha = n.floatAttr("alpha", 0.01);
  if (!alpha)
    return failure();
  return importComposed(n, [&](NodeImporter &n, Value x) {
    return n.create<SelectOp>(
        {lessThanZero(n, x), n.create<MulOp>({x, like(n, x, *alpha)}), x});
  });
}

static LogicalResult importPRelu(NodeImporter &n) {
  Value x = n.input(0), slope = n.input(1);
  // Opset 6 and below: a 1-D slope holds one value per channel (axis 1);
  // from 7 it broadcasts NumPy's way. ONNX's version converter leaves the
  // node as it is, so the file's own opset decides.
  if (x && slope && n.graph.fileOpset < 7) {
    auto shape = shapeOf(x), slopeShape = shapeOf(slope);
    if (shape.size() > 2 && slopeShape.size() == 1 &&
        slopeShape[0] == shape[1] && slopeShape[0] != 1) {
      SmallVector<int64_t> perChannel{slopeShape[0]};
      perChannel.append(shape.size() - 2, 1);
      slope = n.reshape(slope, perChannel);
    }
  }
  return n.setOutput(0, n.create<SelectOp>({lessThanZero(n, x),
                                            n.create<MulOp>({x, slope}), x}));
}

static LogicalResult importThresholdedRelu(NodeImporter &n) {
  auto alpha = n.floatAttr("alpha", 1.0);
  if (!alpha)
    return failure();
  return importComposed(n, [&](NodeImporter &n, Value x) {
    return n.create<SelectOp>(
        {n.compare(ComparePredicate::gt, x, like(n, x, *alpha)), x,
         like(n, x, 0)});
  });
}

/// max(0, min(1, alpha x + beta)).
static Value hardSigmoid(NodeImporter &n, Value x, double alpha, double beta) {
  Value y = n.create<AddOp>({n.create<MulOp>({x, like(n, x, alpha)}),
                             like(n, x, beta)});
  return n.create<MaxOp>({n.create<MinOp>({y, like(n, x, 1)}), like(n, x, 0)});
}

static LogicalResult importHardSigmoid(NodeImporter &n) {
  auto alpha = n.floatAttr("alpha", 0.2), beta = n.floatAttr("beta", 0.5);
  if (!alpha || !beta)
    return failure();
  return importComposed(n, [&](NodeImporter &n, Value x) {
    return hardSigmoid(n, x, *alpha, *beta);
  });
}

static LogicalResult importShrink(NodeImporter &n) {
  auto bias = n.floatAttr("bias", 0.0), lambd = n.floatAttr("lambd", 0.5);
  if (!bias || !lambd)
    return failure();
  return importComposed(n, [&](NodeImporter &n, Value x) {
    Value low = n.compare(ComparePredicate::lt, x, like(n, x, -*lambd));
    Value high = n.compare(ComparePredicate::gt, x, like(n, x, *lambd));
    Value inner = n.create<SelectOp>(
        {high, n.create<SubOp>({x, like(n, x, *bias)}), like(n, x, 0)});
    return n.create<SelectOp>(
        {low, n.create<AddOp>({x, like(n, x, *bias)}), inner});
  });
}

/// The math functions the dialect composes rather than holds.
static LogicalResult importMath(NodeImporter &n, StringRef fn) {
  return importComposed(n, [fn](NodeImporter &n, Value x) -> Value {
    auto c = [&](double v) { return like(n, x, v); };
    auto add = [&](Value a, Value b) { return n.create<AddOp>({a, b}); };
    auto sub = [&](Value a, Value b) { return n.create<SubOp>({a, b}); };
    auto mul = [&](Value a, Value b) { return n.create<MulOp>({a, b}); };
    auto div = [&](Value a, Value b) { return n.create<DivOp>({a, b}); };
    auto exp = [&](Value a) { return n.create<ExpOp>({a}); };
    auto log = [&](Value a) { return n.create<LogOp>({a}); };
    auto sqrt = [&](Value a) { return n.create<SqrtOp>({a}); };
    auto atan = [&](Value a) { return n.create<AtanOp>({a}); };
    if (fn == "Tan")
      return div(n.create<SinOp>({x}), n.create<CosOp>({x}));
    if (fn == "Asin") // 2 atan(x / (1 + sqrt(1 - x^2)))
      return mul(c(2), atan(div(x, add(c(1), sqrt(sub(c(1), mul(x, x)))))));
    if (fn == "Acos") // 2 atan(sqrt((1 - x) / (1 + x)))
      return mul(c(2), atan(sqrt(div(sub(c(1), x), add(c(1), x)))));
    if (fn == "Sinh")
      return mul(c(0.5), sub(exp(x), exp(n.create<NegOp>({x}))));
    if (fn == "Cosh")
      return mul(c(0.5), add(exp(x), exp(n.create<NegOp>({x}))));
    if (fn == "Asinh")
      return log(add(x, sqrt(add(mul(x, x), c(1)))));
    if (fn == "Acosh")
      return log(add(x, sqrt(sub(mul(x, x), c(1)))));
    if (fn == "Atanh")
      return mul(c(0.5), log(div(add(c(1), x), sub(c(1), x))));
    if (fn == "Reciprocal")
      return div(c(1), x);
    if (fn == "Softsign")
      return div(x, add(c(1), n.create<AbsOp>({x})));
    if (fn == "HardSwish")
      return mul(x, hardSigmoid(n, x, 1.0 / 6, 0.5));
    if (fn == "Sign")
      return n.create<SelectOp>(
          {n.compare(ComparePredicate::gt, x, c(0)), c(1),
           n.create<SelectOp>({lessThanZero(n, x), c(-1), c(0)})});
    if (fn == "IsNaN")
      return n.compare(ComparePredicate::ne, x, x);
    return {};
  });
}

/// Gelu (opset 20): `dlc.gelu` with ONNX's `approximate` ("none", "tanh").
static LogicalResult importGelu(NodeImporter &n) {
  auto approximate = n.stringAttr("approximate", "none");
  Value x = n.input(0);
  if (!approximate || !x)
    return failure();
  if (*approximate != "none" && *approximate != "tanh")
    return n.unsupported("approximate", "unknown value '" + *approximate + "'");
  auto kind = *approximate == "tanh" ? GeluApproximation::tanh
                                     : GeluApproximation::none;
  return n.setOutput(
      0, n.create<GeluOp>({x}, {n.named("approximation",
                                        GeluApproximationAttr::get(
                                            n.b.getContext(), kind))}));
}

void addElementwiseOps(OpTable &t) {
  t["Add"] = {{}, importBinary<AddOp>};
  t["Sub"] = {{}, importBinary<SubOp>};
  t["Mul"] = {{}, importBinary<MulOp>};
  t["Div"] = {{}, importBinary<DivOp>};
  t["Pow"] = {{}, importPow};
  t["Mod"] = {{"fmod"}, importMod};
  t["Max"] = {{}, [](NodeImporter &n) { return importVariadic<MaxOp>(n); }};
  t["Min"] = {{}, [](NodeImporter &n) { return importVariadic<MinOp>(n); }};
  t["Sum"] = {{}, [](NodeImporter &n) { return importVariadic<AddOp>(n); }};
  t["Mean"] = {{}, [](NodeImporter &n) { return importVariadic<AddOp>(n, true); }};
  t["Clip"] = {{"min", "max"}, importClip};
  t["BitShift"] = {{"direction"}, importBitShift};

  t["Equal"] = {{}, [](NodeImporter &n) { return importCompare(n, ComparePredicate::eq); }};
  t["Less"] = {{}, [](NodeImporter &n) { return importCompare(n, ComparePredicate::lt); }};
  t["LessOrEqual"] = {{}, [](NodeImporter &n) { return importCompare(n, ComparePredicate::le); }};
  t["Greater"] = {{}, [](NodeImporter &n) { return importCompare(n, ComparePredicate::gt); }};
  t["GreaterOrEqual"] = {{}, [](NodeImporter &n) { return importCompare(n, ComparePredicate::ge); }};
  t["Where"] = {{}, importWhere};
  t["Not"] = {{}, importNot};
  t["And"] = {{}, [](NodeImporter &n) { return importLogic(n, '&'); }};
  t["Or"] = {{}, [](NodeImporter &n) { return importLogic(n, '|'); }};
  t["Xor"] = {{}, [](NodeImporter &n) { return importLogic(n, '^'); }};
  t["IsInf"] = {{"detect_negative", "detect_positive"}, importIsInf};

  t["Abs"] = {{}, importUnary<AbsOp>};
  t["Neg"] = {{}, importUnary<NegOp>};
  t["Exp"] = {{}, importUnary<ExpOp>};
  t["Log"] = {{}, importUnary<LogOp>};
  t["Sqrt"] = {{}, importUnary<SqrtOp>};
  t["Relu"] = {{}, importUnary<ReluOp>};
  t["Sigmoid"] = {{}, importUnary<SigmoidOp>};
  t["Tanh"] = {{}, importUnary<TanhOp>};
  t["Erf"] = {{}, importUnary<ErfOp>};
  t["Floor"] = {{}, importUnary<FloorOp>};
  t["Ceil"] = {{}, importUnary<CeilOp>};
  t["Round"] = {{}, importUnary<RoundOp>};
  t["Sin"] = {{}, importUnary<SinOp>};
  t["Cos"] = {{}, importUnary<CosOp>};
  t["Atan"] = {{}, importUnary<AtanOp>};
  t["Softplus"] = {{}, importUnary<SoftplusOp>};
  t["Gelu"] = {{"approximate"}, importGelu};
  for (const char *fn : {"Tan", "Asin", "Acos", "Sinh", "Cosh", "Asinh",
                         "Acosh", "Atanh", "Reciprocal", "Softsign",
                         "HardSwish", "Sign", "IsNaN"})
    t[fn] = {{}, [](NodeImporter &n) { return importMath(n, n.opType()); }};

  t["Elu"] = {{"alpha"}, importElu};
  t["Selu"] = {{"alpha", "gamma"}, importSelu};
  t["Celu"] = {{"alpha"}, importCelu};
  t["LeakyRelu"] = {{"alpha"}, importLeakyRelu};
  t["PRelu"] = {{}, importPRelu};
  t["ThresholdedRelu"] = {{"alpha"}, importThresholdedRelu};
  t["HardSigmoid"] = {{"alpha", "beta"}, importHardSigmoid};
  t["Shrink"] = {{"bias", "lambd"}, importShrink};
}

} // namespace dlc::onnximport
