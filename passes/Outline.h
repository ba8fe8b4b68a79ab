//===- Outline.h - ops of a function as a function of their own -*- C++ -*-===//
//
// The runners that cut a function into pieces run each piece as a module
// of its own: SpmdProgram's segments between collectives, a pipeline's
// per-stage parts. This clones the ops into a new function whose
// arguments are the values they read from outside and whose results are
// the values others read, named `in<i>` and `out<i>` (the names a compiled
// module's signature needs).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_OUTLINE_H
#define DLC_PASSES_OUTLINE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace dlc {

/// A function `name` at `builder`'s insertion point computing `outputs`
/// from `inputs` by clones of `ops` (in their order; every value they read
/// is an input or computed by an earlier op of the list).
mlir::func::FuncOp outlineOps(mlir::OpBuilder &builder, mlir::Location loc, llvm::StringRef name,
                              llvm::ArrayRef<mlir::Value> inputs,
                              llvm::ArrayRef<mlir::Operation *> ops,
                              llvm::ArrayRef<mlir::Value> outputs);

} // namespace dlc

#endif // DLC_PASSES_OUTLINE_H
