//===- OpVocabulary.h - the dialect's ops as .dlg calls them ----*- C++ -*-===//
//
// Internal to frontend/text. What tools/dlc-tblgen reads from ir/DlcOps.td
// for every op a .dlg file may call: its operands and its attributes, which
// are the call's keywords by their ODS names, kinds and defaults. The tables
// are generated at build time (OpVocabulary.inc in the build tree); from them
// alone `buildFromOds` turns a call into the op. OpTable.cpp puts the
// hand-written surface sugar (slices, reshape with -1, ...) in front.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_TEXT_OPVOCABULARY_H
#define DLC_FRONTEND_TEXT_OPVOCABULARY_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace dlc::dlg {

class CallBuilder;

enum class OdsArity { Single, Optional, Variadic };

struct OdsOperand {
  const char *name;
  OdsArity arity;
  /// Operands of one group share their ODS type constraint: a bare number
  /// among them takes the element type of a tensor among them.
  unsigned group;
};

/// How a keyword's value is written and which attribute it becomes.
enum class OdsAttrKind {
  Bool,        // true, false
  I32,         // an integer or a dimension name, in 32 bits
  I64,         // an integer or a dimension name
  F32,         // a number, in 32 bits
  F64,         // a number
  I64Array,    // a list of integers or dimension names (or one of them)
  String,      // "text"
  Enum,        // one of the cases, as a name or a string
  Unsupported, // no .dlg spelling
};

struct OdsEnumCase {
  const char *name;
  int64_t value;
};

struct OdsAttr {
  const char *name;
  OdsAttrKind kind;
  /// Neither optional nor defaulted in ODS: a call must give it.
  bool required;
  /// The ODS default as written there (C++), and its attribute, built by
  /// the call ODS uses; both null without a default.
  const char *defaultValue;
  mlir::Attribute (*buildDefault)(mlir::Builder &);
  /// An enum's cases, and the attribute of a case's value.
  llvm::ArrayRef<OdsEnumCase> cases;
  mlir::Attribute (*buildEnum)(mlir::Builder &, int64_t);
};

struct OdsOp {
  /// `dlc.softmax`, and `softmax`: the name a .dlg file calls.
  const char *name;
  const char *mnemonic;
  llvm::ArrayRef<OdsOperand> operands;
  llvm::ArrayRef<OdsAttr> attrs;
  unsigned numResults;
  bool variadicResults;
  unsigned numRegions;
  /// The op has AttrSizedOperandSegments: the builder adds the sizes.
  bool segmentedOperands;
};

/// Every op of the dialect that a .dlg file may call, by name.
llvm::ArrayRef<const OdsOp *> callableOps();
/// The ops whose ODS says `let dlgCallable = 0` (`dlc.param`, ...).
llvm::ArrayRef<const char *> notCallableOps();

/// Why `op` cannot be built from a call by `buildFromOds` (no shape
/// inference, regions, a required attribute with no .dlg spelling, ...), or
/// an empty string when it can.
std::string whyNotBuildable(const OdsOp &op, mlir::MLIRContext &context);

/// Builds the op of `call.spec.ods` from the call: positional arguments
/// fill the operands in order, keywords the attributes of the same name
/// (converted by kind, ODS defaults for those not given), and the op's shape
/// inference gives the result type.
mlir::FailureOr<mlir::Value> buildFromOds(CallBuilder &call);

} // namespace dlc::dlg

#endif // DLC_FRONTEND_TEXT_OPVOCABULARY_H
