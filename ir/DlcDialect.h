//===- DlcDialect.h - the dlc dialect ---------------------------*- C++ -*-===//
//
// Include this to use the dialect: it brings in the ops, enums and attributes.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_IR_DLCDIALECT_H
#define DLC_IR_DLCDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ir/DlcInterfaces.h"

#include "ir/DlcDialect.h.inc"
#include "ir/DlcEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/DlcAttrs.h.inc"

#define GET_OP_CLASSES
#include "ir/DlcOps.h.inc"

#endif // DLC_IR_DLCDIALECT_H
