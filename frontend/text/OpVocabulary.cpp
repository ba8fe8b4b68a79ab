//===- OpVocabulary.cpp - builds any dialect op from a .dlg call ----------===//
//
// The generated tables (OpVocabulary.inc, from ir/DlcOps.td) and the one
// builder that reads them: positional arguments fill the op's operands in
// ODS order, keywords its attributes of the same names, and the op's shape
// inference types the result. Errors are reported where the call, the
// argument or the keyword is, with the accessors of CallBuilder.cpp.
//
//===----------------------------------------------------------------------===//

#include "frontend/text/OpVocabulary.h"

#include "frontend/text/GraphBuilder.h"
#include "ir/DlcDialect.h"

#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

#include <array>

using namespace mlir;

namespace dlc::dlg {

#include "frontend/text/OpVocabulary.inc"

ArrayRef<const OdsOp *> callableOps() { return kCallableOps; }

ArrayRef<const char *> notCallableOps() { return kNotCallableOps; }

/// For each positional argument, the index of the ODS operand it fills:
/// single operands take one argument, optional ones one while arguments
/// are left over, a variadic one all the arguments left over. Fails when
/// `numArgs` does not fit.
static FailureOr<SmallVector<unsigned>> assignOperands(const OdsOp &op,
                                                       size_t numArgs) {
  size_t singles = llvm::count_if(op.operands, [](const OdsOperand &o) {
    return o.arity == OdsArity::Single;
  });
  if (numArgs < singles)
    return failure();
  size_t extra = numArgs - singles;
  SmallVector<unsigned> operandOf;
  for (auto [index, operand] : llvm::enumerate(op.operands)) {
    size_t take = 1;
    if (operand.arity == OdsArity::Optional)
      take = extra > 0 ? 1 : 0;
    else if (operand.arity == OdsArity::Variadic)
      take = extra;
    if (operand.arity != OdsArity::Single)
      extra -= take;
    operandOf.append(take, index);
  }
  if (extra != 0)
    return failure();
  return operandOf;
}

/// The sizes of the operand groups, for ops with AttrSizedOperandSegments.
static SmallVector<int32_t> segmentSizes(const OdsOp &op,
                                         ArrayRef<unsigned> operandOf) {
  SmallVector<int32_t> sizes(op.operands.size(), 0);
  for (unsigned index : operandOf)
    ++sizes[index];
  return sizes;
}

std::string whyNotBuildable(const OdsOp &op, MLIRContext &context) {
  auto name = RegisteredOperationName::lookup(op.name, &context);
  if (!name)
    return "it is not a registered op";
  if (!name->hasInterface<InferTypeOpInterface>())
    return "it has no shape inference (InferTypeOpInterface) to type its "
           "result";
  if (op.numResults != 1 || op.variadicResults)
    return "it does not have exactly one result";
  if (op.numRegions != 0)
    return "it has regions";
  if (llvm::count_if(op.operands, [](const OdsOperand &o) {
        return o.arity == OdsArity::Variadic;
      }) > 1)
    return "its variadic operands cannot be told apart by position";
  for (const OdsAttr &attr : op.attrs)
    if (attr.required && attr.kind == OdsAttrKind::Unsupported)
      return "its attribute '" + std::string(attr.name) +
             "' has no .dlg spelling";
  return "";
}

/// What a keyword of `attr`'s kind is written as, for messages.
static std::string describe(const OdsAttr &attr) {
  switch (attr.kind) {
  case OdsAttrKind::Bool: return "true or false";
  case OdsAttrKind::I32:
  case OdsAttrKind::I64: return "an integer";
  case OdsAttrKind::F32:
  case OdsAttrKind::F64: return "a number";
  case OdsAttrKind::I64Array: return "a list of integers";
  case OdsAttrKind::String: return "a string";
  case OdsAttrKind::Unsupported: return "a value";
  case OdsAttrKind::Enum: break;
  }
  std::string text = "one of ";
  for (auto [i, c] : llvm::enumerate(attr.cases))
    text += (i ? ", \"" : "\"") + std::string(c.name) + "\"";
  return text;
}

/// `value` as an attribute made by `make`, or the failure it holds.
template <typename T, typename Make>
static FailureOr<Attribute> then(FailureOr<T> value, Make make) {
  if (failed(value))
    return failure();
  return Attribute(make(*value));
}

/// The attribute of a keyword the call gives.
static FailureOr<Attribute> keywordValue(CallBuilder &call,
                                         const OdsAttr &attr) {
  Builder &b = call.graph.builder;
  StringRef name = attr.name;
  switch (attr.kind) {
  case OdsAttrKind::Bool:
    return then(call.boolKw(name, false),
                [&](bool v) { return b.getBoolAttr(v); });
  case OdsAttrKind::I64:
    return then(call.intKw(name, 0),
                [&](int64_t v) { return b.getI64IntegerAttr(v); });
  case OdsAttrKind::I32: {
    auto value = call.intKw(name, 0);
    if (succeeded(value) && (*value < INT32_MIN || *value > INT32_MAX))
      return call.error(call.keyword(name)->value.loc)
             << "keyword '" << name << "' needs a 32-bit integer, got "
             << *value;
    return then(value, [&](int64_t v) { return b.getI32IntegerAttr(v); });
  }
  case OdsAttrKind::F64:
    return then(call.floatKw(name, 0),
                [&](double v) { return b.getF64FloatAttr(v); });
  case OdsAttrKind::F32:
    return then(call.floatKw(name, 0),
                [&](double v) { return b.getF32FloatAttr(v); });
  case OdsAttrKind::I64Array:
    return then(call.intListKw(name, std::nullopt),
                [&](ArrayRef<int64_t> v) { return b.getDenseI64ArrayAttr(v); });
  case OdsAttrKind::String:
    return then(call.stringKw(name, std::nullopt),
                [&](StringRef v) { return b.getStringAttr(v); });
  case OdsAttrKind::Enum: {
    SmallVector<StringRef> names;
    for (const OdsEnumCase &c : attr.cases)
      names.push_back(c.name);
    return then(call.choiceKw(name, names, ""), [&](StringRef v) {
      return attr.buildEnum(b, llvm::find_if(attr.cases, [&](auto &c) {
                                 return v == c.name;
                               })->value);
    });
  }
  case OdsAttrKind::Unsupported:
    break;
  }
  return call.error(call.keyword(name)->value.loc)
         << "keyword '" << name << "' has no .dlg spelling";
}

FailureOr<Value> buildFromOds(CallBuilder &call) {
  const OdsOp &op = *call.spec.ods;
  std::string problem = whyNotBuildable(op, call.graph.context);
  auto operandOf = assignOperands(op, call.args.size());
  if (!problem.empty() || failed(operandOf))
    return call.error(call.loc())
           << "cannot be built from a call: "
           << (problem.empty() ? "its operands do not fit" : problem)
           << " (give it a hand-written entry in frontend/text/OpTable.cpp)";

  // A bare number takes the element type of a tensor of its operand group
  // (`x * 0.5`, `max(x, 0)`, `select(m, s, -1e9)`).
  std::map<unsigned, Type> groupType;
  std::map<unsigned, unsigned> groupArgs;
  for (auto [arg, index] : llvm::zip(call.args, *operandOf)) {
    unsigned group = op.operands[index].group;
    ++groupArgs[group];
    if (!arg.isNumber)
      groupType.try_emplace(group, getElementTypeOrSelf(arg.value.getType()));
  }
  SmallVector<Value> operands;
  for (auto [i, index] : llvm::enumerate(*operandOf)) {
    unsigned group = op.operands[index].group;
    auto type = groupType.find(group);
    if (call.args[i].isNumber && type == groupType.end() &&
        groupArgs[group] > 1)
      return call.error(call.loc())
             << (groupArgs[group] == 2 ? "both operands are"
                                       : "all its operands are")
             << " bare numbers, which have no type: compute the value by "
                "hand";
    auto value = type == groupType.end() ? call.tensorArg(i)
                                         : call.arg(i, type->second);
    if (failed(value))
      return failure();
    operands.push_back(*value);
  }

  Builder &b = call.graph.builder;
  SmallVector<NamedAttribute> attrs;
  for (const OdsAttr &attr : op.attrs) {
    if (!call.keyword(attr.name)) {
      if (attr.required)
        return call.error(call.loc()) << "needs the keyword '" << attr.name
                                      << "' (" << describe(attr) << ")";
      if (attr.buildDefault)
        attrs.push_back(b.getNamedAttr(attr.name, attr.buildDefault(b)));
      continue;
    }
    auto value = keywordValue(call, attr);
    if (failed(value))
      return failure();
    attrs.push_back(b.getNamedAttr(attr.name, *value));
  }
  if (op.segmentedOperands)
    attrs.push_back(b.getNamedAttr(
        "operandSegmentSizes",
        b.getDenseI32ArrayAttr(segmentSizes(op, *operandOf))));
  return call.graph.create(call.loc(), op.name, operands, attrs);
}

} // namespace dlc::dlg
