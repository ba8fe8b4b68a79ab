//===- HostCores.cpp - How many threads a process's kernels should use ----===//

#include "runtime/base/HostCores.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <thread>

namespace dlc::rt {

/// The positive integer in variable `name`, or 0 (unset, empty, not a
/// number, not positive).
static int positiveVariable(const EnvironmentLookup &env, const char *name) {
  const char *text = env ? env(name) : std::getenv(name);
  if (!text || !*text)
    return 0;
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno == 0 && *end == '\0' && v > 0 && v <= INT_MAX)
    return static_cast<int>(v);
  return 0;
}

int ranksOnThisHost(const EnvironmentLookup &env) {
  for (const char *name : {"DLC_LOCAL_WORLD_SIZE", "LOCAL_WORLD_SIZE",
                           "OMPI_COMM_WORLD_LOCAL_SIZE"})
    if (int v = positiveVariable(env, name))
      return v;
  return 1;
}

int coresOfThisProcess() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int defaultDeviceThreads(const EnvironmentLookup &env) {
  if (int asked = positiveVariable(env, "DLC_NUM_THREADS"))
    return asked;
  int cores = coresOfThisProcess();
  int machine = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // A mask narrower than the machine is the launcher's share for this rank.
  if (cores < machine)
    return cores;
  return std::max(1, cores / ranksOnThisHost(env));
}

} // namespace dlc::rt
