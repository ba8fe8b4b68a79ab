//===- ElementwiseOps.cpp - shape rules of the element-wise ops -----------===//
//
// Unary ops keep their operand's type; binary ops, comparisons and select
// broadcast their operands by NumPy's rules and require one element type.
//
//===----------------------------------------------------------------------===//

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"
#include "ir/Vjp.h"

using namespace mlir;
using namespace dlc;

LogicalResult dlc::inferUnaryType(std::optional<Location> loc,
                                  StringRef opName, Value x, bool floatOnly,
                                  SmallVectorImpl<Type> &types) {
  auto type = getRankedType(x);
  if (!type)
    return opError(loc, opName, "needs a ranked tensor operand");
  if (floatOnly && !isa<FloatType>(type.getElementType()))
    return opError(loc, opName, "needs a floating-point operand, got ",
                   formatType(type));
  if (type.getElementType().isInteger(1))
    return opError(loc, opName, "does not take i1 operands, got ",
                   formatType(type));
  types.push_back(type);
  return success();
}

// The unary family's ops get theirs from Dlc_UnaryOp; gelu has attributes.
LogicalResult GeluOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  return inferUnaryType(loc, getOperationName(), adaptor.getX(),
                        /*floatOnly=*/true, types);
}

/// The broadcast shape of `operands`, which share an element type unless
/// `sameElementType` is false; `names` label them in messages.
static FailureOr<SmallVector<int64_t>>
inferBroadcast(std::optional<Location> loc, StringRef opName,
               ArrayRef<Value> operands, ArrayRef<StringRef> names,
               bool sameElementType) {
  SmallVector<RankedTensorType> types;
  for (auto [value, name] : llvm::zip(operands, names)) {
    auto type = getRankedType(value);
    if (!type)
      return opError(loc, opName, "needs a ranked tensor ", name);
    types.push_back(type);
  }
  if (sameElementType)
    for (size_t i = 1; i < types.size(); ++i)
      if (types[i].getElementType() != types[0].getElementType())
        return opError(loc, opName, "element types differ: ", names[0], " is ",
                       formatType(types[0]), ", ", names[i], " is ",
                       formatType(types[i]), " (use cast to convert)");
  SmallVector<int64_t> shape(types[0].getShape());
  for (size_t i = 1; i < types.size(); ++i) {
    auto next = broadcastShapes(shape, types[i].getShape());
    if (!next) {
      if (types.size() == 2)
        return opError(loc, opName, "cannot broadcast ", formatType(types[0]),
                       " and ", formatType(types[1]));
      return opError(loc, opName, "cannot broadcast ", names[i], " ",
                     formatType(types[i]), " with shape ", formatShape(shape));
    }
    shape = *next;
  }
  return shape;
}

/// Binary arithmetic: same element type, broadcast shape, no i1.
static LogicalResult inferBinary(std::optional<Location> loc, StringRef opName,
                                 Value lhs, Value rhs,
                                 SmallVectorImpl<Type> &types) {
  auto shape = inferBroadcast(loc, opName, {lhs, rhs}, {"lhs", "rhs"},
                              /*sameElementType=*/true);
  if (failed(shape))
    return failure();
  Type element = getRankedType(lhs).getElementType();
  if (element.isInteger(1))
    return opError(loc, opName, "does not take i1 operands, got ",
                   formatType(lhs.getType()));
  types.push_back(RankedTensorType::get(*shape, element));
  return success();
}

#define DLC_BINARY_INFERENCE(OP)                                               \
  LogicalResult OP::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &types) {           \
    return inferBinary(loc, getOperationName(), adaptor.getLhs(),              \
                       adaptor.getRhs(), types);                               \
  }

DLC_BINARY_INFERENCE(AddOp)
DLC_BINARY_INFERENCE(DivOp)
DLC_BINARY_INFERENCE(MaxOp)
DLC_BINARY_INFERENCE(MinOp)
DLC_BINARY_INFERENCE(MulOp)
DLC_BINARY_INFERENCE(PowOp)
DLC_BINARY_INFERENCE(SubOp)
#undef DLC_BINARY_INFERENCE

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto shape = inferBroadcast(loc, getOperationName(),
                              {adaptor.getLhs(), adaptor.getRhs()},
                              {"lhs", "rhs"}, /*sameElementType=*/true);
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, IntegerType::get(context, 1)));
  return success();
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  StringRef opName = getOperationName();
  auto cond = getRankedType(adaptor.getCond());
  if (!cond)
    return opError(loc, opName, "needs a ranked tensor condition");
  if (!cond.getElementType().isInteger(1))
    return opError(loc, opName, "needs an i1 condition, got ",
                   formatType(cond));
  auto branches = inferBroadcast(
      loc, opName, {adaptor.getOnTrue(), adaptor.getOnFalse()},
      {"on_true", "on_false"}, /*sameElementType=*/true);
  if (failed(branches))
    return failure();
  auto shape = broadcastShapes(cond.getShape(), *branches);
  if (!shape)
    return opError(loc, opName, "cannot broadcast the condition ",
                   formatType(cond), " with the branches' shape ",
                   formatShape(*branches));
  types.push_back(RankedTensorType::get(
      *shape, getRankedType(adaptor.getOnTrue()).getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Scalar functions
//===----------------------------------------------------------------------===//

/// `gelu` (erf form) or `gelu_tanh`.
StringRef GeluOp::getScalarFunction() {
  return getApproximation() == GeluApproximation::tanh ? "gelu_tanh" : "gelu";
}

/// The predicate: `eq`, `ne`, `lt`, `le`, `gt`, `ge`.
StringRef CompareOp::getScalarFunction() {
  return stringifyComparePredicate(getPredicate());
}

//===----------------------------------------------------------------------===//
// Derivatives
//===----------------------------------------------------------------------===//
//
// g is the gradient of the result, x the operand, y the result. Gradients of
// broadcast operands are summed back to their shapes.

#define DLC_UNARY_VJP(OP, EXPR)                                                \
  LogicalResult OP::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,       \
                             SmallVectorImpl<Value> &grads) {                  \
    Value g = resultGrads[0], x = getX(), y = getResult();                     \
    (void)x;                                                                   \
    (void)y;                                                                   \
    grads.assign(1, g ? Value(EXPR) : Value());                                \
    return success();                                                          \
  }

/// sign(x): 1, -1 or 0 (JAX's derivative of |x| at 0 is 0).
static Value sign(VjpBuilder &b, Value x) {
  Value zero = b.like(x, 0);
  return b.select(b.compare(ComparePredicate::gt, x, zero), b.like(x, 1),
                  b.select(b.compare(ComparePredicate::lt, x, zero),
                           b.like(x, -1), zero));
}

DLC_UNARY_VJP(AbsOp, b.mul(g, sign(b, x)))
DLC_UNARY_VJP(AtanOp, b.div(g, b.add(b.like(x, 1), b.mul(x, x))))
DLC_UNARY_VJP(CosOp, b.neg(b.mul(g, b.create<SinOp>({x}))))
DLC_UNARY_VJP(ErfOp, b.mul(g, b.mul(b.like(x, 1.1283791670955126),
                                    b.exp(b.neg(b.mul(x, x))))))
DLC_UNARY_VJP(ExpOp, b.mul(g, y))
DLC_UNARY_VJP(LogOp, b.div(g, x))
DLC_UNARY_VJP(NegOp, b.neg(g))
DLC_UNARY_VJP(ReluOp, b.select(b.compare(ComparePredicate::gt, x, b.like(x, 0)),
                               g, b.like(g, 0)))
DLC_UNARY_VJP(RsqrtOp, b.mul(b.mul(g, b.like(y, -0.5)), b.mul(y, b.mul(y, y))))
DLC_UNARY_VJP(SigmoidOp, b.mul(g, b.mul(y, b.sub(b.like(y, 1), y))))
DLC_UNARY_VJP(SinOp, b.mul(g, b.create<CosOp>({x})))
DLC_UNARY_VJP(SoftplusOp, b.mul(g, b.create<SigmoidOp>({x})))
DLC_UNARY_VJP(SqrtOp, b.div(b.mul(g, b.like(y, 0.5)), y))
DLC_UNARY_VJP(TanhOp, b.mul(g, b.sub(b.like(y, 1), b.mul(y, y))))
#undef DLC_UNARY_VJP

/// silu(x) = x s(x): s (1 + x (1 - s)).
LogicalResult SiluOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                               SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0], x = getX();
  grads.assign(1, Value());
  if (!g)
    return success();
  Value s = b.create<SigmoidOp>({x});
  Value one = b.like(x, 1);
  grads[0] = b.mul(g, b.mul(s, b.add(one, b.mul(x, b.sub(one, s)))));
  return success();
}

/// erf form: Φ(x) + x φ(x); tanh form: differentiated as written.
LogicalResult GeluOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                               SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0], x = getX();
  grads.assign(1, Value());
  if (!g)
    return success();
  auto c = [&](double v) { return b.like(x, v); };
  Value x2 = b.mul(x, x);
  Value d;
  if (getApproximation() == GeluApproximation::tanh) {
    // u = k (x + a x^3), t = tanh u:
    // 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 a x^2)
    const double k = 0.7978845608028654, a = 0.044715;
    Value u = b.mul(c(k), b.add(x, b.mul(c(a), b.mul(x2, x))));
    Value t = b.create<TanhOp>({u});
    Value du = b.mul(c(k), b.add(c(1), b.mul(c(3 * a), x2)));
    d = b.add(b.mul(c(0.5), b.add(c(1), t)),
              b.mul(b.mul(c(0.5), x), b.mul(b.sub(c(1), b.mul(t, t)), du)));
  } else {
    Value cdf = b.mul(c(0.5), b.add(c(1), b.create<ErfOp>(
                                           {b.mul(x, c(0.7071067811865476))})));
    Value pdf = b.mul(c(0.3989422804014327), b.exp(b.mul(c(-0.5), x2)));
    d = b.add(cdf, b.mul(x, pdf));
  }
  grads[0] = b.mul(g, d);
  return success();
}

/// The gradients of a binary op's operands from their unreduced forms.
static LogicalResult binaryGrads(VjpBuilder &b, Operation *op, Value ga,
                                 Value gb, SmallVectorImpl<Value> &grads) {
  grads.assign({b.sumToShape(ga, op->getOperand(0).getType()),
                b.sumToShape(gb, op->getOperand(1).getType())});
  return success();
}

#define DLC_BINARY_VJP(OP, GA, GB)                                             \
  LogicalResult OP::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,       \
                             SmallVectorImpl<Value> &grads) {                  \
    Value g = resultGrads[0], x = getLhs(), z = getRhs(), y = getResult();     \
    (void)x;                                                                   \
    (void)z;                                                                   \
    (void)y;                                                                   \
    if (!g) {                                                                  \
      grads.assign(2, Value());                                                \
      return success();                                                        \
    }                                                                          \
    return binaryGrads(b, *this, GA, GB, grads);                               \
  }

DLC_BINARY_VJP(AddOp, g, g)
DLC_BINARY_VJP(SubOp, g, b.neg(g))
DLC_BINARY_VJP(MulOp, b.mul(g, z), b.mul(g, x))
DLC_BINARY_VJP(DivOp, b.div(g, z), b.neg(b.div(b.mul(g, y), z)))
DLC_BINARY_VJP(PowOp,
               b.mul(g, b.mul(z, b.create<PowOp>({x, b.sub(z, b.like(z, 1))}))),
               b.mul(g, b.mul(b.create<LogOp>({x}), y)))
#undef DLC_BINARY_VJP

/// max and min: the gradient goes to the chosen operand; ties share it
/// equally (as JAX does).
static LogicalResult chooserGrads(VjpBuilder &b, Operation *op, Value g,
                                  ComparePredicate wins,
                                  SmallVectorImpl<Value> &grads) {
  if (!g) {
    grads.assign(2, Value());
    return success();
  }
  Value x = op->getOperand(0), z = op->getOperand(1);
  Value zero = b.like(g, 0), half = b.mul(g, b.like(g, 0.5));
  Value tie = b.compare(ComparePredicate::eq, x, z);
  Value ga = b.select(b.compare(wins, x, z), g, b.select(tie, half, zero));
  Value gb = b.select(b.compare(wins, z, x), g, b.select(tie, half, zero));
  return binaryGrads(b, op, ga, gb, grads);
}

LogicalResult MaxOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                              SmallVectorImpl<Value> &grads) {
  return chooserGrads(b, *this, resultGrads[0], ComparePredicate::gt, grads);
}
LogicalResult MinOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                              SmallVectorImpl<Value> &grads) {
  return chooserGrads(b, *this, resultGrads[0], ComparePredicate::lt, grads);
}

/// Back to the operand's float type; nothing for an integer operand.
LogicalResult CastOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                               SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  Type from = getX().getType().getElementType();
  grads.assign(1, g && isa<FloatType>(from) ? b.cast(g, from) : Value());
  return success();
}

/// The condition gets nothing; each branch its elements.
LogicalResult SelectOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                 SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.assign(3, Value());
  if (!g)
    return success();
  Value zero = b.like(g, 0);
  grads[1] = b.sumToShape(b.select(getCond(), g, zero), getOnTrue().getType());
  grads[2] = b.sumToShape(b.select(getCond(), zero, g), getOnFalse().getType());
  return success();
}
