//===- DlgVocabularyGen.cpp - the .dlg op vocabulary from ODS -------------===//
//
// For every op of the dialect that a .dlg file may call (all but those whose
// ODS says `let dlgCallable = 0`), emits its mnemonic, its operands (name,
// single/optional/variadic, and a type group: operands with one ODS type
// constraint, from which a bare number takes its element type) and its
// attributes (name, kind, enum cases, whether a call must give it, and the
// ODS default with the builder call ODS itself would use for it). The
// result is C++ tables for frontend/text/OpVocabulary.cpp; their types are
// declared in frontend/text/OpVocabulary.h.
//
// Only what ODS states is read; traits and interfaces are not, so the
// generator does not change when an op gains one.
//
//===----------------------------------------------------------------------===//

#include "tools/dlc-tblgen/Backends.h"

#include "mlir/TableGen/Attribute.h"
#include "mlir/TableGen/Format.h"
#include "mlir/TableGen/Operator.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

#include <map>
#include <optional>

using llvm::Record;
using llvm::SmallVector;
using llvm::StringRef;
using mlir::tblgen::Attribute;
using mlir::tblgen::Operator;

namespace dlc::tblgen {

/// The enum an attribute stores: the attribute is an `EnumAttrInfo` itself
/// (an unspecialised I32EnumAttr) or wraps one (`EnumAttr<...>`'s `enum`).
static const Record *enumInfo(const Attribute &attr) {
  const Record &def = attr.getDef();
  if (def.isSubClassOf("EnumAttrInfo"))
    return &def;
  if (const llvm::RecordVal *field = def.getValue("enum"))
    if (auto *init = llvm::dyn_cast<llvm::DefInit>(field->getValue()))
      if (init->getDef()->isSubClassOf("EnumAttrInfo"))
        return init->getDef();
  return nullptr;
}

/// The bit width of an attribute's value type (I64Attr: 64), or 0.
static int64_t valueBitwidth(const Attribute &attr) {
  std::optional<mlir::tblgen::Type> type = attr.getValueType();
  if (!type || !type->getDef().getValue("bitwidth"))
    return 0;
  return type->getDef().getValueAsInt("bitwidth");
}

/// The `OdsAttrKind` enumerator of an attribute (without wrappers such as
/// DefaultValuedAttr).
static StringRef kindOf(const Attribute &attr) {
  if (enumInfo(attr))
    return "Enum";
  StringRef storage = attr.getStorageType().trim();
  int64_t width = valueBitwidth(attr);
  if (storage == "::mlir::BoolAttr")
    return "Bool";
  if (storage == "::mlir::IntegerAttr" && (width == 64 || width == 32))
    return width == 64 ? "I64" : "I32";
  if (storage == "::mlir::FloatAttr" && (width == 64 || width == 32))
    return width == 64 ? "F64" : "F32";
  if (storage == "::mlir::DenseI64ArrayAttr")
    return "I64Array";
  if (storage == "::mlir::StringAttr")
    return "String";
  return "Unsupported";
}

/// `text` as a C++ string literal.
static std::string quoted(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

/// A lambda that builds the attribute `call` (an ODS builder call with
/// `odsBuilder` for `$_builder`) from `params`.
static std::string lambda(StringRef params, StringRef call) {
  return ("[](::mlir::Builder &odsBuilder" + params +
          ") -> ::mlir::Attribute { return " + call + "; }")
      .str();
}

static void emitOp(const Operator &op, llvm::raw_ostream &os) {
  std::string prefix = ("k" + op.getCppClassName()).str();
  mlir::tblgen::FmtContext fmt;
  fmt.withBuilder("odsBuilder");

  // Operands, grouped by type constraint in order of first appearance.
  llvm::StringMap<unsigned> groups;
  if (op.getNumOperands() > 0) {
    os << "static const OdsOperand " << prefix << "Operands[] = {\n";
    for (const auto &operand : op.getOperands()) {
      StringRef arity = operand.isVariadic()   ? "Variadic"
                        : operand.isOptional() ? "Optional"
                                               : "Single";
      unsigned group =
          groups.try_emplace(operand.constraint.getDefName(), groups.size())
              .first->second;
      os << "  {" << quoted(operand.name) << ", OdsArity::" << arity << ", "
         << group << "},\n";
    }
    os << "};\n";
  }

  // Attributes: enum cases first, as the attribute table points at them.
  SmallVector<const mlir::tblgen::NamedAttribute *> attrs;
  // Unit attributes mark what a pass decided (conv2d's channels_last, the
  // CPU's layout): not keywords of the .dlg format.
  for (const auto &named : op.getAttributes())
    if (!named.attr.isDerivedAttr() &&
        named.attr.getStorageType().trim() != "::mlir::UnitAttr")
      attrs.push_back(&named);
  for (const auto *named : attrs) {
    const Record *info = enumInfo(named->attr.getBaseAttr());
    if (!info)
      continue;
    os << "static const OdsEnumCase " << prefix << "_" << named->name
       << "Cases[] = {";
    llvm::interleaveComma(mlir::tblgen::EnumAttr(info).getAllCases(), os,
                          [&](const mlir::tblgen::EnumAttrCase &c) {
                            os << "{" << quoted(c.getStr()) << ", "
                               << c.getValue() << "}";
                          });
    os << "};\n";
  }
  if (!attrs.empty()) {
    os << "static const OdsAttr " << prefix << "Attrs[] = {\n";
    for (const auto *named : attrs) {
      const Attribute &attr = named->attr;
      Attribute base = attr.getBaseAttr();
      StringRef kind = kindOf(base);
      bool required = !attr.hasDefaultValue() && !attr.isOptional();
      os << "  {" << quoted(named->name) << ", OdsAttrKind::" << kind
         << ", /*required=*/" << (required ? "true" : "false");
      if (attr.hasDefaultValue() && base.isConstBuildable()) {
        std::string value =
            mlir::tblgen::tgfmt(attr.getDefaultValue(), &fmt).str();
        os << ",\n   /*default=*/" << quoted(attr.getDefaultValue()) << ",\n   "
           << lambda("", mlir::tblgen::tgfmt(base.getConstBuilderTemplate(),
                                             &fmt, value)
                             .str());
      } else {
        os << ", /*default=*/nullptr, nullptr";
      }
      if (kind == "Enum") {
        std::string value =
            ("static_cast<" + base.getReturnType().trim() + ">(value)").str();
        os << ",\n   " << prefix << "_" << named->name << "Cases,\n   "
           << lambda(", int64_t value",
                     mlir::tblgen::tgfmt(base.getConstBuilderTemplate(), &fmt,
                                         value)
                         .str());
      } else {
        os << ", {}, nullptr";
      }
      os << "},\n";
    }
    os << "};\n";
  }

  bool segmented =
      op.getTrait("::mlir::OpTrait::AttrSizedOperandSegments") != nullptr;
  os << "static const OdsOp " << prefix << " = {"
     << quoted(op.getOperationName()) << ", "
     << quoted(op.getDef().getValueAsString("opName")) << ", "
     << (op.getNumOperands() ? prefix + "Operands" : "{}") << ", "
     << (attrs.empty() ? "{}" : prefix + "Attrs") << ", "
     << op.getNumResults() << ", "
     << (op.getNumVariableLengthResults() ? "true" : "false") << ", "
     << op.getNumRegions() << ", " << (segmented ? "true" : "false")
     << "};\n\n";
}

bool emitDlgVocabulary(const llvm::RecordKeeper &records, StringRef dialect,
                       llvm::raw_ostream &os) {
  llvm::emitSourceFileHeader("The .dlg op vocabulary of the '" +
                                 dialect.str() + "' dialect",
                             os, records);
  // By operation name (Operator cannot be sorted: it is not assignable).
  std::map<std::string, const Record *> callable, notCallable;
  for (const Record *def : records.getAllDerivedDefinitions("Op")) {
    Operator op(def);
    if (op.getDialectName() != dialect)
      continue;
    bool isCallable = !def->getValue("dlgCallable") ||
                      def->getValueAsBit("dlgCallable");
    (isCallable ? callable : notCallable)[op.getOperationName()] = def;
  }

  for (const auto &entry : callable)
    emitOp(Operator(entry.second), os);
  // std::array, which may be empty where a C array may not.
  os << "static const std::array<const OdsOp *, " << callable.size()
     << "> kCallableOps = {{\n";
  for (const auto &entry : callable)
    os << "  &k" << Operator(entry.second).getCppClassName() << ",\n";
  os << "}};\n\n";
  os << "static const std::array<const char *, " << notCallable.size()
     << "> kNotCallableOps = {{\n";
  for (const auto &entry : notCallable)
    os << "  " << quoted(entry.first) << ",\n";
  os << "}};\n";
  return false;
}

} // namespace dlc::tblgen
