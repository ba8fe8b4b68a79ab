//===- dlc-comm-check.cpp - Every collective, checked exactly, on every rank ===//
//
// Run alone (a world of one, SelfComm) or under a launcher:
//   mpirun --allow-run-as-root --oversubscribe -np 4 dlc-comm-check
// --backend nccl runs the same checks on GPU buffers through NCCL (one GPU
// per rank), bootstrapped over the host communicator.
// Each rank fills its buffers with values that depend on its rank, runs
// every collective of runtime/comm for f32, f64, i32 and i64 (all-reduce
// with sum/max/min/avg, all-gather, reduce-scatter, all-to-all, broadcast,
// send/recv around a ring, barrier) and compares the result with the one
// computed locally, exactly (every value is an integer a float holds).
//
// Failure modes for the tests:
//   --hang-rank R --timeout S   rank R sleeps instead of joining the first
//                               collective after the schedule check; the
//                               others time out after S seconds, say which
//                               collective they waited on and take the job
//                               down with exit code 3.
//   --mismatch-rank R           rank R claims another collective schedule:
//                               every rank fails the start-up check (exit 2).
//
// Exit codes (DESIGN §7): 0 all exact, 1 a result differs, 2 usage error or
// schedule mismatch, 3 runtime fault (no MPI, timeout).
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/CommRegistry.h"
#include "runtime/comm/Communicator.h"
#include "runtime/comm/Launch.h"
#include "runtime/comm/NcclComm.h"
#include "runtime/hal/cuda/CudaDriver.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace dlc::rt;
using namespace dlc::rt::comm;

namespace {

int exitCodeOf(const Status &s) {
  switch (s.code()) {
  case StatusCode::kOk:
    return 0;
  case StatusCode::kInvalidArgument:
  case StatusCode::kInvalidModule:
  case StatusCode::kNotFound:
    return 2;
  case StatusCode::kUnavailable:
  case StatusCode::kResourceExhausted:
  case StatusCode::kUnimplemented:
    return 3;
  default:
    return 70;
  }
}

int usage(const char *why) {
  std::fprintf(stderr,
               "dlc-comm-check: %s\n"
               "usage: dlc-comm-check [--backend auto|self|mpi|nccl] [--count N] [--timeout SECONDS]\n"
               "                      [--rank R --world-size N [--local-rank L]]\n"
               "                      [--hang-rank R] [--mismatch-rank R]\n",
               why);
  return 2;
}

/// What the tool checks, in order; its hash is the schedule every rank
/// announces at start-up.
const char *const kSchedule[] = {"allreduce.sum", "allreduce.max", "allreduce.min",
                                 "allreduce.avg", "allgather",     "reducescatter.sum",
                                 "alltoall",      "broadcast",     "sendrecv",
                                 "barrier"};

uint64_t scheduleHash(int worldSize) {
  uint64_t h = 1469598103934665603ull; // FNV-1a
  auto mix = [&](const std::string &s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  for (const char *dtype : {"f32", "f64", "i32", "i64"})
    for (const char *op : kSchedule)
      mix(std::string(dtype) + "." + op + ";");
  mix("world=" + std::to_string(worldSize));
  return h;
}

/// Where the buffers of a call live: host memory (self, mpi), or device
/// memory the host vectors are copied to and from (nccl).
class Staging {
public:
  virtual ~Staging() = default;
  /// A buffer holding `bytes` from `host` that the communicator can use.
  virtual Status in(const void *host, uint64_t bytes, void **out) {
    *out = const_cast<void *>(host);
    return okStatus();
  }
  /// Copies `buffer` (from in()) back to `host`.
  virtual Status out(void *, const void *, uint64_t) { return okStatus(); }
};

class DeviceStaging final : public Staging {
public:
  explicit DeviceStaging(const hal::cuda::CudaDriver &d) : d_(d) {}
  ~DeviceStaging() override {
    for (auto p : buffers_)
      d_.cuMemFree(p);
  }
  Status in(const void *host, uint64_t bytes, void **out) override {
    hal::cuda::CUdeviceptr p = 0;
    DLC_CU_RETURN_IF_ERROR(d_, cuMemAlloc(&p, bytes ? bytes : 1));
    buffers_.push_back(p);
    if (bytes)
      DLC_CU_RETURN_IF_ERROR(d_, cuMemcpyHtoD(p, host, bytes));
    *out = reinterpret_cast<void *>(p);
    return okStatus();
  }
  Status out(void *host, const void *buffer, uint64_t bytes) override {
    if (bytes)
      DLC_CU_RETURN_IF_ERROR(
          d_, cuMemcpyDtoH(host, reinterpret_cast<hal::cuda::CUdeviceptr>(buffer), bytes));
    return okStatus();
  }

private:
  const hal::cuda::CudaDriver &d_;
  std::vector<hal::cuda::CUdeviceptr> buffers_;
};

struct Checker {
  Communicator &comm;
  uint64_t count;
  Staging &stage;
  int failures = 0;
  int checks = 0;

  int n() const { return comm.size(); }
  int me() const { return comm.rank(); }

  /// Rank r's i-th value: small integers, distinct across ranks and
  /// positions, some negative.
  static int64_t value(int r, uint64_t i) {
    return static_cast<int64_t>((r * 37 + static_cast<int64_t>(i) * 11) % 1001) - 300;
  }

  template <typename T>
  void expect(const char *what, const char *dtype, const std::vector<T> &got,
              const std::vector<T> &want) {
    ++checks;
    for (size_t i = 0; i < want.size(); ++i) {
      if (got[i] != want[i]) {
        ++failures;
        std::printf("rank %d: FAIL %s %s at [%zu]: got %.17g, expected %.17g\n", me(), what, dtype,
                    i, static_cast<double>(got[i]), static_cast<double>(want[i]));
        return;
      }
    }
  }

  template <typename T> static uint64_t bytes(const std::vector<T> &v) {
    return v.size() * sizeof(T);
  }

  template <typename T> Status run(DType dtype) {
    const char *name = dtypeName(dtype);
    const size_t c = count, N = static_cast<size_t>(n());
    // allreduce: sum, max, min, avg
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kAvg}) {
      std::vector<T> data(c), want(c);
      for (size_t i = 0; i < c; ++i) {
        data[i] = static_cast<T>(value(me(), i));
        T acc = static_cast<T>(value(0, i));
        for (int r = 1; r < n(); ++r) {
          T v = static_cast<T>(value(r, i));
          acc = op == ReduceOp::kMax   ? std::max(acc, v)
                : op == ReduceOp::kMin ? std::min(acc, v)
                                       : static_cast<T>(acc + v);
        }
        want[i] = op == ReduceOp::kAvg ? static_cast<T>(acc / static_cast<T>(n())) : acc;
      }
      void *d = nullptr;
      DLC_RETURN_IF_ERROR(stage.in(data.data(), bytes(data), &d));
      DLC_RETURN_IF_ERROR(comm.allReduce(d, c, dtype, op));
      DLC_RETURN_IF_ERROR(stage.out(data.data(), d, bytes(data)));
      expect((std::string("allreduce ") + reduceOpName(op)).c_str(), name, data, want);
    }
    // allgather
    {
      std::vector<T> send(c), recv(c * N, T(-7)), want(c * N);
      for (size_t i = 0; i < c; ++i)
        send[i] = static_cast<T>(value(me(), i));
      for (size_t r = 0; r < N; ++r)
        for (size_t i = 0; i < c; ++i)
          want[r * c + i] = static_cast<T>(value(static_cast<int>(r), i));
      void *ds = nullptr, *dr = nullptr;
      DLC_RETURN_IF_ERROR(stage.in(send.data(), bytes(send), &ds));
      DLC_RETURN_IF_ERROR(stage.in(recv.data(), bytes(recv), &dr));
      DLC_RETURN_IF_ERROR(comm.allGather(ds, dr, c, dtype));
      DLC_RETURN_IF_ERROR(stage.out(recv.data(), dr, bytes(recv)));
      expect("allgather", name, recv, want);
    }
    // reducescatter (sum)
    {
      std::vector<T> send(c * N), recv(c, T(-7)), want(c, T(0));
      for (size_t i = 0; i < c * N; ++i)
        send[i] = static_cast<T>(value(me(), i));
      for (int r = 0; r < n(); ++r)
        for (size_t i = 0; i < c; ++i)
          want[i] = static_cast<T>(want[i] + static_cast<T>(value(r, me() * c + i)));
      void *ds = nullptr, *dr = nullptr;
      DLC_RETURN_IF_ERROR(stage.in(send.data(), bytes(send), &ds));
      DLC_RETURN_IF_ERROR(stage.in(recv.data(), bytes(recv), &dr));
      DLC_RETURN_IF_ERROR(comm.reduceScatter(ds, dr, c, dtype, ReduceOp::kSum));
      DLC_RETURN_IF_ERROR(stage.out(recv.data(), dr, bytes(recv)));
      expect("reducescatter sum", name, recv, want);
    }
    // alltoall: block p of rank r's send = 1000 * r + 100 * p + i % 100
    {
      auto v = [](int from, size_t to, size_t i) {
        return static_cast<T>(1000 * from + 100 * static_cast<int64_t>(to) +
                              static_cast<int64_t>(i % 100));
      };
      std::vector<T> send(c * N), recv(c * N, T(-7)), want(c * N);
      for (size_t p = 0; p < N; ++p)
        for (size_t i = 0; i < c; ++i) {
          send[p * c + i] = v(me(), p, i);
          want[p * c + i] = v(static_cast<int>(p), static_cast<size_t>(me()), i);
        }
      void *ds = nullptr, *dr = nullptr;
      DLC_RETURN_IF_ERROR(stage.in(send.data(), bytes(send), &ds));
      DLC_RETURN_IF_ERROR(stage.in(recv.data(), bytes(recv), &dr));
      DLC_RETURN_IF_ERROR(comm.allToAll(ds, dr, c, dtype));
      DLC_RETURN_IF_ERROR(stage.out(recv.data(), dr, bytes(recv)));
      expect("alltoall", name, recv, want);
    }
    // broadcast from the last rank
    {
      int root = n() - 1;
      std::vector<T> data(c, T(-7)), want(c);
      for (size_t i = 0; i < c; ++i) {
        want[i] = static_cast<T>(value(root, i));
        if (me() == root)
          data[i] = want[i];
      }
      void *d = nullptr;
      DLC_RETURN_IF_ERROR(stage.in(data.data(), bytes(data), &d));
      DLC_RETURN_IF_ERROR(comm.broadcast(d, c, dtype, root));
      DLC_RETURN_IF_ERROR(stage.out(data.data(), d, bytes(data)));
      expect("broadcast", name, data, want);
    }
    // send/recv around the ring (even ranks send first, odd ranks receive
    // first, so that no two ranks wait on each other's send)
    if (n() > 1) {
      int next = (me() + 1) % n(), prev = (me() + n() - 1) % n();
      std::vector<T> out(c), in(c, T(-7)), want(c);
      for (size_t i = 0; i < c; ++i) {
        out[i] = static_cast<T>(value(me(), i + 5));
        want[i] = static_cast<T>(value(prev, i + 5));
      }
      void *dout = nullptr, *din = nullptr;
      DLC_RETURN_IF_ERROR(stage.in(out.data(), bytes(out), &dout));
      DLC_RETURN_IF_ERROR(stage.in(in.data(), bytes(in), &din));
      if (me() % 2 == 0) {
        DLC_RETURN_IF_ERROR(comm.send(dout, c, dtype, next));
        DLC_RETURN_IF_ERROR(comm.recv(din, c, dtype, prev));
      } else {
        DLC_RETURN_IF_ERROR(comm.recv(din, c, dtype, prev));
        DLC_RETURN_IF_ERROR(comm.send(dout, c, dtype, next));
      }
      DLC_RETURN_IF_ERROR(stage.out(in.data(), din, bytes(in)));
      expect("send/recv", name, in, want);
    }
    DLC_RETURN_IF_ERROR(comm.barrier());
    return okStatus();
  }
};

bool parseInt(const char *text, long lo, long hi, long *out) {
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end || v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string backend = "auto";
  long count = 1000, hangRank = -1, mismatchRank = -1;
  double timeout = 0;
  LaunchOverrides overrides; // first in DESIGN §7's order
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
    const char *v = nullptr;
    if (a == "--backend" && (v = next()))
      backend = v;
    else if (a == "--count" && (v = next())) {
      if (!parseInt(v, 1, 1L << 24, &count))
        return usage("--count: expected an integer from 1 to 2^24");
    } else if (a == "--hang-rank" && (v = next())) {
      if (!parseInt(v, 0, 1 << 20, &hangRank))
        return usage("--hang-rank: expected a rank");
    } else if (a == "--mismatch-rank" && (v = next())) {
      if (!parseInt(v, 0, 1 << 20, &mismatchRank))
        return usage("--mismatch-rank: expected a rank");
    } else if ((a == "--rank" || a == "--world-size" || a == "--local-rank") && (v = next())) {
      long x = 0;
      if (!parseInt(v, a == "--world-size" ? 1 : 0, 1 << 20, &x))
        return usage((a + ": expected a non-negative integer").c_str());
      (a == "--rank" ? overrides.rank : a == "--world-size" ? overrides.worldSize
                                                            : overrides.localRank) =
          static_cast<int>(x);
    } else if (a == "--timeout" && (v = next())) {
      char *end = nullptr;
      timeout = std::strtod(v, &end);
      if (end == v || *end || !(timeout > 0) || timeout > 1e6)
        return usage("--timeout: expected a positive number of seconds");
    } else if (a == "-h" || a == "--help") {
      usage("checks every collective of the runtime's communicators");
      return 0;
    } else {
      return usage(("unknown or incomplete option '" + a + "'").c_str());
    }
  }

  LaunchInfo launch;
  Status status = readLaunchInfo(overrides, &launch);
  // nccl: device buffers, bootstrapped over the host communicator (self
  // for one process, mpi under mpirun); one GPU per rank, the local rank's.
  // (Declared first: it outlives the NCCL communicator.)
  std::unique_ptr<Communicator> bootstrap;
  std::unique_ptr<Communicator> comm;
  std::unique_ptr<Staging> staging = std::make_unique<Staging>();
  if (status.ok() && backend == "nccl") {
    status = createCommunicator("auto", launch, &bootstrap);
    const hal::cuda::CudaDriver *d = nullptr;
    if (status.ok())
      status = hal::cuda::loadCudaDriver(&d);
    hal::cuda::CUdevice device = 0;
    hal::cuda::CUcontext context = nullptr;
    int devices = 0;
    if (status.ok() && d->cuDeviceGetCount(&devices) == hal::cuda::CUDA_SUCCESS && devices > 0 &&
        (d->cuDeviceGet(&device, launch.localRank % devices) != hal::cuda::CUDA_SUCCESS ||
         d->cuDevicePrimaryCtxRetain(&context, device) != hal::cuda::CUDA_SUCCESS ||
         d->cuCtxSetCurrent(context) != hal::cuda::CUDA_SUCCESS))
      status = unavailable("cannot make CUDA device ", launch.localRank % devices, " current");
    std::unique_ptr<NcclComm> nccl;
    if (status.ok())
      status = NcclComm::create(*bootstrap, &nccl);
    if (status.ok()) {
      comm = std::move(nccl);
      staging = std::make_unique<DeviceStaging>(*d);
    }
  } else if (status.ok()) {
    status = createCommunicator(backend, launch, &comm);
  }
  if (!status.ok()) {
    std::fprintf(stderr, "dlc-comm-check: error: %s\n", status.message().c_str());
    return exitCodeOf(status);
  }
  if (timeout > 0)
    comm->setTimeout(std::chrono::milliseconds(std::llround(timeout * 1000)));

  auto fail = [&](const Status &s) -> int {
    std::fprintf(stderr, "dlc-comm-check: error: %s\n", s.message().c_str());
    std::fflush(stderr);
    int code = exitCodeOf(s);
    // A schedule mismatch is seen by every rank, which all leave normally;
    // anything else leaves peers waiting: take the job down.
    if (s.code() == StatusCode::kInvalidModule)
      return code;
    comm->abort(code);
    return code; // not reached
  };

  uint64_t hash = scheduleHash(comm->size());
  if (comm->rank() == mismatchRank)
    hash ^= 0x5a5a5a5a5a5a5a5aull;
  status = comm->checkSchedule(hash, "dlc-comm-check");
  if (!status.ok())
    return fail(status);

  if (comm->rank() == hangRank) {
    std::fprintf(stderr, "dlc-comm-check: rank %d: hanging (--hang-rank) for %g s\n",
                 comm->rank(), std::chrono::duration<double>(comm->timeout()).count() + 30);
    std::fflush(stderr);
    std::this_thread::sleep_for(comm->timeout() + std::chrono::seconds(30));
  }

  Checker checker{*comm, static_cast<uint64_t>(count), *staging};
  status = checker.run<float>(DType::F32);
  if (status.ok())
    status = checker.run<double>(DType::F64);
  if (status.ok())
    status = checker.run<int32_t>(DType::I32);
  if (status.ok())
    status = checker.run<int64_t>(DType::I64);
  // Every rank's failures, so that rank 0 can say how the job did.
  int64_t totals[2] = {checker.failures, checker.checks};
  void *dtotals = nullptr;
  if (status.ok())
    status = staging->in(totals, sizeof totals, &dtotals);
  if (status.ok())
    status = comm->allReduce(dtotals, 2, DType::I64, ReduceOp::kSum);
  if (status.ok())
    status = staging->out(totals, dtotals, sizeof totals);
  if (!status.ok())
    return fail(status);
  if (comm->rank() == 0)
    std::printf("dlc-comm-check: %s, %d rank%s, %llu elements per block: %lld of %lld checks "
                "exact, %llu collectives per rank\n",
                comm->backend(), comm->size(), comm->size() == 1 ? "" : "s",
                static_cast<unsigned long long>(count),
                static_cast<long long>(totals[1] - totals[0]), static_cast<long long>(totals[1]),
                static_cast<unsigned long long>(comm->sequence()));
  return totals[0] == 0 ? 0 : 1;
}
