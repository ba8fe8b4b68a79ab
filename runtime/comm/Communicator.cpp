//===- Communicator.cpp - Validation, numbering and deadlines of calls ----===//

#include "runtime/comm/Communicator.h"

#include "runtime/base/HostCores.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <map>
#include <thread>
#include <vector>

#ifdef __linux__
#include <sys/prctl.h>
#endif

namespace dlc::rt::comm {

const char *reduceOpName(ReduceOp op) {
  switch (op) {
  case ReduceOp::kSum:
    return "sum";
  case ReduceOp::kMax:
    return "max";
  case ReduceOp::kMin:
    return "min";
  case ReduceOp::kAvg:
    return "avg";
  }
  return "?";
}

const char *collectiveName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::kAllReduce:
    return "allreduce";
  case CollectiveKind::kAllGather:
    return "allgather";
  case CollectiveKind::kReduceScatter:
    return "reducescatter";
  case CollectiveKind::kAllToAll:
    return "alltoall";
  case CollectiveKind::kBroadcast:
    return "broadcast";
  case CollectiveKind::kSend:
    return "send";
  case CollectiveKind::kRecv:
    return "recv";
  case CollectiveKind::kBarrier:
    return "barrier";
  }
  return "?";
}

Status defaultCollectiveTimeout(std::chrono::milliseconds *out) {
  *out = std::chrono::milliseconds(300 * 1000);
  const char *text = std::getenv("DLC_COLLECTIVE_TIMEOUT");
  if (!text || !*text)
    return okStatus();
  char *end = nullptr;
  errno = 0;
  double seconds = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !std::isfinite(seconds) || seconds <= 0 ||
      seconds > 1e9)
    return invalidArgument("DLC_COLLECTIVE_TIMEOUT='", text,
                           "': expected a positive number of seconds");
  *out = std::chrono::milliseconds(std::max<int64_t>(1, std::llround(seconds * 1000)));
  return okStatus();
}

std::string Collective::describe() const {
  std::string what = collectiveName(kind);
  if (kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter)
    what += strCat(" ", reduceOpName(op));
  if (kind == CollectiveKind::kBroadcast)
    what += strCat(" from root ", peer);
  if (kind == CollectiveKind::kSend)
    what += strCat(" to rank ", peer);
  if (kind == CollectiveKind::kRecv)
    what += strCat(" from rank ", peer);
  if (kind != CollectiveKind::kBarrier)
    what += strCat(", ", count, " x ", dtypeName(dtype));
  if (purpose)
    what += strCat(", ", purpose);
  return strCat("collective #", sequence, " (", what, ")");
}

Communicator::Communicator() {
  std::chrono::milliseconds t;
  // A bad DLC_COLLECTIVE_TIMEOUT is reported by the factories, which call
  // defaultCollectiveTimeout first; here it falls back to the default.
  if (!defaultCollectiveTimeout(&t).ok())
    t = std::chrono::milliseconds(300 * 1000);
  timeout_ = t;
}

bool Communicator::reducible(DType dtype) const {
  return withReducibleType(dtype, [](auto) {});
}

Status Communicator::issue(Collective call, bool posted) {
  call.sequence = sequence_++;
  call.deadline = std::chrono::steady_clock::now() + timeout_;
  auto fail = [&](StatusCode code, const std::string &why) {
    return Status(code, strCat("rank ", rank(), " of ", size(), ": ", call.describe(), ": ", why));
  };
  if (!broken_.empty())
    return fail(StatusCode::kUnavailable,
                strCat("the ", backend(), " communicator is unusable after ", broken_));
  bool reduces =
      call.kind == CollectiveKind::kAllReduce || call.kind == CollectiveKind::kReduceScatter;
  if (reduces && !reducible(call.dtype))
    return fail(StatusCode::kUnimplemented,
                strCat("the ", backend(), " communicator cannot reduce ", dtypeName(call.dtype)));
  if (call.kind == CollectiveKind::kSend || call.kind == CollectiveKind::kRecv) {
    if (call.peer < 0 || call.peer >= size())
      return fail(StatusCode::kInvalidArgument,
                  strCat("peer ", call.peer, " is not a rank of a world of ", size()));
    if (call.peer == rank())
      return fail(StatusCode::kInvalidArgument, "a rank cannot send to or receive from itself");
  }
  if (call.kind == CollectiveKind::kBroadcast && (call.peer < 0 || call.peer >= size()))
    return fail(StatusCode::kInvalidArgument,
                strCat("root ", call.peer, " is not a rank of a world of ", size()));
  // The largest buffer the call touches, in bytes, must be addressable.
  uint64_t blocks = 1;
  if (call.kind == CollectiveKind::kAllGather || call.kind == CollectiveKind::kReduceScatter ||
      call.kind == CollectiveKind::kAllToAll)
    blocks = static_cast<uint64_t>(size());
  uint64_t element = elementSize(call.dtype);
  if (call.count > (UINT64_MAX / 2) / element / blocks)
    return fail(StatusCode::kInvalidArgument, "the buffer size overflows");
  if (call.count > 0 && call.kind != CollectiveKind::kBarrier) {
    bool needsSend = call.kind == CollectiveKind::kAllGather ||
                     call.kind == CollectiveKind::kReduceScatter ||
                     call.kind == CollectiveKind::kAllToAll || call.kind == CollectiveKind::kSend;
    if (needsSend && !call.send)
      return fail(StatusCode::kInvalidArgument, "the send buffer is null");
    if (call.kind != CollectiveKind::kSend && !call.recv)
      return fail(StatusCode::kInvalidArgument, "the buffer is null");
  }
  Status status = posted ? post(call) : run(call);
  if (!status.ok() && status.code() == StatusCode::kUnavailable && broken_.empty())
    broken_ = call.describe() + " failed";
  return status;
}

/// One call's description (the fields a kind does not use stay default).
static Collective makeCall(CollectiveKind kind, const void *send, void *recv, uint64_t count,
                       DType dtype, ReduceOp op = ReduceOp::kSum, int peer = -1) {
  Collective c;
  c.kind = kind;
  c.send = send;
  c.recv = recv;
  c.count = count;
  c.dtype = dtype;
  c.op = op;
  c.peer = peer;
  return c;
}

Status Communicator::allReduce(void *data, uint64_t count, DType dtype, ReduceOp op) {
  return issue(makeCall(CollectiveKind::kAllReduce, nullptr, data, count, dtype, op));
}

Status Communicator::allGather(const void *send, void *recv, uint64_t count, DType dtype) {
  return issue(makeCall(CollectiveKind::kAllGather, send, recv, count, dtype));
}

Status Communicator::reduceScatter(const void *send, void *recv, uint64_t count, DType dtype,
                                   ReduceOp op) {
  return issue(makeCall(CollectiveKind::kReduceScatter, send, recv, count, dtype, op));
}

Status Communicator::allToAll(const void *send, void *recv, uint64_t count, DType dtype) {
  return issue(makeCall(CollectiveKind::kAllToAll, send, recv, count, dtype));
}

Status Communicator::broadcast(void *data, uint64_t count, DType dtype, int root) {
  return issue(makeCall(CollectiveKind::kBroadcast, nullptr, data, count, dtype, ReduceOp::kSum,
                    root));
}

Status Communicator::send(const void *data, uint64_t count, DType dtype, int peer) {
  return issue(makeCall(CollectiveKind::kSend, data, nullptr, count, dtype, ReduceOp::kSum, peer));
}

Status Communicator::recv(void *data, uint64_t count, DType dtype, int peer) {
  return issue(makeCall(CollectiveKind::kRecv, nullptr, data, count, dtype, ReduceOp::kSum, peer));
}

Status Communicator::postSend(const void *data, uint64_t count, DType dtype, int peer) {
  return issue(makeCall(CollectiveKind::kSend, data, nullptr, count, dtype, ReduceOp::kSum, peer),
               /*posted=*/true);
}

Status Communicator::waitSends() {
  Status status = completePosted();
  if (!status.ok() && status.code() == StatusCode::kUnavailable && broken_.empty())
    broken_ = "a posted send failed";
  return status;
}

Status Communicator::barrier() {
  return issue(makeCall(CollectiveKind::kBarrier, nullptr, nullptr, 0, DType::F32));
}

/// Makes this thread's sleeps end when asked. Linux lets a sleep run up to
/// the thread's timer slack late (50 us by default) so that wake-ups
/// batch; a collective's wait sleeps 20 us between polls, so each sleep
/// cost three times that, and a ZeRO step's chain of small collectives on
/// CPU ranks (reduce-scatter, update, all-gather) ran 27% slower.
static void preciseSleeps() {
#ifdef __linux__
  static thread_local bool set = [] {
    prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL); // 1 us
    return true;
  }();
  (void)set;
#endif
}

/// How long a wait polls before it starts to sleep: DLC_COMM_SPIN_US
/// (microseconds), 200 by default. A peer that joins within it costs no
/// sleep. Each stage of MPI's non-blocking collectives advances only
/// when a rank polls, so a sleep of 20 us or more (longer on a VM: the
/// vCPU halts) between polls paid once per stage: the MLP's data-parallel
/// step on two CPU ranks went from 0.77 to 0.39 ms, and with ZeRO-1
/// (reduce-scatter and all-gather, several stages each) from 1.05 to
/// 0.43 ms (the fastest of five runs each), with the GPT-2 block's steps
/// unchanged; on four ranks of two cores, yielding between polls, within
/// the runs' spread.
static std::chrono::microseconds spinBeforeSleeping() {
  const char *value = std::getenv("DLC_COMM_SPIN_US");
  char *end = nullptr;
  long us = value ? std::strtol(value, &end, 10) : -1;
  return std::chrono::microseconds(value && end != value && *end == 0 && us >= 0 ? us : 200);
}

Status Communicator::pollUntilDeadline(const Collective &call,
                                      const std::function<std::optional<Status>()> &poll,
                                      const std::function<void()> &onTimeout) {
  auto start = std::chrono::steady_clock::now();
  static const std::chrono::microseconds spin = spinBeforeSleeping();
  // Where the host's ranks outnumber its cores, the peer this rank waits
  // for may need this core: the spin yields to it between polls.
  static const bool oversubscribed =
      rt::ranksOnThisHost() > static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (uint64_t polls = 0;; ++polls) {
    if (std::optional<Status> ended = poll())
      return std::move(*ended);
    if (std::chrono::steady_clock::now() - start < spin) {
      if (oversubscribed)
        std::this_thread::yield();
      continue;
    }
    if (std::chrono::steady_clock::now() >= call.deadline) {
      onTimeout();
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g s", static_cast<double>(timeout().count()) / 1000.0);
      return unavailable("rank ", rank(), " of ", size(), ": ", call.describe(),
                         " timed out after ", limit,
                         ": a peer has not joined it (the deadline is DLC_COLLECTIVE_TIMEOUT, "
                         "default 300 s)");
    }
    if (polls >= 64) {
      // Sleep an eighth of the wait so far (20 us to 1 ms): a peer that
      // answers late costs at most about 1/8 more than its lateness, and a
      // long wait leaves the cores to the ranks it waits for.
      preciseSleeps();
      auto waited = std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::steady_clock::now() - start);
      std::this_thread::sleep_for(std::min(std::chrono::microseconds(1000),
                                           std::max(std::chrono::microseconds(20), waited / 8)));
    }
  }
}

Status Communicator::checkSchedule(uint64_t hash, const std::string &name) {
  Communicator &host = hostCommunicator();
  int n = host.size();
  std::vector<uint64_t> hashes(static_cast<size_t>(n));
  Collective c;
  c.kind = CollectiveKind::kAllGather;
  c.send = &hash;
  c.recv = hashes.data();
  c.count = 1;
  c.dtype = DType::I64;
  c.purpose = "the collective schedule check";
  // Run on the host communicator (numbered there); on a device
  // communicator the call still takes a number, so the numbering of the
  // executor's calls is the same on every backend.
  if (&host != this)
    ++sequence_;
  Status status = host.issue(c);
  if (!status.ok())
    return status;
  // Group the ranks by hash; rank 0's hash is the reference.
  std::map<uint64_t, std::vector<int>> byHash;
  for (int r = 0; r < n; ++r)
    byHash[hashes[static_cast<size_t>(r)]].push_back(r);
  if (byHash.size() == 1)
    return okStatus();
  auto hex = [](uint64_t v) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(v));
    return std::string(text);
  };
  auto ranks = [](const std::vector<int> &list) {
    std::string out = list.size() == 1 ? "rank " : "ranks ";
    for (size_t i = 0; i < list.size(); ++i)
      out += strCat(i ? "," : "", list[i]);
    return out;
  };
  std::string message = strCat("rank ", host.rank(), " of ", n, ": collective schedule '", name,
                               "' differs across ranks: ");
  uint64_t reference = hashes[0];
  message += strCat(ranks(byHash[reference]), " ", hex(reference));
  for (const auto &[h, list] : byHash)
    if (h != reference)
      message += strCat(" but ", ranks(list), " ", hex(h));
  message += " (the ranks would issue different collectives and hang)";
  return Status(StatusCode::kInvalidModule, message);
}

void Communicator::abort(int exitCode) { std::_Exit(exitCode); }

void divideInPlace(void *data, uint64_t count, DType dtype, int divisor) {
  withReducibleType(dtype, [&](auto zero) {
    auto *p = static_cast<decltype(zero) *>(data);
    for (uint64_t i = 0; i < count; ++i)
      p[i] = static_cast<decltype(zero)>(p[i] / divisor);
  });
}

Status Communicator::split(int, int, std::unique_ptr<Communicator> *) {
  return unimplemented("the ", backend(), " communicator cannot split into groups");
}

} // namespace dlc::rt::comm
