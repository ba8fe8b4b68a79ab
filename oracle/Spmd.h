//===- Spmd.h - the oracle runs an SPMD program on every rank of a mesh -*- C++ -*-===//
//
// A partitioned program is one function every rank runs (SPMD): the same
// ops, each rank on its own values, joined by collectives. The oracle runs
// it for all ranks of a mesh in one process, in lockstep, op by op: an
// ordinary op is evaluated per rank (oracle::evaluateOp); a collective takes
// the operands of every rank of each of its groups and gives each rank its
// result (oracle/kernels/Collectives.h); `dlc.shard` keeps the rank's block.
// So a partitioned program is checked against the unpartitioned one with no
// process, library or device.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_ORACLE_SPMD_H
#define DLC_ORACLE_SPMD_H

#include "oracle/kernels/Tensor.h"
#include "support/Mesh.h"
#include "support/ParamSpec.h"

#include "mlir/Support/LogicalResult.h"

#include <vector>

namespace mlir {
class Operation;
namespace func {
class FuncOp;
}
} // namespace mlir

namespace dlc::oracle {

/// The collective `op` over one group: `operands` are its members' operands
/// in group order, the result each member's result (`dlc.shard`: member i
/// keeps block i). Reductions accumulate in double in group order, so the
/// result does not depend on how the members are spread over processes:
/// what `dlc train --deterministic` runs on ranks. Throws EvalError.
std::vector<Tensor> collectiveOverGroup(mlir::Operation *op,
                                        const std::vector<Tensor> &operands);

/// Evaluates `func` on every rank of `mesh`: `inputs[r]` are rank r's
/// arguments; the result's [r] its results. Parameters are materialised
/// once and shared (every rank starts from the same values, as a broadcast
/// at start-up gives them). A collective whose group size disagrees with
/// the mesh, or a failing op, is an error at its location.
mlir::FailureOr<std::vector<std::vector<Tensor>>>
evaluateSpmd(mlir::func::FuncOp func, const Mesh &mesh,
             const std::vector<std::vector<Tensor>> &inputs, ParamStore &params);

} // namespace dlc::oracle

#endif // DLC_ORACLE_SPMD_H
