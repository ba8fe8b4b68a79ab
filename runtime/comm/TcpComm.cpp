//===- TcpComm.cpp - Host collectives over TCP, for launches without MPI --===//

#include "runtime/comm/TcpComm.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <thread>

namespace dlc::rt::comm {

namespace {

using Clock = std::chrono::steady_clock;

int millisecondsUntil(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(left.count(), 1000)));
}

/// Waits for `events` on `fd` until `deadline`: true when ready.
bool waitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, millisecondsUntil(deadline));
    if (n > 0)
      return true;
    if (n < 0 && errno != EINTR)
      return true; // the read or write says what went wrong
    if (Clock::now() >= deadline)
      return false;
  }
}

template <typename T> void combine(T *dst, const T *src, uint64_t n, ReduceOp op) {
  for (uint64_t i = 0; i < n; ++i) {
    switch (op) {
    case ReduceOp::kMax: dst[i] = src[i] > dst[i] ? src[i] : dst[i]; break;
    case ReduceOp::kMin: dst[i] = src[i] < dst[i] ? src[i] : dst[i]; break;
    default: dst[i] = static_cast<T>(dst[i] + src[i]); break;
    }
  }
}

/// dst = dst (op) src, element-wise, in the dtype (kAvg sums; divided later).
void combine(void *dst, const void *src, uint64_t n, DType dtype, ReduceOp op) {
  withReducibleType(dtype, [&](auto zero) {
    using T = decltype(zero);
    combine(static_cast<T *>(dst), static_cast<const T *>(src), n, op);
  });
}

} // namespace

TcpComm::~TcpComm() {
  for (int fd : sockets_)
    if (fd >= 0)
      ::close(fd);
}

Status TcpComm::create(const LaunchInfo &launch, std::unique_ptr<TcpComm> *out) {
  if (launch.masterAddr.empty() || launch.masterPort <= 0 || launch.masterPort > 65535)
    return invalidArgument("the tcp communicator needs MASTER_ADDR and MASTER_PORT (a port "
                           "from 1 to 65535) for a launch of ", launch.worldSize,
                           " ranks (", launch.source, ")");
  std::chrono::milliseconds timeout;
  DLC_RETURN_IF_ERROR(defaultCollectiveTimeout(&timeout));
  const Clock::time_point deadline = Clock::now() + timeout;
  std::string where = launch.masterAddr + ":" + std::to_string(launch.masterPort);
  std::unique_ptr<TcpComm> comm(new TcpComm(launch.rank, launch.worldSize));
  comm->setTimeout(timeout);
  int one = 1;
  if (launch.rank == 0) {
    comm->sockets_.assign(launch.worldSize, -1);
    int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0)
      return unavailable("tcp communicator: socket: ", std::strerror(errno));
    ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = htons(static_cast<uint16_t>(launch.masterPort));
    if (::bind(listener, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 ||
        ::listen(listener, launch.worldSize) != 0) {
      Status s = unavailable("tcp communicator: rank 0 cannot listen on port ",
                             launch.masterPort, ": ", std::strerror(errno));
      ::close(listener);
      return s;
    }
    for (int joined = 1; joined < launch.worldSize; ++joined) {
      if (!waitFor(listener, POLLIN, deadline)) {
        ::close(listener);
        return unavailable("tcp communicator: rank 0 of ", launch.worldSize, " waited ",
                           timeout.count() / 1000.0, " s on ", where, " and ", joined - 1,
                           " of ", launch.worldSize - 1, " ranks joined");
      }
      int fd = ::accept(listener, nullptr, nullptr);
      int32_t peer = -1;
      if (fd < 0 || !waitFor(fd, POLLIN, deadline) ||
          ::recv(fd, &peer, sizeof peer, MSG_WAITALL) != sizeof peer || peer <= 0 ||
          peer >= launch.worldSize || comm->sockets_[peer] >= 0) {
        if (fd >= 0)
          ::close(fd);
        ::close(listener);
        return unavailable("tcp communicator: a connection on ", where,
                           " did not name a new rank of ", launch.worldSize);
      }
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      comm->sockets_[peer] = fd;
    }
    ::close(listener);
  } else {
    addrinfo hints{}, *found = nullptr;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (int e = ::getaddrinfo(launch.masterAddr.c_str(),
                              std::to_string(launch.masterPort).c_str(), &hints, &found))
      return unavailable("tcp communicator: MASTER_ADDR '", launch.masterAddr,
                         "': ", ::gai_strerror(e));
    int fd = -1;
    for (;;) {
      fd = ::socket(AF_INET, SOCK_STREAM, 0);
      if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0)
        break;
      if (fd >= 0)
        ::close(fd);
      fd = -1;
      if (Clock::now() >= deadline)
        break;
      // Rank 0 may not listen yet.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::freeaddrinfo(found);
    if (fd < 0)
      return unavailable("tcp communicator: rank ", launch.rank, " could not reach rank 0 at ",
                         where, " within ", timeout.count() / 1000.0, " s");
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int32_t me = launch.rank;
    if (::send(fd, &me, sizeof me, MSG_NOSIGNAL) != sizeof me) {
      ::close(fd);
      return unavailable("tcp communicator: rank ", launch.rank, " lost rank 0 at ", where);
    }
    comm->sockets_.assign(launch.worldSize, -1);
    comm->sockets_[0] = fd;
  }
  DLC_RETURN_IF_ERROR(comm->connectPeers(deadline));
  *out = std::move(comm);
  return okStatus();
}

Status TcpComm::connectPeers(Clock::time_point deadline) {
  // Every rank but 0 listens on a port of its own; rank 0 hands out the
  // table of (address, port); rank j connects to every rank 0 < i < j.
  Collective setup;
  setup.deadline = deadline;
  setup.kind = CollectiveKind::kBarrier;
  struct Endpoint {
    uint32_t address = 0;
    uint16_t port = 0;
  };
  std::vector<Endpoint> table(size_);
  int listener = -1;
  int one = 1;
  if (rank_ != 0) {
    listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof addr;
    if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 ||
        ::listen(listener, size_) != 0 ||
        ::getsockname(listener, reinterpret_cast<sockaddr *>(&addr), &len) != 0) {
      if (listener >= 0)
        ::close(listener);
      return unavailable("tcp communicator: rank ", rank_, " cannot listen: ",
                         std::strerror(errno));
    }
    Endpoint me;
    me.port = addr.sin_port;
    // The address this rank reaches rank 0 from is one the others can
    // reach it at.
    sockaddr_in local{};
    len = sizeof local;
    ::getsockname(sockets_[0], reinterpret_cast<sockaddr *>(&local), &len);
    me.address = local.sin_addr.s_addr;
    table[rank_] = me;
  }
  std::vector<uint8_t> all;
  Status s = gather(setup, &table[rank_], sizeof(Endpoint), &all);
  if (s.ok()) {
    if (rank_ == 0)
      for (int p = 1; p < size_ && s.ok(); ++p)
        s = sendTo(p, setup, all.data(), all.size());
    else
      s = recvFrom(0, setup, table.data(), sizeof(Endpoint) * size_);
    if (rank_ == 0)
      std::memcpy(table.data(), all.data(), all.size());
  }
  for (int i = 1; s.ok() && i < rank_; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = table[i].address;
    addr.sin_port = table[i].port;
    int32_t me = rank_;
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 ||
        ::send(fd, &me, sizeof me, MSG_NOSIGNAL) != sizeof me) {
      if (fd >= 0)
        ::close(fd);
      s = unavailable("tcp communicator: rank ", rank_, " cannot reach rank ", i, ": ",
                      std::strerror(errno));
      break;
    }
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockets_[i] = fd;
  }
  for (int j = rank_ + 1; s.ok() && rank_ != 0 && j < size_; ++j) {
    int32_t peer = -1;
    int fd = waitFor(listener, POLLIN, deadline) ? ::accept(listener, nullptr, nullptr) : -1;
    if (fd < 0 || !waitFor(fd, POLLIN, deadline) ||
        ::recv(fd, &peer, sizeof peer, MSG_WAITALL) != sizeof peer || peer <= rank_ ||
        peer >= size_ || sockets_[peer] >= 0) {
      if (fd >= 0)
        ::close(fd);
      s = unavailable("tcp communicator: rank ", rank_, " did not hear from the ranks after it");
      break;
    }
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockets_[peer] = fd;
  }
  if (listener >= 0)
    ::close(listener);
  return s;
}

Status TcpComm::sendTo(int peer, const Collective &call, const void *data, uint64_t bytes) {
  return transfer(peer, call, const_cast<void *>(data), bytes, /*sending=*/true);
}

Status TcpComm::recvFrom(int peer, const Collective &call, void *data, uint64_t bytes) {
  return transfer(peer, call, data, bytes, /*sending=*/false);
}

Status TcpComm::transfer(int peer, const Collective &call, void *data, uint64_t bytes,
                         bool sending) {
  int fd = sockets_[peer];
  auto *p = static_cast<uint8_t *>(data);
  while (bytes) {
    if (!waitFor(fd, sending ? POLLOUT : POLLIN, call.deadline))
      return unavailable("rank ", rank_, " of ", size_, ": ", call.describe(), " timed out after ",
                         timeout().count() / 1000.0, " s: ",
                         sending ? "rank " + std::to_string(peer) + " does not take its data"
                                 : "a peer has not joined it (rank " + std::to_string(peer) + ")");
    ssize_t n = sending ? ::send(fd, p, bytes, MSG_NOSIGNAL) : ::recv(fd, p, bytes, 0);
    if (n <= 0) {
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      return unavailable("rank ", rank_, " of ", size_, ": ", call.describe(), ": rank ", peer,
                         " closed its connection (it exited)");
    }
    p += n;
    bytes -= static_cast<uint64_t>(n);
  }
  return okStatus();
}

Status TcpComm::gather(const Collective &call, const void *mine, uint64_t bytes,
                       std::vector<uint8_t> *all) {
  // Each message starts with the call's sequence number: ranks that issue
  // different calls fail instead of mixing their data.
  uint64_t sequence = call.sequence;
  if (rank_ != 0) {
    DLC_RETURN_IF_ERROR(sendTo(0, call, &sequence, sizeof sequence));
    return sendTo(0, call, mine, bytes);
  }
  all->resize(bytes * size_);
  if (bytes)
    std::memcpy(all->data(), mine, bytes);
  for (int peer = 1; peer < size_; ++peer) {
    uint64_t theirs = 0;
    DLC_RETURN_IF_ERROR(recvFrom(peer, call, &theirs, sizeof theirs));
    if (theirs != sequence)
      return invalidArgument("rank 0 of ", size_, ": ", call.describe(), ": rank ", peer,
                             " is at collective #", theirs, " instead");
    DLC_RETURN_IF_ERROR(recvFrom(peer, call, all->data() + bytes * peer, bytes));
  }
  return okStatus();
}

Status TcpComm::run(const Collective &call) {
  const uint64_t esize = elementSize(call.dtype);
  const uint64_t bytes = call.count * esize;
  const uint64_t world = static_cast<uint64_t>(size_);
  std::vector<uint8_t> all;
  auto *recv = static_cast<uint8_t *>(call.recv);
  // Rank 0 sends every other rank its part of `result` (`part(p)`), each
  // rank receives its own into `recv`.
  auto scatter = [&](const std::function<const uint8_t *(int)> &part, uint64_t partBytes) {
    if (rank_ != 0)
      return recvFrom(0, call, recv, partBytes);
    for (int p = 1; p < size_; ++p)
      DLC_RETURN_IF_ERROR(sendTo(p, call, part(p), partBytes));
    if (partBytes && part(0) != recv)
      std::memmove(recv, part(0), partBytes);
    return okStatus();
  };
  switch (call.kind) {
  case CollectiveKind::kAllReduce:
  case CollectiveKind::kReduceScatter: {
    const bool whole = call.kind == CollectiveKind::kAllReduce;
    const uint64_t total = whole ? bytes : bytes * world;
    const void *mine = whole ? call.recv : call.send;
    DLC_RETURN_IF_ERROR(gather(call, mine, total, &all));
    if (rank_ == 0) {
      // In rank order, into rank 0's block.
      for (int p = 1; p < size_; ++p)
        combine(all.data(), all.data() + total * p, total / esize, call.dtype, call.op);
      if (call.op == ReduceOp::kAvg)
        divideInPlace(all.data(), total / esize, call.dtype, size_);
    }
    return scatter([&](int p) { return all.data() + (whole ? 0 : bytes * p); }, bytes);
  }
  case CollectiveKind::kAllGather:
    DLC_RETURN_IF_ERROR(gather(call, call.send, bytes, &all));
    return scatter([&](int) { return all.data(); }, bytes * world);
  case CollectiveKind::kBarrier: {
    // Everyone reports to rank 0, which then releases everyone.
    DLC_RETURN_IF_ERROR(gather(call, nullptr, 0, &all));
    uint8_t token = 1;
    recv = &token;
    return scatter([&](int) { return &token; }, 1);
  }
  case CollectiveKind::kAllToAll: {
    DLC_RETURN_IF_ERROR(gather(call, call.send, bytes * world, &all));
    std::vector<uint8_t> out;
    if (rank_ == 0) {
      // Rank p's result: block p of every rank, in rank order.
      out.resize(bytes * world * world);
      for (uint64_t p = 0; p < world; ++p)
        for (uint64_t q = 0; q < world; ++q)
          std::memcpy(out.data() + (p * world + q) * bytes,
                      all.data() + (q * world + p) * bytes, bytes);
    }
    return scatter([&](int p) { return out.data() + bytes * world * p; }, bytes * world);
  }
  case CollectiveKind::kBroadcast: {
    // The root's data reaches rank 0 first (unless it is rank 0).
    if (call.peer != 0) {
      if (rank_ == call.peer)
        DLC_RETURN_IF_ERROR(sendTo(0, call, call.recv, bytes));
      else if (rank_ == 0)
        DLC_RETURN_IF_ERROR(recvFrom(call.peer, call, call.recv, bytes));
    }
    return scatter([&](int) { return recv; }, bytes);
  }
  case CollectiveKind::kSend:
    return sendTo(call.peer, call, call.send, bytes);
  case CollectiveKind::kRecv:
    return recvFrom(call.peer, call, call.recv, bytes);
  }
  return internalError(call.describe(), ": unknown collective");
}

} // namespace dlc::rt::comm
