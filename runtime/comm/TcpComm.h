//===- TcpComm.h - Host collectives over TCP, for launches without MPI -*- C++ -*-===//
//
// A torchrun-style launch (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; or
// DLC_RANK/DLC_WORLD_SIZE with MASTER_ADDR/MASTER_PORT) has no MPI to
// start: this communicator is its rendezvous, as torch.distributed's TCP
// store is. Rank 0 listens on MASTER_PORT, every other rank connects to
// MASTER_ADDR:MASTER_PORT and says its rank; each collective then goes
// through rank 0 (a star: rank 0 gathers the operands, combines them in
// rank order, and sends every rank its result). That is what a bootstrap
// needs (NCCL's unique id, the start-up schedule check: a few bytes) and
// enough for CPU ranks of small jobs; large CPU jobs should use mpirun
// (MPI's algorithms). Send/recv go directly between the two ranks (every
// two ranks are connected at start-up).
//
// Every read and write waits at most until the call's deadline; a peer
// that closed its connection (it exited) fails the call at once, naming
// the rank, so a dead rank takes the others down (exit 3) without waiting
// for the timeout.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/comm/Communicator.h"
#include "runtime/comm/Launch.h"

#include <memory>
#include <vector>

namespace dlc::rt::comm {

class TcpComm final : public Communicator {
public:
  /// Connects the world of `launch` (which names MASTER_ADDR and
  /// MASTER_PORT); waits up to the default collective timeout for the
  /// other ranks. UNAVAILABLE naming the address when it cannot.
  static Status create(const LaunchInfo &launch, std::unique_ptr<TcpComm> *out);
  ~TcpComm() override;

  const char *backend() const override { return "tcp"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

protected:
  Status run(const Collective &call) override;

private:
  using Clock = std::chrono::steady_clock;
  TcpComm(int rank, int size) : rank_(rank), size_(size) {}
  /// After the star is up: a connection between every two ranks, for
  /// send/recv.
  Status connectPeers(Clock::time_point deadline);
  /// Rank 0: every rank's `bytes` (its own from `mine`) in `all`, rank
  /// order. Others: `mine` sent to rank 0.
  Status gather(const Collective &call, const void *mine, uint64_t bytes,
                std::vector<uint8_t> *all);
  Status sendTo(int peer, const Collective &call, const void *data, uint64_t bytes);
  Status recvFrom(int peer, const Collective &call, void *data, uint64_t bytes);
  /// Moves `bytes` to or from `peer` before the call's deadline.
  Status transfer(int peer, const Collective &call, void *data, uint64_t bytes, bool sending);

  int rank_, size_;
  /// The connection to each other rank (-1 for this one).
  std::vector<int> sockets_;
};

} // namespace dlc::rt::comm
