//===- Launch.cpp - Rank and world size of this process -------------------===//

#include "runtime/comm/Launch.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace dlc::rt::comm {

namespace {

struct Source {
  const char *name;
  const char *rank;
  const char *size;
  const char *localRank;
};

constexpr Source kSources[] = {
    {"DLC", "DLC_RANK", "DLC_WORLD_SIZE", "DLC_LOCAL_RANK"},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

Status parseInt(const char *what, const char *text, int *out) {
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < 0 || v > INT_MAX)
    return invalidArgument(what, "='", text, "': expected a non-negative integer");
  *out = static_cast<int>(v);
  return okStatus();
}

Status validate(LaunchInfo *info, const std::string &rankName, const std::string &sizeName) {
  if (info->worldSize < 1)
    return invalidArgument(sizeName, "=", info->worldSize, ": the world size must be at least 1");
  if (info->rank >= info->worldSize)
    return invalidArgument(rankName, "=", info->rank, " is not below ", sizeName, "=",
                           info->worldSize);
  return okStatus();
}

} // namespace

Status readLaunchInfo(const LaunchOverrides &overrides, LaunchInfo *out, const Environment &env) {
  auto get = [&](const char *name) -> const char * {
    const char *v = env ? env(name) : std::getenv(name);
    return v && *v ? v : nullptr;
  };
  LaunchInfo info;
  info.underMpirun = get("OMPI_COMM_WORLD_SIZE") != nullptr;

  if (overrides.rank || overrides.worldSize || overrides.localRank) {
    if (!overrides.rank || !overrides.worldSize)
      return invalidArgument("--rank and --world-size must be given together");
    info.source = "explicit";
    info.rank = *overrides.rank;
    info.worldSize = *overrides.worldSize;
    info.localRank = overrides.localRank.value_or(info.rank);
    if (info.rank < 0 || info.localRank < 0)
      return invalidArgument("--rank and --local-rank must not be negative");
    DLC_RETURN_IF_ERROR(validate(&info, "--rank", "--world-size"));
    *out = info;
    return okStatus();
  }

  for (const Source &s : kSources) {
    const char *rank = get(s.rank), *size = get(s.size), *local = get(s.localRank);
    if (!rank && !size)
      continue;
    if (!rank || !size)
      return invalidArgument(s.name, " launch: ", rank ? s.rank : s.size, " is set but ",
                             rank ? s.size : s.rank, " is not");
    info.source = s.name;
    DLC_RETURN_IF_ERROR(parseInt(s.rank, rank, &info.rank));
    DLC_RETURN_IF_ERROR(parseInt(s.size, size, &info.worldSize));
    info.localRank = info.rank;
    if (local)
      DLC_RETURN_IF_ERROR(parseInt(s.localRank, local, &info.localRank));
    DLC_RETURN_IF_ERROR(validate(&info, s.rank, s.size));
    // The rendezvous of launches without MPI (torchrun sets it; a DLC_*
    // launch may).
    if (info.source == "torchrun" || info.source == "DLC") {
      if (const char *addr = get("MASTER_ADDR"))
        info.masterAddr = addr;
      if (const char *port = get("MASTER_PORT"))
        DLC_RETURN_IF_ERROR(parseInt("MASTER_PORT", port, &info.masterPort));
    }
    *out = info;
    return okStatus();
  }
  *out = info;
  return okStatus();
}

} // namespace dlc::rt::comm
