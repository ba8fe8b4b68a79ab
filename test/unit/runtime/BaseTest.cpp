//===- BaseTest.cpp - runtime/base ----------------------------------------===//

#include "runtime/base/Checksum.h"
#include "runtime/base/HostCores.h"
#include "runtime/base/LibraryGemm.h"
#include "runtime/base/Log.h"
#include "runtime/base/Memory.h"
#include "runtime/base/Span.h"
#include "runtime/base/Status.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

namespace dlc::rt {
namespace {

TEST(Status, OkHasNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.toString(), "OK");
}

TEST(Status, ErrorKeepsCodeAndMessageThroughCopiesAndPrepend) {
  Status s = invalidModule("section 'header' at byte ", 64, ": bad");
  Status copy = s;
  copy.prepend("m.dlcm");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidModule);
  EXPECT_EQ(s.message(), "section 'header' at byte 64: bad");
  EXPECT_EQ(copy.message(), "m.dlcm: section 'header' at byte 64: bad");
  EXPECT_EQ(copy.toString(), "INVALID_MODULE: m.dlcm: section 'header' at byte 64: bad");
  Status okCopy = Status();
  okCopy.prepend("ignored");
  EXPECT_TRUE(okCopy.ok());
}

Status failsAtSecond(int *reached) {
  DLC_RETURN_IF_ERROR(okStatus());
  *reached = 1;
  DLC_RETURN_IF_ERROR(unavailable("no ", "gpu"));
  *reached = 2;
  return okStatus();
}

TEST(Status, ReturnIfErrorStopsAtTheFirstError) {
  int reached = 0;
  Status s = failsAtSecond(&reached);
  EXPECT_EQ(reached, 1);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "no gpu");
}

TEST(Checksum, Crc32MatchesTheStandardCheckValue) {
  EXPECT_EQ(crc32(asBytes("123456789")), 0xCBF43926u);
  EXPECT_EQ(crc32(ByteSpan()), 0u);
  // Continuing a CRC over two halves equals one pass.
  EXPECT_EQ(crc32(asBytes("6789"), crc32(asBytes("12345"))), 0xCBF43926u);
}

TEST(Checksum, Fnv1aMatchesPublishedValues) {
  EXPECT_EQ(fnv1a64(ByteSpan()), kFnvOffset);
  EXPECT_EQ(fnv1a64(asBytes("a")), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64(asBytes("foobar")), 0x85944171f73967e8ull);
}

TEST(Span, ContainsNeverOverflows) {
  std::vector<uint8_t> v(100);
  ByteSpan s(v.data(), v.size());
  EXPECT_TRUE(s.contains(0, 100));
  EXPECT_TRUE(s.contains(100, 0));
  EXPECT_FALSE(s.contains(101, 0));
  EXPECT_FALSE(s.contains(1, 100));
  EXPECT_FALSE(s.contains(UINT64_MAX, 2));
  EXPECT_FALSE(s.contains(2, UINT64_MAX));
  EXPECT_EQ(s.subspan(10, 5).size(), 5u);
}

TEST(Memory, OverflowHelpers) {
  uint64_t out;
  EXPECT_TRUE(mulOverflows(uint64_t(1) << 40, uint64_t(1) << 40, &out));
  EXPECT_FALSE(mulOverflows(uint64_t(1) << 20, uint64_t(1) << 20, &out));
  EXPECT_EQ(out, uint64_t(1) << 40);
  EXPECT_TRUE(addOverflows(UINT64_MAX, 1, &out));
  EXPECT_EQ(alignUp(65, 64), 128u);
  EXPECT_TRUE(isPowerOfTwo(64));
  EXPECT_FALSE(isPowerOfTwo(0));
  EXPECT_FALSE(isPowerOfTwo(96));
}

TEST(Memory, AlignedBufferIsAlignedAndZeroed) {
  for (uint64_t alignment : {64ull, 4096ull, 65536ull}) {
    AlignedBuffer b;
    ASSERT_TRUE(AlignedBuffer::allocate(1000, alignment, &b).ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % alignment, 0u);
    EXPECT_EQ(b.size(), 1000u);
    for (uint64_t i = 0; i < b.size(); ++i)
      ASSERT_EQ(b.data()[i], 0);
  }
  AlignedBuffer empty;
  ASSERT_TRUE(AlignedBuffer::allocate(0, 64, &empty).ok());
  EXPECT_NE(empty.data(), nullptr);
}

TEST(Memory, AbsurdAllocationsFailWithAStatus) {
  AlignedBuffer b;
  Status s = AlignedBuffer::allocate(UINT64_MAX - 10, 64, &b);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(AlignedBuffer::allocate(10, 48, &b).code(), StatusCode::kInvalidArgument);
}

TEST(Log, CallbackReceivesMessagesUntilRemoved) {
  std::vector<std::string> seen;
  setLogCallback(
      [](void *user, int level, const char *message) {
        static_cast<std::vector<std::string> *>(user)->push_back(std::to_string(level) + ":" +
                                                                 message);
      },
      &seen);
  EXPECT_TRUE(logEnabled());
  log(LogLevel::kWarning, "hello");
  setLogCallback(nullptr, nullptr);
  EXPECT_FALSE(logEnabled());
  log(LogLevel::kError, "dropped");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], "1:hello");
}

TEST(LibraryGemm, PolicyFromTheEnvironmentWarnsOncePerBadValue) {
  std::vector<std::string> seen;
  setLogCallback(
      [](void *user, int, const char *message) {
        static_cast<std::vector<std::string> *>(user)->push_back(message);
      },
      &seen);
  unsetenv("DLC_GEMM_LIBRARY");
  EXPECT_EQ(gemmLibraryPolicy(), GemmLibraryPolicy::kAuto);
  setenv("DLC_GEMM_LIBRARY", "off", 1);
  EXPECT_EQ(gemmLibraryPolicy(), GemmLibraryPolicy::kOff);
  setenv("DLC_GEMM_LIBRARY", "on", 1);
  EXPECT_EQ(gemmLibraryPolicy(), GemmLibraryPolicy::kOn);
  setenv("DLC_GEMM_LIBRARY", "cublas", 1);
  EXPECT_EQ(gemmLibraryPolicy(), GemmLibraryPolicy::kAuto);
  EXPECT_EQ(gemmLibraryPolicy(), GemmLibraryPolicy::kAuto);
  unsetenv("DLC_GEMM_LIBRARY");
  setLogCallback(nullptr, nullptr);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], "DLC_GEMM_LIBRARY='cublas' is not auto, on or off: taken as auto");
}

TEST(HostCores, RanksOnAHostShareItsCores) {
  std::map<std::string, std::string> vars;
  auto env = [&](const char *name) -> const char * {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  EXPECT_EQ(ranksOnThisHost(env), 1);
  vars["OMPI_COMM_WORLD_LOCAL_SIZE"] = "4";
  EXPECT_EQ(ranksOnThisHost(env), 4);
  vars["LOCAL_WORLD_SIZE"] = "2"; // torchrun's comes before Open MPI's
  EXPECT_EQ(ranksOnThisHost(env), 2);
  vars["DLC_LOCAL_WORLD_SIZE"] = "junk"; // not a count: the next source
  EXPECT_EQ(ranksOnThisHost(env), 2);
  vars["DLC_LOCAL_WORLD_SIZE"] = "3";
  EXPECT_EQ(ranksOnThisHost(env), 3);

  int cores = coresOfThisProcess();
  EXPECT_GE(cores, 1);
  vars.clear();
  EXPECT_EQ(defaultDeviceThreads(env), cores);
  // More ranks than cores: one thread each, unless the launcher bound
  // this process to its share already.
  vars["DLC_LOCAL_WORLD_SIZE"] = std::to_string(4 * cores);
  bool bound = cores < static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_EQ(defaultDeviceThreads(env), bound ? cores : 1);
  // DLC_NUM_THREADS (dlc --threads) wins over both.
  vars["DLC_NUM_THREADS"] = "7";
  EXPECT_EQ(defaultDeviceThreads(env), 7);
  vars["DLC_NUM_THREADS"] = "0"; // not a count: ignored
  EXPECT_EQ(defaultDeviceThreads(env), bound ? cores : 1);
}

} // namespace
} // namespace dlc::rt
