//===- HostCollectives.h - a partitioned graph's collectives on host tensors -*- C++ -*-===//
//
// How SpmdProgram (driver/SpmdRunner.h) carries out the collectives of a
// partitioned graph between its compiled segments, on host tensors, through
// runtime/comm. Two forms:
//
//  - native: one rank per process; each collective (or a bucket of
//    all-reduces, packed into one buffer) is one call of the communicator,
//    whose library (MPI, NCCL) chooses the algorithm and so the order in
//    which the ranks' values are summed;
//  - in shard order (`dlc train --deterministic`): a process runs several
//    shards (virtual ranks) of the mesh; every collective gathers all the
//    shards' operands and evaluates the oracle's definition
//    (oracle::collectiveOverGroup: sums in double, in shard order, rounded
//    once), so the bits do not depend on how many processes there are.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_HOSTCOLLECTIVES_H
#define DLC_DRIVER_HOSTCOLLECTIVES_H

#include "support/HostTensor.h"
#include "support/Mesh.h"

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"

#include <string>
#include <vector>

namespace mlir {
class Operation;
}

namespace dlc {

namespace rt::comm {
class Communicator;
}

/// Block `index` of `count` along `axis` (count divides it), as a copy.
HostTensor blockOf(const HostTensor &x, int64_t axis, int64_t index, int64_t count);
/// `parts` (one shape but along `axis`) concatenated along `axis`.
HostTensor concatOf(const std::vector<HostTensor> &parts, int64_t axis);

/// The collectives `ops` (one, or all-reduces of one kind and dtype, which
/// go as one packed call) on this rank's operands `xs`, through `comm`; the
/// group is the whole world, in rank order. Sets `ys` and returns success,
/// or sets `error`.
mlir::LogicalResult communicate(llvm::ArrayRef<mlir::Operation *> ops,
                                const std::vector<HostTensor> &xs, std::vector<HostTensor> &ys,
                                rt::comm::Communicator &comm, std::string &error);

/// The collective `op` over the groups of `mesh` (of `comm.size() *
/// xs.size()` ranks, its shards): `xs` are this process's shards' operands
/// (ranks rank*V .. rank*V+V-1 of the mesh, V = xs.size()). Every shard's
/// operand is gathered, then each local shard's group result computed.
/// Sets `ys`, one result per local shard, or `error`. Also how collectives
/// over part of a mesh (a 2-D mesh's axis) run on ranks.
mlir::LogicalResult communicateInShardOrder(mlir::Operation *op, const Mesh &mesh,
                                            const std::vector<HostTensor> &xs,
                                            std::vector<HostTensor> &ys,
                                            rt::comm::Communicator &comm, std::string &error);

/// Every shard's block on every process: `blocks` are this process's
/// shards' (in order), `all` every process's, in mesh rank order.
mlir::LogicalResult gatherShards(const std::vector<HostTensor> &blocks,
                                 std::vector<HostTensor> &all, rt::comm::Communicator &comm,
                                 std::string &error);

/// The whole tensor split over `mesh` as `dims` says (per dimension, a
/// mesh axis or ""), from every rank's block `blocks` (mesh rank order):
/// along each split dimension, the blocks of the ranks at positions 0, 1,
/// ... of its axis, the other axes' coordinates 0.
HostTensor assembleBlocks(const std::vector<HostTensor> &blocks, const Mesh &mesh,
                          const std::vector<std::string> &dims);
/// Rank `rank`'s block of `whole` split over `mesh` as `dims` says.
HostTensor blockOfRank(const HostTensor &whole, const Mesh &mesh,
                       const std::vector<std::string> &dims, int64_t rank);

} // namespace dlc

#endif // DLC_DRIVER_HOSTCOLLECTIVES_H
