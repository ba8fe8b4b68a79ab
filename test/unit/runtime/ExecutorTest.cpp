//===- ExecutorTest.cpp - runtime/executor: modules run end to end --------===//
//
// Modules from TestModules.h, their kernels compiled by the host compiler,
// run through Session; results compared exactly (integer-valued floats).
//
//===----------------------------------------------------------------------===//

#include "runtime/executor/Session.h"
#include "test/unit/runtime/TestModules.h"

#include <gtest/gtest.h>

#include <thread>

namespace dlc::rt {
namespace {

using testing::Bytes;

std::shared_ptr<const format::LoadedModule> load(const std::string &variant) {
  Bytes b;
  Status s = testing::buildVariant(variant, &b);
  EXPECT_TRUE(s.ok()) << s.toString();
  std::shared_ptr<const format::LoadedModule> m;
  s = format::readModuleMemory(ByteSpan(b.data(), b.size()), &m, variant + ".dlcm");
  EXPECT_TRUE(s.ok()) << s.toString();
  return m;
}

std::unique_ptr<Session> session(std::shared_ptr<const format::LoadedModule> m,
                                 uint32_t threads = 0) {
  SessionOptions options;
  options.device.numThreads = threads;
  std::unique_ptr<Session> s;
  Status status = Session::create(std::move(m), "cpu", options, &s);
  EXPECT_TRUE(status.ok()) << status.toString();
  return s;
}

TEST(Executor, AddRunsExactly) {
  auto s = session(load("add"));
  ASSERT_TRUE(s);
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30, 40, 50, 60}, c(6, -1);
  const void *in[] = {a.data(), b.data()};
  void *out[] = {c.data()};
  ASSERT_TRUE(s->run(in, 2, out, 1).ok());
  EXPECT_EQ(c, (std::vector<float>{11, 22, 33, 44, 55, 66}));
}

/// relu(x @ w + b) and x @ w, in double (exact for these small integers).
void mlpReference(const std::vector<float> &x, int64_t m, int64_t k, int64_t n,
                  std::vector<float> *y, std::vector<float> *h) {
  y->assign(m * n, 0);
  h->assign(m * n, 0);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t i = 0; i < k; ++i)
        acc += double(x[r * k + i]) * testing::mlpWeight(i * n + j);
      (*h)[r * n + j] = float(acc);
      double v = acc + testing::mlpBias(j);
      (*y)[r * n + j] = float(v > 0 ? v : 0);
    }
}

TEST(Executor, MlpWithWeightsArenaAndCopyRunsExactlyOnAnyThreadCount) {
  auto m = load("mlp");
  std::vector<float> x(4 * 8);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(int(i % 9) - 4);
  std::vector<float> yRef, hRef;
  mlpReference(x, 4, 8, 5, &yRef, &hRef);
  int positives = 0;
  for (float v : yRef)
    positives += v > 0;
  ASSERT_GT(positives, 0); // the relu is exercised both ways
  ASSERT_LT(positives, 20);
  for (uint32_t threads : {1u, 2u, 4u}) {
    auto s = session(m, threads);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->device().limits().concurrency, threads);
    for (int repeat = 0; repeat < 3; ++repeat) {
      std::vector<float> y(20, -7), h(20, -7);
      const void *in[] = {x.data()};
      void *out[] = {y.data(), h.data()};
      ASSERT_TRUE(s->run(in, 1, out, 2).ok());
      EXPECT_EQ(y, yRef) << threads << " threads";
      EXPECT_EQ(h, hRef) << threads << " threads";
    }
  }
}

TEST(Executor, ManySessionsShareOneModuleAcrossThreads) {
  auto m = load("add");
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      auto s = session(m, 2);
      if (!s) {
        failures[t] = 1;
        return;
      }
      for (int i = 0; i < 200; ++i) {
        std::vector<float> a(6, float(t)), b(6, float(i)), c(6);
        const void *in[] = {a.data(), b.data()};
        void *out[] = {c.data()};
        if (!s->run(in, 2, out, 1).ok() || c != std::vector<float>(6, float(t + i)))
          failures[t]++;
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

TEST(Executor, WrongArgumentCountsAreRefused) {
  auto s = session(load("add"));
  ASSERT_TRUE(s);
  Status st = s->run(nullptr, 0, nullptr, 0);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("the module has 2 and 1"), std::string::npos) << st.message();
}

TEST(Executor, DevicesThatAreNotHereSayWhy) {
  auto m = load("add");
  for (const char *device : {"cuda:0", "cuda", "cuda-emu"}) {
    std::unique_ptr<Session> s;
    Status st = Session::create(m, device, {}, &s);
    EXPECT_EQ(st.code(), StatusCode::kUnavailable) << device;
    // No driver or GPU here; cuda-emu exists but runs only cuda kernels.
    EXPECT_TRUE(st.message().rfind("no CUDA", 0) == 0 ||
                st.message().find("targets cpu, not device 'cuda-emu'") != std::string::npos)
        << st.message();
  }
  std::unique_ptr<Session> s;
  Status st = Session::create(m, "tpu", {}, &s);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("unknown device 'tpu'"), std::string::npos);
}

TEST(Executor, ArenaOverAConfiguredMemoryLimitIsRefusedBeforeAllocating) {
  SessionOptions options;
  options.device.maxMemoryBytes = 100; // the mlp's arena is 144 bytes
  std::unique_ptr<Session> s;
  Status st = Session::create(load("mlp"), "cpu", options, &s);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(st.message().find("arena of 144 bytes is over the memory limit"), std::string::npos)
      << st.message();
}

} // namespace
} // namespace dlc::rt
