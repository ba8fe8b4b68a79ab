//===- CommTest.cpp - runtime/comm: launch, SelfComm, load failures -------===//
//
// The MPI and NCCL communicators need several processes (dlc-comm-check
// under mpirun, test/runtime/comm-*.test) or a GPU; here: the launch order
// with fake environments, the world of one, the calls' validation and
// numbering, and the clean failures when libmpi or libnccl cannot be loaded
// (each in a child process, as a library is loaded once per process).

#include "runtime/comm/CommQueue.h"
#include "runtime/comm/CommRegistry.h"
#include "runtime/comm/Launch.h"
#include "runtime/comm/MpiComm.h"
#include "runtime/comm/NcclComm.h"
#include "runtime/comm/SelfComm.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace dlc::rt;
using namespace dlc::rt::comm;
using dlc::DType;

namespace {

Environment fakeEnv(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char *name) -> const char * {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

LaunchInfo launchOf(std::map<std::string, std::string> vars, LaunchOverrides o = {}) {
  LaunchInfo info;
  Status s = readLaunchInfo(o, &info, fakeEnv(std::move(vars)));
  EXPECT_TRUE(s.ok()) << s.toString();
  return info;
}

Status launchError(std::map<std::string, std::string> vars, LaunchOverrides o = {}) {
  LaunchInfo info;
  return readLaunchInfo(o, &info, fakeEnv(std::move(vars)));
}

} // namespace

TEST(LaunchTest, NothingSetIsASingleProcess) {
  LaunchInfo info = launchOf({});
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.worldSize, 1);
  EXPECT_EQ(info.localRank, 0);
  EXPECT_EQ(info.source, "single process");
  EXPECT_FALSE(info.underMpirun);
}

TEST(LaunchTest, EachSourceAlone) {
  LaunchInfo dlcInfo = launchOf({{"DLC_RANK", "2"}, {"DLC_WORLD_SIZE", "4"}, {"DLC_LOCAL_RANK", "0"}});
  EXPECT_EQ(dlcInfo.source, "DLC");
  EXPECT_EQ(dlcInfo.rank, 2);
  EXPECT_EQ(dlcInfo.worldSize, 4);
  EXPECT_EQ(dlcInfo.localRank, 0);

  LaunchInfo torch = launchOf({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                               {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29500"}});
  EXPECT_EQ(torch.source, "torchrun");
  EXPECT_EQ(torch.rank, 3);
  EXPECT_EQ(torch.worldSize, 8);
  EXPECT_EQ(torch.localRank, 1);
  EXPECT_EQ(torch.masterAddr, "node7");
  EXPECT_EQ(torch.masterPort, 29500);

  LaunchInfo ompi = launchOf({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                              {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  EXPECT_EQ(ompi.source, "Open MPI");
  EXPECT_EQ(ompi.rank, 1);
  EXPECT_EQ(ompi.worldSize, 2);
  EXPECT_TRUE(ompi.underMpirun);

  LaunchInfo slurm = launchOf({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "6"}, {"SLURM_LOCALID", "2"}});
  EXPECT_EQ(slurm.source, "Slurm");
  EXPECT_EQ(slurm.rank, 5);
  EXPECT_EQ(slurm.worldSize, 6);
  EXPECT_EQ(slurm.localRank, 2);
}

TEST(LaunchTest, TheDocumentedOrderWins) {
  std::map<std::string, std::string> all = {
      {"DLC_RANK", "1"},         {"DLC_WORLD_SIZE", "2"},          {"RANK", "2"},
      {"WORLD_SIZE", "3"},       {"OMPI_COMM_WORLD_RANK", "3"},    {"OMPI_COMM_WORLD_SIZE", "4"},
      {"SLURM_PROCID", "4"},     {"SLURM_NTASKS", "5"}};
  EXPECT_EQ(launchOf(all).source, "DLC");
  LaunchOverrides explicitValues;
  explicitValues.rank = 0;
  explicitValues.worldSize = 7;
  LaunchInfo e = launchOf(all, explicitValues);
  EXPECT_EQ(e.source, "explicit");
  EXPECT_EQ(e.worldSize, 7);
  all.erase("DLC_RANK");
  all.erase("DLC_WORLD_SIZE");
  EXPECT_EQ(launchOf(all).source, "torchrun");
  all.erase("RANK");
  all.erase("WORLD_SIZE");
  EXPECT_EQ(launchOf(all).source, "Open MPI");
  EXPECT_EQ(launchOf(all).rank, 3);
  all.erase("OMPI_COMM_WORLD_RANK");
  all.erase("OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(launchOf(all).source, "Slurm");
  // An empty variable counts as unset.
  EXPECT_EQ(launchOf({{"DLC_RANK", ""}, {"DLC_WORLD_SIZE", ""}, {"RANK", "0"}, {"WORLD_SIZE", "1"}})
                .source,
            "torchrun");
}

TEST(LaunchTest, MissingLocalRankIsTheRank) {
  EXPECT_EQ(launchOf({{"RANK", "3"}, {"WORLD_SIZE", "4"}}).localRank, 3);
  LaunchOverrides o;
  o.rank = 1;
  o.worldSize = 2;
  EXPECT_EQ(launchOf({}, o).localRank, 1);
  o.localRank = 0;
  EXPECT_EQ(launchOf({}, o).localRank, 0);
}

TEST(LaunchTest, BadValuesAreErrors) {
  Status half = launchError({{"RANK", "1"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}});
  EXPECT_EQ(half.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(half.message(), "torchrun launch: RANK is set but WORLD_SIZE is not");
  EXPECT_EQ(launchError({{"DLC_WORLD_SIZE", "2"}}).message(),
            "DLC launch: DLC_WORLD_SIZE is set but DLC_RANK is not");

  Status beyond = launchError({{"DLC_RANK", "4"}, {"DLC_WORLD_SIZE", "4"}});
  EXPECT_EQ(beyond.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(beyond.message(), "DLC_RANK=4 is not below DLC_WORLD_SIZE=4");

  Status text = launchError({{"OMPI_COMM_WORLD_RANK", "one"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
  EXPECT_EQ(text.message(), "OMPI_COMM_WORLD_RANK='one': expected a non-negative integer");
  EXPECT_FALSE(launchError({{"RANK", "-1"}, {"WORLD_SIZE", "2"}}).ok());
  EXPECT_FALSE(launchError({{"RANK", "0"}, {"WORLD_SIZE", "0"}}).ok());
  EXPECT_FALSE(launchError({{"RANK", "0"}, {"WORLD_SIZE", "2x"}}).ok());
  EXPECT_FALSE(launchError({{"RANK", "0"}, {"WORLD_SIZE", "99999999999"}}).ok());
  EXPECT_FALSE(launchError({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "http"}}).ok());

  LaunchOverrides onlyRank;
  onlyRank.rank = 0;
  EXPECT_EQ(launchError({}, onlyRank).message(), "--rank and --world-size must be given together");
  LaunchOverrides beyondExplicit;
  beyondExplicit.rank = 2;
  beyondExplicit.worldSize = 2;
  EXPECT_EQ(launchError({}, beyondExplicit).message(), "--rank=2 is not below --world-size=2");
}

TEST(CommTimeoutTest, DefaultAndEnvironment) {
  std::chrono::milliseconds t;
  unsetenv("DLC_COLLECTIVE_TIMEOUT");
  ASSERT_TRUE(defaultCollectiveTimeout(&t).ok());
  EXPECT_EQ(t.count(), 300000);
  setenv("DLC_COLLECTIVE_TIMEOUT", "2.5", 1);
  ASSERT_TRUE(defaultCollectiveTimeout(&t).ok());
  EXPECT_EQ(t.count(), 2500);
  EXPECT_EQ(SelfComm().timeout().count(), 2500);
  for (const char *bad : {"0", "-1", "soon", "1e99", "nan", "3s"}) {
    setenv("DLC_COLLECTIVE_TIMEOUT", bad, 1);
    Status s = defaultCollectiveTimeout(&t);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(s.message(), std::string("DLC_COLLECTIVE_TIMEOUT='") + bad +
                               "': expected a positive number of seconds");
    std::unique_ptr<Communicator> comm;
    EXPECT_EQ(createCommunicator("self", LaunchInfo(), &comm).code(),
              StatusCode::kInvalidArgument);
  }
  unsetenv("DLC_COLLECTIVE_TIMEOUT");
}

TEST(SelfCommTest, EveryCollectiveIsACopy) {
  SelfComm comm;
  EXPECT_STREQ(comm.backend(), "self");
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.size(), 1);
  EXPECT_EQ(comm.sequence(), 0u);

  std::vector<float> data = {1.5f, -2, 3};
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kAvg}) {
    ASSERT_TRUE(comm.allReduce(data.data(), 3, DType::F32, op).ok());
    EXPECT_EQ(data, (std::vector<float>{1.5f, -2, 3}));
  }
  std::vector<int64_t> send = {7, 8, 9}, recv(3, 0);
  ASSERT_TRUE(comm.allGather(send.data(), recv.data(), 3, DType::I64).ok());
  EXPECT_EQ(recv, send);
  std::fill(recv.begin(), recv.end(), 0);
  ASSERT_TRUE(comm.reduceScatter(send.data(), recv.data(), 3, DType::I64, ReduceOp::kSum).ok());
  EXPECT_EQ(recv, send);
  std::fill(recv.begin(), recv.end(), 0);
  ASSERT_TRUE(comm.allToAll(send.data(), recv.data(), 3, DType::I64).ok());
  EXPECT_EQ(recv, send);
  ASSERT_TRUE(comm.broadcast(recv.data(), 3, DType::I64, 0).ok());
  EXPECT_EQ(recv, send);
  ASSERT_TRUE(comm.barrier().ok());
  // f16 moves (two bytes an element) but does not reduce.
  std::vector<uint16_t> half = {1, 2}, halfOut(2, 0);
  ASSERT_TRUE(comm.allGather(half.data(), halfOut.data(), 2, DType::F16).ok());
  EXPECT_EQ(halfOut, half);
  ASSERT_TRUE(comm.checkSchedule(42, "model.dlcm").ok());
  // Zero elements: nothing to do, null buffers allowed.
  ASSERT_TRUE(comm.allReduce(nullptr, 0, DType::F64, ReduceOp::kSum).ok());
  EXPECT_EQ(comm.sequence(), 12u);
}

TEST(SelfCommTest, BadCallsNameTheCall) {
  SelfComm comm;
  float x = 1;
  Status s = comm.send(&x, 1, DType::F32, 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "rank 0 of 1: collective #0 (send to rank 0, 1 x f32): a rank cannot "
                         "send to or receive from itself");
  s = comm.recv(&x, 1, DType::F32, 3);
  EXPECT_EQ(s.message(), "rank 0 of 1: collective #1 (recv from rank 3, 1 x f32): peer 3 is not "
                         "a rank of a world of 1");
  s = comm.broadcast(&x, 1, DType::F32, 1);
  EXPECT_EQ(s.message(), "rank 0 of 1: collective #2 (broadcast from root 1, 1 x f32): root 1 is "
                         "not a rank of a world of 1");
  uint16_t h = 0;
  s = comm.allReduce(&h, 1, DType::BF16, ReduceOp::kSum);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(), "rank 0 of 1: collective #3 (allreduce sum, 1 x bf16): the self "
                         "communicator cannot reduce bf16");
  s = comm.allGather(nullptr, &x, 1, DType::F32);
  EXPECT_EQ(s.message(),
            "rank 0 of 1: collective #4 (allgather, 1 x f32): the send buffer is null");
  s = comm.allReduce(&x, UINT64_MAX / 2, DType::F32, ReduceOp::kMax);
  EXPECT_EQ(s.message(), "rank 0 of 1: collective #5 (allreduce max, 9223372036854775807 x f32): "
                         "the buffer size overflows");
  // Rejected calls are numbered too; the communicator stays usable.
  EXPECT_EQ(comm.sequence(), 6u);
  EXPECT_TRUE(comm.barrier().ok());
}

TEST(CommTest, AverageDividesTheSum) {
  std::vector<int32_t> i = {7, -7, 9};
  divideInPlace(i.data(), 3, DType::I32, 2);
  EXPECT_EQ(i, (std::vector<int32_t>{3, -3, 4}));
  std::vector<double> d = {1, 3};
  divideInPlace(d.data(), 2, DType::F64, 4);
  EXPECT_EQ(d, (std::vector<double>{0.25, 0.75}));
}

TEST(CommRegistryTest, ByName) {
  std::unique_ptr<Communicator> comm;
  ASSERT_TRUE(createCommunicator("auto", LaunchInfo(), &comm).ok());
  EXPECT_STREQ(comm->backend(), "self");
  LaunchInfo four;
  four.worldSize = 4;
  four.source = "DLC";
  Status s = createCommunicator("self", four, &comm);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "the self communicator is a world of one, but the launch (DLC) says 4 ranks");
  s = createCommunicator("gloo", LaunchInfo(), &comm);
  EXPECT_EQ(s.message(), "communicator 'gloo': expected auto, self, mpi or tcp");
}

// Each library is loaded once per process: the failures run in a child.

TEST(CommLoadTest, NoMpiLibraryIsUnavailable) {
  EXPECT_EXIT(
      {
        setenv("DLC_MPI_LIBRARY", "/nonexistent/libmpi.so.40", 1);
        std::unique_ptr<MpiComm> mpi;
        Status s = MpiComm::create(&mpi);
        std::unique_ptr<Communicator> viaRegistry;
        Status r = createCommunicator("mpi", LaunchInfo(), &viaRegistry);
        std::fprintf(stderr, "[%s] [%s]\n", s.toString().c_str(), r.toString().c_str());
        std::_Exit(s.code() == StatusCode::kUnavailable && r.code() == StatusCode::kUnavailable
                       ? 3
                       : 1);
      },
      testing::ExitedWithCode(3),
      "\\[UNAVAILABLE: no MPI: dlopen\\(/nonexistent/libmpi.so.40\\) failed: "
      "/nonexistent/libmpi.so.40: cannot open shared object file: No such file or directory "
      "\\(install Open MPI, e.g. Debian's libopenmpi3, or set DLC_MPI_LIBRARY\\)\\] "
      "\\[UNAVAILABLE: no MPI");
}

TEST(CommLoadTest, NoNcclLibraryIsUnavailable) {
  EXPECT_EXIT(
      {
        setenv("DLC_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
        SelfComm bootstrap;
        std::unique_ptr<NcclComm> nccl;
        Status s = NcclComm::create(bootstrap, &nccl);
        std::fprintf(stderr, "[%s]\n", s.toString().c_str());
        std::_Exit(s.code() == StatusCode::kUnavailable && !nccl ? 3 : 1);
      },
      testing::ExitedWithCode(3),
      "\\[UNAVAILABLE: rank 0 of 1: no NCCL: dlopen\\(/nonexistent/libnccl.so.2\\) failed: "
      "/nonexistent/libnccl.so.2: cannot open shared object file: No such file or directory "
      "\\(install NCCL 2, or set DLC_NCCL_LIBRARY\\)\\]");
}

TEST(CommLoadTest, NcclWithoutACudaDriverIsUnavailable) {
  // The real libnccl.so.2 where it is installed (the CUDA toolkit here), a
  // driver that is not there: the check that comes after loading NCCL.
  void *probe = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_LOCAL);
  if (!probe)
    GTEST_SKIP() << "libnccl.so.2 is not installed";
  dlclose(probe);
  EXPECT_EXIT(
      {
        unsetenv("DLC_NCCL_LIBRARY");
        setenv("DLC_CUDA_DRIVER_LIBRARY", "/nonexistent/libcuda.so.1", 1);
        SelfComm bootstrap;
        std::unique_ptr<NcclComm> nccl;
        Status s = NcclComm::create(bootstrap, &nccl);
        std::fprintf(stderr, "[%s]\n", s.toString().c_str());
        std::_Exit(s.code() == StatusCode::kUnavailable && !nccl ? 3 : 1);
      },
      testing::ExitedWithCode(3),
      "\\[UNAVAILABLE: rank 0 of 1: NCCL needs a CUDA device: no CUDA driver: "
      "dlopen\\(/nonexistent/libcuda.so.1\\) failed");
}

namespace {
/// A backend whose every call waits for its deadline and fails like a
/// timeout: what the base class does around a backend's failure.
class StuckComm final : public Communicator {
public:
  const char *backend() const override { return "stuck"; }
  int rank() const override { return 1; }
  int size() const override { return 2; }
  std::vector<uint64_t> seen;

protected:
  Status run(const Collective &call) override {
    seen.push_back(call.sequence);
    std::this_thread::sleep_until(call.deadline);
    return unavailable("rank 1 of 2: ", call.describe(), " timed out");
  }
};
} // namespace

TEST(CommTest, AfterATimeoutTheCommunicatorIsUnusable) {
  StuckComm comm;
  comm.setTimeout(std::chrono::milliseconds(20));
  EXPECT_EQ(comm.timeout().count(), 20);
  float x[2] = {1, 2};
  auto start = std::chrono::steady_clock::now();
  Status s = comm.allReduce(x, 2, DType::F32, ReduceOp::kAvg);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "rank 1 of 2: collective #0 (allreduce avg, 2 x f32) timed out");
  // The backend is not called again: its buffers may still be in flight.
  s = comm.broadcast(x, 2, DType::F32, 0);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "rank 1 of 2: collective #1 (broadcast from root 0, 2 x f32): the stuck "
                         "communicator is unusable after collective #0 (allreduce avg, 2 x f32) "
                         "failed");
  EXPECT_EQ(comm.seen, (std::vector<uint64_t>{0}));
  EXPECT_EQ(comm.sequence(), 2u);
}

TEST(CommQueueTest, RunsInOrderAndReportsTheFirstFailure) {
  dlc::rt::comm::CommQueue queue;
  std::vector<int> order;
  uint64_t first = queue.submit([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    order.push_back(1);
    return dlc::rt::okStatus();
  });
  uint64_t second = queue.submit([&] {
    order.push_back(2);
    return dlc::rt::unavailable("peer gone");
  });
  uint64_t third = queue.submit([&] {
    order.push_back(3);
    return dlc::rt::okStatus();
  });
  EXPECT_TRUE(queue.wait(first).ok());
  EXPECT_EQ(queue.wait(second).message(), "peer gone");
  // A later ticket still reports the earlier failure.
  EXPECT_EQ(queue.wait(third).message(), "peer gone");
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_GE(queue.busySeconds(), 0.015);
  EXPECT_EQ(queue.drain().message(), "peer gone");
}
