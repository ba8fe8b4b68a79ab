//===- CommRegistry.cpp - A communicator by backend name ------------------===//

#include "runtime/comm/CommRegistry.h"

#include "runtime/comm/MpiComm.h"
#include "runtime/comm/SelfComm.h"
#include "runtime/comm/TcpComm.h"

namespace dlc::rt::comm {

Status createCommunicator(const std::string &backend, const LaunchInfo &launch,
                          std::unique_ptr<Communicator> *out) {
  std::string name = backend;
  // auto: a world of one needs nobody; mpirun's ranks talk through MPI;
  // a launch that names a rendezvous (torchrun's MASTER_ADDR/PORT) through
  // the TCP communicator; else MPI.
  if (name == "auto")
    name = launch.worldSize == 1                                ? "self"
           : launch.underMpirun                                 ? "mpi"
           : !launch.masterAddr.empty() && launch.masterPort > 0 ? "tcp"
                                                                : "mpi";
  if (name == "tcp") {
    std::unique_ptr<TcpComm> tcp;
    DLC_RETURN_IF_ERROR(TcpComm::create(launch, &tcp));
    *out = std::move(tcp);
    return okStatus();
  }
  if (name == "self") {
    if (launch.worldSize != 1)
      return invalidArgument("the self communicator is a world of one, but the launch (",
                             launch.source, ") says ", launch.worldSize, " ranks");
    std::chrono::milliseconds timeout;
    DLC_RETURN_IF_ERROR(defaultCollectiveTimeout(&timeout));
    auto self = std::make_unique<SelfComm>();
    self->setTimeout(timeout);
    *out = std::move(self);
    return okStatus();
  }
  if (name == "mpi") {
    std::unique_ptr<MpiComm> mpi;
    // A launch that names a world is checked against MPI's, on every rank.
    DLC_RETURN_IF_ERROR(MpiComm::create(&mpi, &launch));
    *out = std::move(mpi);
    return okStatus();
  }
  return invalidArgument("communicator '", backend, "': expected auto, self, mpi or tcp");
}

} // namespace dlc::rt::comm
