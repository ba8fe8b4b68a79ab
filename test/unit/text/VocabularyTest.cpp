//===- VocabularyTest.cpp - every dialect op is in the .dlg vocabulary ----===//
//
// Walks the ops the dlc dialect registers: each one is callable from a .dlg
// file (by a hand-written entry, or by the one built from its ODS, which must
// then be buildable) or its ODS says `let dlgCallable = 0`. So a new op
// cannot be silently missing from the format.
//
//===----------------------------------------------------------------------===//

#include "frontend/text/GraphBuilder.h"
#include "frontend/text/MLIRGen.h"
#include "frontend/text/OpVocabulary.h"
#include "ir/DlcDialect.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace dlc::dlg;

namespace {

/// The registered ops of the dlc dialect.
std::vector<RegisteredOperationName> dialectOps(MLIRContext &context) {
  std::vector<RegisteredOperationName> ops;
  for (RegisteredOperationName op : context.getRegisteredOperations())
    if (op.getDialectNamespace() == dlc::DlcDialect::getDialectNamespace())
      ops.push_back(op);
  return ops;
}

StringRef mnemonic(StringRef opName) { return opName.split('.').second; }

bool markedNotCallable(StringRef opName) {
  return llvm::is_contained(notCallableOps(), opName);
}

TEST(Vocabulary, EveryDialectOpIsCallableOrMarkedNotCallable) {
  MLIRContext context;
  loadBuilderDialects(context);
  auto ops = dialectOps(context);
  EXPECT_GT(ops.size(), 40u);
  for (RegisteredOperationName op : ops) {
    std::string name = op.getStringRef().str();
    if (markedNotCallable(name))
      continue;
    const OpSpec *spec = lookupOp(mnemonic(name));
    if (!spec) {
      ADD_FAILURE() << name
                    << " is neither in the .dlg vocabulary nor marked "
                       "`let dlgCallable = 0` in its ODS";
      continue;
    }
    // A hand-written entry builds the op its own way; a generated one needs
    // what buildFromOds relies on.
    if (spec->ods)
      EXPECT_EQ(whyNotBuildable(*spec->ods, context), "")
          << name << " cannot be built from a .dlg call by its ODS alone: "
          << "give it a hand-written entry in frontend/text/OpTable.cpp";
  }
}

TEST(Vocabulary, GeneratedOpsAreTheDialectsCallableOps) {
  MLIRContext context;
  loadBuilderDialects(context);
  size_t callable = 0;
  for (RegisteredOperationName op : dialectOps(context))
    callable += !markedNotCallable(op.getStringRef());
  EXPECT_EQ(callableOps().size(), callable);
  for (const OdsOp *op : callableOps()) {
    EXPECT_TRUE(RegisteredOperationName::lookup(op->name, &context))
        << op->name;
    EXPECT_EQ(mnemonic(op->name), op->mnemonic);
    EXPECT_NE(lookupOp(op->mnemonic), nullptr) << op->name;
  }
}

TEST(Vocabulary, OpsMarkedNotCallableAreNotInTheVocabulary) {
  MLIRContext context;
  loadBuilderDialects(context);
  EXPECT_FALSE(notCallableOps().empty());
  for (StringRef name : notCallableOps()) {
    EXPECT_TRUE(RegisteredOperationName::lookup(name, &context)) << name.str();
    EXPECT_EQ(lookupOp(mnemonic(name)), nullptr) << name.str();
  }
}

TEST(Vocabulary, AnOpWithoutShapeInferenceIsNotBuildableFromItsOds) {
  // dlc.reshape's result type is its spec, which only the hand-written
  // entry's `shape=` gives: the check above would catch an op like it that
  // had no such entry.
  MLIRContext context;
  loadBuilderDialects(context);
  const OdsOp *const *reshape =
      llvm::find_if(callableOps(), [](const OdsOp *op) {
        return op->mnemonic == StringRef("reshape");
      });
  ASSERT_NE(reshape, callableOps().end());
  EXPECT_EQ(whyNotBuildable(**reshape, context),
            "it has no shape inference (InferTypeOpInterface) to type its "
            "result");
  EXPECT_EQ(lookupOp("reshape")->ods, nullptr);
}

/// Whether `attr` is what a keyword of `kind` builds.
bool hasKind(Attribute attr, OdsAttrKind kind) {
  switch (kind) {
  case OdsAttrKind::Bool: return isa<BoolAttr>(attr);
  case OdsAttrKind::I32:
  case OdsAttrKind::I64: {
    auto i = dyn_cast<IntegerAttr>(attr);
    return i && i.getType().isInteger(kind == OdsAttrKind::I64 ? 64 : 32);
  }
  case OdsAttrKind::F32:
  case OdsAttrKind::F64: {
    auto f = dyn_cast<FloatAttr>(attr);
    return f && f.getType().getIntOrFloatBitWidth() ==
                    (kind == OdsAttrKind::F64 ? 64u : 32u);
  }
  case OdsAttrKind::I64Array: return isa<DenseI64ArrayAttr>(attr);
  case OdsAttrKind::String: return isa<StringAttr>(attr);
  case OdsAttrKind::Enum:
  case OdsAttrKind::Unsupported: return bool(attr);
  }
  return false;
}

TEST(Vocabulary, DefaultsAndEnumCasesBuildAttributesOfTheirKind) {
  MLIRContext context;
  loadBuilderDialects(context);
  Builder b(&context);
  for (const OdsOp *op : callableOps()) {
    for (const OdsAttr &attr : op->attrs) {
      std::string what = std::string(op->name) + " " + attr.name;
      EXPECT_EQ(attr.buildDefault != nullptr, attr.defaultValue != nullptr)
          << what;
      if (attr.buildDefault)
        EXPECT_TRUE(hasKind(attr.buildDefault(b), attr.kind)) << what;
      EXPECT_EQ(attr.kind == OdsAttrKind::Enum, !attr.cases.empty()) << what;
      for (const OdsEnumCase &c : attr.cases)
        EXPECT_TRUE(attr.buildEnum(b, c.value)) << what << " " << c.name;
    }
  }
}

} // namespace
