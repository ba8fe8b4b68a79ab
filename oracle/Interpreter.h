//===- Interpreter.h - the float64 oracle: evaluates dlc IR -----*- C++ -*-===//
//
// The reference executor of DESIGN §4. It walks a graph op by op and calls
// the plain kernels of oracle/kernels, which accumulate in float64 and round
// each result to its declared dtype. Deliberately simple and slow: every
// backend, pass and importer is tested against it.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_ORACLE_INTERPRETER_H
#define DLC_ORACLE_INTERPRETER_H

#include "oracle/kernels/Tensor.h"
#include "support/ParamSpec.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

#include <vector>

namespace mlir::func {
class FuncOp;
}

namespace dlc::oracle {

/// Evaluates `func` on `inputs` (in argument order; their dtypes and shapes
/// must match the signature). Parameters come from `params` when present
/// there and are materialised (ir/ParamSpec.h) and added otherwise, so a
/// caller can save them or reuse them across runs. A data-dependent
/// failure (an index out of range, ...) is emitted as an error at the
/// location of the op that failed.
mlir::FailureOr<std::vector<Tensor>> evaluate(mlir::func::FuncOp func,
                                              const std::vector<Tensor> &inputs,
                                              ParamStore &params);

/// Evaluates one op (not a region) given its operands' values in order.
/// Compile-time folding uses this; errors are emitted at the op.
mlir::FailureOr<Tensor> evaluateOp(mlir::Operation *op,
                                   const std::vector<Tensor> &operands,
                                   ParamStore &params);

} // namespace dlc::oracle

#endif // DLC_ORACLE_INTERPRETER_H
