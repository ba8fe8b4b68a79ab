//===- HostCores.h - How many threads a process's kernels should use -*- C++ -*-===//
//
// A CPU device's default thread count. Several ranks of a job on one host
// (mpirun -np 4, torchrun --nproc-per-node 4) must not each start a thread
// per core: four ranks of two threads each on two cores time-share them,
// and a rank waiting in a collective for a peer that is descheduled waits
// for its time slice (PyTorch's launcher sets OMP_NUM_THREADS=1 for the
// same reason). So the default is the cores this process may run on
// (its affinity mask, which mpirun's binding may already have narrowed),
// shared evenly among the ranks of the host when the mask is the whole
// machine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>

namespace dlc::rt {

/// The environment: nullptr for an unset variable (std::getenv by default).
using EnvironmentLookup = std::function<const char *(const char *name)>;

/// Processes of this job on this host: the first of DLC_LOCAL_WORLD_SIZE,
/// LOCAL_WORLD_SIZE (torchrun), OMPI_COMM_WORLD_LOCAL_SIZE (Open MPI) that
/// holds a positive integer, else 1.
int ranksOnThisHost(const EnvironmentLookup &env = nullptr);

/// The cores this process may run on (sched_getaffinity), at least 1.
int coresOfThisProcess();

/// The default thread count of a CPU device: DLC_NUM_THREADS when it holds a
/// positive integer (`dlc --threads N` sets it; OMP_NUM_THREADS's role),
/// else coresOfThisProcess(), divided
/// among ranksOnThisHost() when the process may run on every core of the
/// machine (not bound to a share of them), at least 1.
int defaultDeviceThreads(const EnvironmentLookup &env = nullptr);

} // namespace dlc::rt
