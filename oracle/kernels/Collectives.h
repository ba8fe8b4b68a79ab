//===- Collectives.h - the collectives' semantics over a group ---*- C++ -*-===//
//
// What each collective gives every member of a group, given every member's
// operand in group order: the definition the SPMD simulation (oracle/Spmd.h)
// uses and the runtime's comm must match. Reductions accumulate in double in
// group order and round once to the dtype (avg: the sum divided by the group
// size). Plain C++, no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_ORACLE_KERNELS_COLLECTIVES_H
#define DLC_ORACLE_KERNELS_COLLECTIVES_H

#include "oracle/kernels/Tensor.h"

#include <vector>

namespace dlc::oracle {

enum class CollectiveKind { Sum, Max, Min, Avg };

/// One result per member: the element-wise reduction of all operands.
std::vector<Tensor> allReduce(const std::vector<Tensor> &group, CollectiveKind kind);
/// One result per member: the operands concatenated along `axis`.
std::vector<Tensor> allGather(const std::vector<Tensor> &group, int64_t axis);
/// Member i: block i (of group size) along `axis` of the reduction.
std::vector<Tensor> reduceScatter(const std::vector<Tensor> &group,
                                  CollectiveKind kind, int64_t axis);
/// Member i: block i along `splitAxis` of every member, concatenated along
/// `concatAxis` in group order.
std::vector<Tensor> allToAll(const std::vector<Tensor> &group, int64_t splitAxis,
                             int64_t concatAxis);
/// Every member: member `root`'s operand.
std::vector<Tensor> broadcast(const std::vector<Tensor> &group, int64_t root);
/// Block `index` of `count` along `axis` (count divides the dimension).
Tensor block(const Tensor &x, int64_t axis, int64_t index, int64_t count);

} // namespace dlc::oracle

#endif // DLC_ORACLE_KERNELS_COLLECTIVES_H
