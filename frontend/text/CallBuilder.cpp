//===- CallBuilder.cpp - checked access to a call's arguments -------------===//
//
// Each accessor reports a wrong kind of value at the value's own location,
// naming the op and the keyword, so that errors in long calls point at the
// exact argument.
//
//===----------------------------------------------------------------------===//

#include "frontend/text/GraphBuilder.h"
#include "ir/ShapeUtils.h"

using namespace mlir;

namespace dlc::dlg {

// IR types print in the .dlg notation, as AST types do.
using dlc::formatType;

/// "an integer", "a string", ... for messages.
static const char *describe(const Attr &attr) {
  switch (attr.kind) {
  case Attr::Int: return "an integer";
  case Attr::Float: return "a number";
  case Attr::String: return "a string";
  case Attr::Bool: return "a boolean";
  case Attr::Ident: return "a name";
  case Attr::List: return "a list";
  }
  return "a value";
}

FailureOr<Value> CallBuilder::tensorArg(size_t i) {
  return graph.tensor(args[i], ("'" + call.callee + "'").c_str());
}

FailureOr<Value> CallBuilder::arg(size_t i, Type elementType) {
  return graph.materialize(args[i], elementType);
}

const KwArg *CallBuilder::keyword(StringRef name) const {
  for (const KwArg &kw : call.kwargs)
    if (kw.name == name)
      return &kw;
  return nullptr;
}

FailureOr<int64_t> CallBuilder::intKw(StringRef name, int64_t fallback) {
  const KwArg *kw = keyword(name);
  if (!kw)
    return fallback;
  if (kw->value.kind == Attr::Int)
    return kw->value.i;
  if (kw->value.kind == Attr::Ident) {
    Dim dim{kw->value.loc, kw->value.s};
    return graph.resolveDim(dim);
  }
  return error(kw->value.loc) << "keyword '" << name
                              << "' needs an integer, got "
                              << describe(kw->value);
}

FailureOr<int64_t> CallBuilder::requiredIntKw(StringRef name) {
  if (!keyword(name))
    return error(loc()) << "needs the keyword '" << name << "'";
  return intKw(name, 0);
}

FailureOr<double> CallBuilder::floatKw(StringRef name, double fallback) {
  const KwArg *kw = keyword(name);
  if (!kw)
    return fallback;
  if (kw->value.kind == Attr::Float)
    return kw->value.f;
  if (kw->value.kind == Attr::Int)
    return static_cast<double>(kw->value.i);
  if (kw->value.kind == Attr::Ident && kw->value.s == "inf")
    return std::numeric_limits<double>::infinity();
  return error(kw->value.loc) << "keyword '" << name
                              << "' needs a number, got "
                              << describe(kw->value);
}

FailureOr<bool> CallBuilder::boolKw(StringRef name, bool fallback) {
  const KwArg *kw = keyword(name);
  if (!kw)
    return fallback;
  if (kw->value.kind == Attr::Bool)
    return kw->value.b;
  return error(kw->value.loc) << "keyword '" << name
                              << "' needs true or false, got "
                              << describe(kw->value);
}

FailureOr<std::string>
CallBuilder::stringKw(StringRef name, std::optional<std::string> fallback) {
  const KwArg *kw = keyword(name);
  if (!kw) {
    if (fallback)
      return *fallback;
    return error(loc()) << "needs the keyword '" << name << "'";
  }
  if (kw->value.kind == Attr::String)
    return kw->value.s;
  return error(kw->value.loc) << "keyword '" << name
                              << "' needs a string, got "
                              << describe(kw->value);
}

FailureOr<std::string> CallBuilder::choiceKw(StringRef name,
                                             ArrayRef<StringRef> choices,
                                             StringRef fallback) {
  const KwArg *kw = keyword(name);
  if (!kw)
    return fallback.str();
  const Attr &v = kw->value;
  if ((v.kind == Attr::Ident || v.kind == Attr::String) &&
      llvm::is_contained(choices, v.s))
    return v.s;
  auto diag = error(v.loc) << "keyword '" << name << "' must be one of ";
  llvm::interleave(
      choices, [&](StringRef c) { diag << "\"" << c << "\""; },
      [&] { diag << ", "; });
  return diag << ", got " << formatAttr(v);
}

FailureOr<SmallVector<int64_t>>
CallBuilder::intListKw(StringRef name,
                       std::optional<SmallVector<int64_t>> fallback) {
  const KwArg *kw = keyword(name);
  if (!kw) {
    if (fallback)
      return *fallback;
    return error(loc()) << "needs the keyword '" << name << "'";
  }
  auto element = [&](const Attr &a) -> FailureOr<int64_t> {
    if (a.kind == Attr::Int)
      return a.i;
    if (a.kind == Attr::Ident)
      return graph.resolveDim(Dim{a.loc, a.s});
    return error(a.loc) << "keyword '" << name
                        << "' needs integers or dimension names, got "
                        << describe(a);
  };
  SmallVector<int64_t> values;
  if (kw->value.kind != Attr::List) {
    auto v = element(kw->value);
    if (failed(v))
      return failure();
    values.push_back(*v);
    return values;
  }
  for (const Attr &a : kw->value.list) {
    auto v = element(a);
    if (failed(v))
      return failure();
    values.push_back(*v);
  }
  return values;
}

FailureOr<SmallVector<int64_t>> CallBuilder::shapeKw(StringRef name) {
  auto shape = intListKw(name, std::nullopt);
  if (failed(shape))
    return failure();
  const Location &where = keyword(name)->value.loc;
  for (int64_t d : *shape)
    if (d < 0)
      return error(where) << "keyword '" << name
                          << "' needs sizes of at least 0, got "
                          << formatShape(*shape);
  if (failed(graph.checkShapeSize(where, *shape)))
    return failure();
  return shape;
}

FailureOr<Type> CallBuilder::dtypeKw(StringRef name,
                                     std::optional<Type> fallback) {
  const KwArg *kw = keyword(name);
  if (!kw) {
    if (fallback)
      return *fallback;
    return error(loc()) << "needs the keyword '" << name
                        << "' (an element type such as f16)";
  }
  if (kw->value.kind == Attr::Ident || kw->value.kind == Attr::String)
    if (Type type = graph.elementType(kw->value.s))
      return type;
  return error(kw->value.loc)
         << "keyword '" << name
         << "' needs an element type (f64, f32, f16, bf16, i64, i32, i8, u8, i1), got "
         << formatAttr(kw->value);
}

} // namespace dlc::dlg
