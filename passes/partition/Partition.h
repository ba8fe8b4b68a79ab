//===- Partition.h - one SPMD program per mesh from a graph ------*- C++ -*-===//
//
// The SPMD partitioner (docs/design/2026-11-26-partitioning.md §4): given a
// graph, a mesh and how its arguments are split, it gives every value a
// sharding by each op's rule (ShardingRuleOpInterface), forward through the
// graph, and rewrites the graph in place into the program every rank runs:
// local shapes, `dlc.shard` where a whole value must be split, `all_gather`
// where a split one must be whole, `all_reduce` where a partial value (a
// split contraction's sum, a split reduction) meets an op that needs it
// complete. The function's arguments stay global (every rank is given the
// whole input and keeps its part); its results are whole on every rank.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_PARTITION_PARTITION_H
#define DLC_PASSES_PARTITION_PARTITION_H

#include "support/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"

#include <map>
#include <string>
#include <vector>

namespace dlc {

/// `--parallel data,tensor`: how the partitioner splits what the graph does
/// not say (none, one, or both).
struct ParallelPreset {
  /// Every argument's leading (batch) dimension over the mesh axis `data`.
  bool data = false;
  /// Megatron: a matmul whose right operand is a parameter and whose left
  /// one is not split along K splits the parameter's columns over `model`
  /// (column-parallel); the next one, reading those columns, splits its
  /// rows (row-parallel) and its partial sums meet in one all_reduce.
  bool tensor = false;
  /// The mesh axis `pipe` cuts the graph into stages (passes/partition/
  /// Pipeline.h) instead of partitioning it; the driver runs them.
  bool pipeline = false;
};

struct PartitionOptions {
  Mesh mesh;
  ParallelPreset preset;
  /// Per argument name (`dlc.name`): per dimension, a mesh axis or "".
  std::map<std::string, std::vector<std::string>> argShardings;
  /// Split arguments arrive split: each rank is given its block (a data
  /// loader's shard of the batch) instead of the whole value to `shard`.
  bool localArguments = false;
  /// Per state name (`dlc.state`): per dimension, a mesh axis or "": the
  /// state arrives and leaves split that way, each rank keeping its block
  /// between steps (with localArguments).
  std::map<std::string, std::vector<std::string>> stateShardings;
  /// With the tensor preset and localArguments: partitionFunction fills
  /// stateShardings for the parameters the preset splits and their
  /// optimizer moments, so that tensor parallelism divides their memory,
  /// as Megatron's does, instead of slicing whole copies every step and
  /// gathering the update. For callers that keep split state between steps
  /// (`dlc train` on ranks, and `dlc plan` predicting it).
  bool splitParameterState = false;
  /// ZeRO stage 1 on the `data` axis: a train step's optimizer moments
  /// (state `P.m` of a parameter state `P`) are split along their first
  /// dimension where the axis divides it, arrive and leave split (each rank
  /// keeps its block), so their gradients are reduce-scattered, each rank
  /// updates its block of the parameter, and the parameters are
  /// all-gathered.
  bool shardOptimizerState = false;
};

/// Rewrites `func` into its SPMD program on `options.mesh` and records the
/// mesh on its module (`dlc.mesh`). Errors (an unknown axis, an op without
/// a rule) are emitted at their location.
mlir::LogicalResult partitionFunction(mlir::func::FuncOp func,
                                      const PartitionOptions &options);

/// The hash of `func`'s ordered list of collectives (op, attributes,
/// types), which the partitioner stamps as `dlc.collective_schedule`: ranks
/// exchange it when their communicator starts (runtime/comm's
/// checkSchedule), so two ranks that would issue different collectives
/// fail at start-up, naming both hashes, instead of hanging.
uint64_t collectiveScheduleHash(mlir::func::FuncOp func);

/// "data", "tensor", "pipeline", combined with commas, or "none"; nullopt
/// for another word.
std::optional<ParallelPreset> parseParallelPreset(const std::string &name);

} // namespace dlc

#endif // DLC_PASSES_PARTITION_PARTITION_H
