//===- ElementwiseOps.cpp - shape rules of the element-wise ops -----------===//
//
// Unary ops keep their operand's type; binary ops, comparisons and select
// broadcast their operands by NumPy's rules and require one element type.
//
//===----------------------------------------------------------------------===//

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"

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
