//===- DlcDialect.cpp - the dlc dialect's registration --------------------===//

#include "ir/DlcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dlc;

#include "ir/DlcDialect.cpp.inc"
#include "ir/DlcEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/DlcAttrs.cpp.inc"

void DlcDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ir/DlcAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "ir/DlcOps.cpp.inc"
      >();
}

Operation *DlcDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}
