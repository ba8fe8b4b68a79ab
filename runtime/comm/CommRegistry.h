//===- CommRegistry.h - A communicator by backend name ----------*- C++ -*-===//
//
// "self" (a world of one), "mpi" (Open MPI through dlopen), "tcp" (a star
// through rank 0 at MASTER_ADDR:MASTER_PORT, for torchrun-style launches:
// TcpComm.h) or "auto": self when the launch (Launch.h) says one process,
// mpi under mpirun, tcp when the launch names a rendezvous, else mpi. NCCL
// communicators are made over one of these (NcclComm::create), as they
// need a device.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/comm/Communicator.h"
#include "runtime/comm/Launch.h"

#include <memory>
#include <string>

namespace dlc::rt::comm {

/// Fails with INVALID_ARGUMENT for an unknown name or when MPI's world
/// disagrees with the launch's (rank or size); UNAVAILABLE when MPI cannot
/// be loaded or started.
Status createCommunicator(const std::string &backend, const LaunchInfo &launch,
                          std::unique_ptr<Communicator> *out);

} // namespace dlc::rt::comm
