//===- Communicator.h - Collectives between the ranks of a job --*- C++ -*-===//
//
// What the executor needs to talk to the other ranks of an SPMD job (DESIGN
// §7 "Comm"): the rank, the world size, and the collectives the partitioner
// inserts (all-reduce, all-gather, reduce-scatter, all-to-all, broadcast,
// send/recv, barrier). No collective algorithm is written here: SelfComm is a
// world of one (every collective is a copy), MpiComm hands each call to Open
// MPI, NcclComm to NCCL, both loaded with dlopen.
//
// Every call is numbered (sequence(): 0, 1, 2, ... in the order this rank
// issues them, the same numbering on every rank of a correct program) and has
// a deadline, timeout() from the moment it is issued. A call that misses its
// deadline returns UNAVAILABLE naming the sequence number, the op, the element
// count and the rank; the communicator is then unusable (the peers' buffers
// may still be in flight) and the caller takes the job down with abort(3).
//
// Buffers are host pointers for SelfComm and MpiComm, device pointers on the
// communicator's CUDA stream for NcclComm. A communicator is used by one
// thread at a time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/Status.h"
#include "support/DType.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <cstdint>
#include <string>

namespace dlc::rt::comm {

using dlc::DType;

enum class ReduceOp { kSum, kMax, kMin, kAvg };
const char *reduceOpName(ReduceOp op);

enum class CollectiveKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kSend,
  kRecv,
  kBarrier,
};
/// "allreduce", "allgather", "reducescatter", "alltoall", "broadcast",
/// "send", "recv", "barrier".
const char *collectiveName(CollectiveKind kind);

/// The default deadline of a call: $DLC_COLLECTIVE_TIMEOUT seconds (a
/// positive number, fractions allowed), else 300 s. A bad value is an error.
Status defaultCollectiveTimeout(std::chrono::milliseconds *out);

/// One call as a backend sees it: validated, numbered, with its deadline.
/// `count` is per rank where the op moves one block per rank (allgather:
/// what each rank sends; reducescatter: what each rank receives; alltoall:
/// what each rank sends to each peer), else the buffer's element count.
struct Collective {
  CollectiveKind kind = CollectiveKind::kBarrier;
  uint64_t sequence = 0;
  const void *send = nullptr; ///< null for in-place ops (allreduce, broadcast)
  void *recv = nullptr;
  uint64_t count = 0;
  DType dtype = DType::F32;
  ReduceOp op = ReduceOp::kSum;
  int peer = -1; ///< send/recv: the other rank; broadcast: the root
  std::chrono::steady_clock::time_point deadline;
  /// Set by checkSchedule, so that errors say what the exchange was for.
  const char *purpose = nullptr;

  /// "collective #7 (allreduce sum, 1024 x f32)": how errors name a call.
  std::string describe() const;
};

class Communicator {
public:
  virtual ~Communicator() = default;

  /// "self", "mpi", "nccl".
  virtual const char *backend() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  std::chrono::milliseconds timeout() const { return timeout_; }
  /// The deadline of every later call (positive).
  void setTimeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  /// The number the next call will get.
  uint64_t sequence() const { return sequence_; }

  /// In place: `data` (count elements) becomes the reduction over all ranks.
  /// kAvg divides the sum by size() (integers: truncated toward zero).
  Status allReduce(void *data, uint64_t count, DType dtype, ReduceOp op);
  /// recv (size() * count elements) = every rank's send (count), by rank.
  Status allGather(const void *send, void *recv, uint64_t count, DType dtype);
  /// send holds size() blocks of count elements; block r reduced over all
  /// ranks lands in rank r's recv (count elements).
  Status reduceScatter(const void *send, void *recv, uint64_t count, DType dtype, ReduceOp op);
  /// Block p (count elements) of send goes to rank p, which stores it as
  /// block rank() of its recv.
  Status allToAll(const void *send, void *recv, uint64_t count, DType dtype);
  /// `data` (count elements) of rank `root` is copied to every rank's `data`.
  Status broadcast(void *data, uint64_t count, DType dtype, int root);
  /// Point to point with another rank (not this one); messages between two
  /// ranks arrive in the order they were sent.
  Status send(const void *data, uint64_t count, DType dtype, int peer);
  Status recv(void *data, uint64_t count, DType dtype, int peer);
  Status barrier();
  /// A send that may return before the peer has received it: `data` must
  /// stay valid and unchanged until waitSends() returns. A pipeline posts
  /// its sends, so that two stages sending to each other at once (one an
  /// activation, the other a gradient) never wait for each other. A
  /// backend that cannot post carries the send out at once.
  Status postSend(const void *data, uint64_t count, DType dtype, int peer);
  /// Completes every posted send (the first error is returned).
  Status waitSends();

  /// Start-up check that every rank will issue the same collectives in the
  /// same order (DESIGN §8): exchanges each rank's hash of its collective
  /// list (one allgather, numbered like any call) and fails, on every rank,
  /// with INVALID_MODULE naming `name`, the hashes and the ranks that differ.
  Status checkSchedule(uint64_t hash, const std::string &name);

  /// The ranks that give the same `color` (>= 0), as a communicator of
  /// their own, numbered by `key` then by rank (MPI_Comm_split): every rank
  /// of this one calls it, in the same order. How a collective over one
  /// axis of a 2-D mesh (the model axis of data=2,model=2) runs within its
  /// group instead of through the whole world. UNIMPLEMENTED where the
  /// backend has no such split (its callers then gather over the world).
  virtual Status split(int color, int key, std::unique_ptr<Communicator> *out);

  /// Takes the whole job down with `exitCode` (3 after a timeout): a world
  /// of one exits; MPI aborts every rank. Never returns.
  [[noreturn]] virtual void abort(int exitCode);

protected:
  Communicator();
  /// Polls a started call until it ends or its deadline passes, spinning
  /// first, then sleeping an eighth of the wait so far, up to 1 ms (so that ranks sharing
  /// cores leave them to the peers they wait for). `poll` returns nothing
  /// while the call runs, else how it ended; at the deadline `onTimeout`
  /// runs (to cancel the backend's call) and the timeout is returned,
  /// naming the call.
  Status pollUntilDeadline(const Collective &call,
                           const std::function<std::optional<Status>()> &poll,
                           const std::function<void()> &onTimeout);
  /// Runs one validated call (buffers not null where count > 0, peers in
  /// range, dtypes the op supports).
  virtual Status run(const Collective &call) = 0;
  /// Starts a validated send and returns (default: runs it).
  virtual Status post(const Collective &call) { return run(call); }
  /// Waits for every posted send.
  virtual Status completePosted() { return Status(); }
  /// Where checkSchedule exchanges host memory (NCCL: its MPI bootstrap).
  virtual Communicator &hostCommunicator() { return *this; }
  /// Whether `dtype` can be reduced (default: f32, f64, i32, i64, i8, u8).
  virtual bool reducible(DType dtype) const;

private:
  Status issue(Collective call, bool posted = false);

  std::chrono::milliseconds timeout_;
  uint64_t sequence_ = 0;
  /// Set once a call failed with a timeout: later calls fail at once.
  std::string broken_;
};

/// Calls `fn(T())` with the C++ element type of `dtype` when it is one the
/// host backends reduce (f32, f64, i32, i64, i8, u8); false otherwise.
template <typename F> bool withReducibleType(DType dtype, F &&fn) {
  switch (dtype) {
  case DType::F32: fn(float()); return true;
  case DType::F64: fn(double()); return true;
  case DType::I32: fn(int32_t()); return true;
  case DType::I64: fn(int64_t()); return true;
  case DType::I8: fn(int8_t()); return true;
  case DType::U8: fn(uint8_t()); return true;
  default: return false;
  }
}

/// Divides each of `count` elements by `divisor` in place (the kAvg step
/// after a sum, for backends without an average op).
void divideInPlace(void *data, uint64_t count, DType dtype, int divisor);

} // namespace dlc::rt::comm
