//===- Launch.h - Rank and world size of this process -----------*- C++ -*-===//
//
// Where a process learns its place in a job (DESIGN §7), read in a fixed
// order, the first source that is present wins:
//   1. explicit values (the tools' --rank/--world-size/--local-rank),
//   2. DLC_RANK, DLC_WORLD_SIZE, DLC_LOCAL_RANK,
//   3. torchrun's RANK, WORLD_SIZE, LOCAL_RANK (and MASTER_ADDR/MASTER_PORT),
//   4. Open MPI's OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK,
//   5. Slurm's SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
//   6. else a single process (rank 0 of 1).
// A source is present when its rank or its world size is set; it must then
// give both (a half-set source is an error, not a fall-through), as
// integers with 0 <= rank < world size. A missing local rank is the rank
// (one node assumed).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/Status.h"

#include <functional>
#include <optional>
#include <string>

namespace dlc::rt::comm {

struct LaunchInfo {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  /// "explicit", "DLC", "torchrun", "Open MPI", "Slurm" or "single process".
  std::string source = "single process";
  /// The rendezvous of a torchrun or DLC_* launch (MASTER_ADDR and
  /// MASTER_PORT; empty / 0 elsewhere): where the tcp communicator meets
  /// (TcpComm.h). MPI needs neither.
  std::string masterAddr;
  int masterPort = 0;
  /// Whether the process was started by Open MPI's mpirun (the MPI
  /// communicator can only start there).
  bool underMpirun = false;
};

/// Values given on a command line; any set one makes the explicit source
/// present.
struct LaunchOverrides {
  std::optional<int> rank;
  std::optional<int> worldSize;
  std::optional<int> localRank;
};

/// The environment: nullptr for an unset variable. std::getenv by default;
/// tests pass a fake.
using Environment = std::function<const char *(const char *name)>;

Status readLaunchInfo(const LaunchOverrides &overrides, LaunchInfo *out,
                      const Environment &env = nullptr);

} // namespace dlc::rt::comm
