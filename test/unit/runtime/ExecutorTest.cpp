//===- ExecutorTest.cpp - runtime/executor: modules run end to end --------===//
//
// Modules from TestModules.h, their kernels compiled by the host compiler,
// run through Session; results compared exactly (integer-valued floats).
//
//===----------------------------------------------------------------------===//

#include "runtime/executor/Session.h"
#include "support/Init.h"
#include "test/unit/runtime/TestModules.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <cstdlib>
#include <new>
#include <thread>

// Every allocation of this test program through operator new, counted: a
// run of a session allocates nothing once warm (docs/design/2026-11-22-
// module-format.md §6), dynamic dimensions included.
static std::atomic<uint64_t> gAllocations{0};

void *operator new(size_t size) {
  gAllocations.fetch_add(1, std::memory_order_relaxed);
  if (void *p = std::malloc(size ? size : 1))
    return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }

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

TEST(Executor, DrawnStateHoldsTheInitialisersValuesAfterCreateAndReset) {
  format::ModuleWriter w;
  ASSERT_TRUE(testing::buildDrawnStateModule(&w).ok());
  Bytes b;
  ASSERT_TRUE(w.serialize(&b).ok());
  std::shared_ptr<const format::LoadedModule> m;
  ASSERT_TRUE(format::readModuleMemory(ByteSpan(b.data(), b.size()), &m).ok());
  auto s = session(m);
  ASSERT_TRUE(s);
  InitOptions normal;
  normal.std = 0.02, normal.seed = 7;
  InitOptions he;
  he.seed = 3;
  const HostTensor expected[] = {initParam(InitKind::Normal, normal, DType::F32, {3, 4}),
                                 initParam(InitKind::Zeros, {}, DType::F32, {2}),
                                 initParam(InitKind::He, he, DType::F32, {4, 2})};
  auto expectInitial = [&] {
    for (uint32_t i = 0; i < 3; ++i) {
      std::vector<uint8_t> state(expected[i].byteSize(), 0xff);
      ASSERT_TRUE(s->readState(i, state.data()).ok());
      EXPECT_EQ(0, std::memcmp(state.data(), expected[i].data(), state.size())) << "state " << i;
    }
  };
  expectInitial();
  // Overwrite the drawn state, then reset: drawn again, the same bits.
  std::vector<float> junk(12, 5.0f);
  ASSERT_TRUE(s->writeState(0, junk.data()).ok());
  ASSERT_TRUE(s->resetState().ok());
  expectInitial();
  // The He draw's scale is sqrt(2 / fan_in) (fan_in 4): not all zero.
  const float *h = reinterpret_cast<const float *>(expected[2].data());
  EXPECT_NE(h[0], 0.0f);
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

//===----------------------------------------------------------------------===//
// Dynamic dimensions (format 1.3)
//===----------------------------------------------------------------------===//

/// A run of the dynamic-* modules at N = n, with exactly n's rows of x, s
/// and y, each followed by guard rows: zeros after the inputs (the kernel
/// fails its data check on a 0, so reading past N's rows fails the run),
/// a sentinel after y (writing past them shows).
struct DynamicRun {
  static constexpr int64_t kGuardRows = 4;
  static constexpr float kSentinel = -12345;
  int64_t n;
  std::vector<float> x, s, b{1, -1, 3}, y;

  DynamicRun(int64_t n, int seed) : n(n) {
    x.assign((2 * n + kGuardRows) * 3, 0);
    s.assign(n + kGuardRows, 0);
    y.assign((2 * n + kGuardRows) * 3, kSentinel);
    for (int64_t i = 0; i < 2 * n * 3; ++i)
      x[i] = float((i * 7 + seed) % 11 + 1);
    for (int64_t i = 0; i < n; ++i)
      s[i] = float((i + seed) % 5 - 2);
  }
  Status run(Session &session, int64_t size) {
    const void *in[] = {x.data(), s.data(), b.data()};
    void *out[] = {y.data()};
    return session.run(in, 3, out, 1, nullptr, nullptr, size);
  }
  /// y's n rows against the reference, and the guard untouched.
  ::testing::AssertionResult matches() const {
    for (int64_t i = 0; i < 2 * n * 3; ++i)
      if (y[i] != testing::dynamicReference(x, s, b, i))
        return ::testing::AssertionFailure() << "N = " << n << ": y[" << i << "] is " << y[i]
                                             << ", not " << testing::dynamicReference(x, s, b, i);
    for (size_t i = 2 * n * 3; i < y.size(); ++i)
      if (y[i] != kSentinel)
        return ::testing::AssertionFailure() << "N = " << n << ": y[" << i
                                             << "] past N's rows was written";
    return ::testing::AssertionSuccess();
  }
};

/// Runs `variant` on `device` at N = 1, 3, max, 2, each in a fresh session
/// first (its staging never written before) and then in one session.
void runDynamicAtEveryN(const std::string &variant, const std::string &device,
                        bool expectStaged, bool deviceMemory = false) {
  auto m = load(variant);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->dynamicDims().size(), 1u);
  const int64_t max = m->dynamicDims()[0].max;
  std::unique_ptr<Session> shared;
  for (uint32_t threads : {1u, 3u}) {
    SessionOptions options;
    options.device.numThreads = threads;
    options.device.emulateDeviceMemory = deviceMemory;
    ASSERT_TRUE(Session::create(m, device, options, &shared).ok());
    for (int64_t n : {int64_t(1), int64_t(3), max, int64_t(2)}) {
      std::unique_ptr<Session> fresh;
      ASSERT_TRUE(Session::create(m, device, options, &fresh).ok());
      EXPECT_EQ(fresh->stagesDynamicTensor(false, 0), expectStaged) << variant;
      EXPECT_FALSE(fresh->stagesDynamicTensor(false, 2)); // b is static
      for (Session *session : {fresh.get(), shared.get()}) {
        DynamicRun run(n, int(n) + int(threads));
        Status st = run.run(*session, n);
        ASSERT_TRUE(st.ok()) << variant << " on " << device << ", N = " << n << ": "
                             << st.toString();
        EXPECT_TRUE(run.matches()) << variant << " on " << device << ", " << threads
                                   << " threads";
      }
    }
  }
}

// The launch's rows grow with N: on the CPU it runs over N's rows only, on
// the caller's memory (a read past them would hit the zeros and fail).
TEST(ExecutorDynamic, ScaledLaunchRunsTheFirstRowsInPlace) {
  runDynamicAtEveryN("dynamic", "cpu", /*expectStaged=*/false);
  auto s = session(load("dynamic"));
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->stagesDynamicTensor(false, 1));
  EXPECT_FALSE(s->stagesDynamicTensor(true, 0));
}

// A launch run in full (over all max rows): its inputs are staged, the rows
// past N filled with given rows (never zeros), its output copied back.
TEST(ExecutorDynamic, UnscaledLaunchRunsStagedWithTheRowsFilled) {
  runDynamicAtEveryN("dynamic-unscaled", "cpu", /*expectStaged=*/true);
  auto s = session(load("dynamic-unscaled"));
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->stagesDynamicTensor(false, 1));
  EXPECT_TRUE(s->stagesDynamicTensor(true, 0));
}

// A copy touches y: y is staged, x and s (read by the scaled launch only)
// stay in place.
TEST(ExecutorDynamic, OutputACopyWritesIsStagedTheInputsAreNot) {
  runDynamicAtEveryN("dynamic-copy", "cpu", /*expectStaged=*/false);
  auto s = session(load("dynamic-copy"));
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->stagesDynamicTensor(false, 1));
  EXPECT_TRUE(s->stagesDynamicTensor(true, 0));
}

// cuda-emu runs every launch in full: everything dynamic is staged.
TEST(ExecutorDynamic, CudaEmuStagesEveryDynamicTensor) {
  runDynamicAtEveryN("dynamic-emu", "cuda-emu", /*expectStaged=*/true);
}

// A device with memory of its own (CUDA; here cuda-emu pretending): only
// N's rows go up into the staging of every input, the rest are filled there
// by copies on the stream, and N's rows of the output come back.
TEST(ExecutorDynamic, DeviceMemoryStagesOnlyTheGivenRows) {
  runDynamicAtEveryN("dynamic-emu", "cuda-emu", /*expectStaged=*/true, /*deviceMemory=*/true);
  SessionOptions options;
  options.device.emulateDeviceMemory = true;
  std::unique_ptr<Session> s;
  ASSERT_TRUE(Session::create(load("dynamic-emu"), "cuda-emu", options, &s).ok());
  EXPECT_FALSE(s->device().sharesHostMemory());
}

// A scaled launch whose arena result a launch run in full reads runs in
// full too: the second launch never reads rows beyond N that nobody wrote
// (zeros in a fresh session, which its data check refuses).
TEST(ExecutorDynamic, ScaledLaunchFeedingAFullOneRunsInFull) {
  auto m = load("dynamic-chained");
  ASSERT_TRUE(m);
  for (int64_t n : {1, 3, 8}) {
    auto s = session(m, 2);
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->stagesDynamicTensor(false, 0)); // read by a launch run in full now
    EXPECT_TRUE(s->stagesDynamicTensor(true, 0));
    DynamicRun run(n, 3);
    run.b = {5, 5, 5}; // the first launch's result is never 0
    Status st = run.run(*s, n);
    ASSERT_TRUE(st.ok()) << "N = " << n << ": " << st.toString();
    std::vector<float> first(2 * n * 3);
    for (int64_t i = 0; i < 2 * n * 3; ++i)
      first[i] = testing::dynamicReference(run.x, run.s, run.b, i);
    for (int64_t i = 0; i < 2 * n * 3; ++i)
      EXPECT_EQ(run.y[i], testing::dynamicReference(first, run.s, run.b, i)) << i;
    for (size_t i = 2 * n * 3; i < run.y.size(); ++i)
      EXPECT_EQ(run.y[i], DynamicRun::kSentinel) << i;
  }
}

// Grains of 1 to max rows: the prefix's chunks start at multiples of the
// grain (ThreadPool), so any grain gives the same rows.
TEST(ExecutorDynamic, ScaledLaunchesOfAnyGrain) {
  for (int64_t grain : {2, 3, 16}) {
    format::ModuleWriter w;
    testing::DynamicTweaks t;
    t.grain = grain;
    ASSERT_TRUE(testing::buildDynamicModule(testing::kDynamicMax, t, &w).ok());
    Bytes b;
    ASSERT_TRUE(w.serialize(&b).ok());
    std::shared_ptr<const format::LoadedModule> m;
    ASSERT_TRUE(format::readModuleMemory(ByteSpan(b.data(), b.size()), &m).ok());
    auto s = session(m, 4);
    ASSERT_TRUE(s);
    for (int64_t n : {1, 5, 8}) {
      DynamicRun run(n, 1);
      ASSERT_TRUE(run.run(*s, n).ok()) << grain;
      EXPECT_TRUE(run.matches()) << "grain " << grain;
    }
  }
}

TEST(ExecutorDynamic, SizeZeroIsMaxAndSizesOutsideTheRangeAreRefused) {
  auto s = session(load("dynamic"));
  ASSERT_TRUE(s);
  DynamicRun full(testing::kDynamicMax, 2);
  ASSERT_TRUE(full.run(*s, 0).ok());
  EXPECT_TRUE(full.matches());
  for (int64_t n : {int64_t(-1), testing::kDynamicMax + 1}) {
    DynamicRun run(1, 0);
    Status st = run.run(*s, n);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("of dynamic dimension 'N' is outside [1, 8]"), std::string::npos)
        << st.message();
  }
  auto add = session(load("add"));
  ASSERT_TRUE(add);
  std::vector<float> a(6), b(6), c(6);
  const void *in[] = {a.data(), b.data()};
  void *out[] = {c.data()};
  Status st = add->run(in, 2, out, 1, nullptr, nullptr, 3);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("N = 3 given, but the module has no dynamic dimension"),
            std::string::npos)
      << st.message();
}

// A data check fails on N's rows as on a static module, at N < max, staged
// or not; the session stays usable.
TEST(ExecutorDynamic, DataChecksFailOnTheGivenRows) {
  for (const char *variant : {"dynamic", "dynamic-unscaled"}) {
    auto s = session(load(variant));
    ASSERT_TRUE(s);
    DynamicRun bad(3, 0);
    bad.x[7] = 0; // row 2
    Status st = bad.run(*s, 3);
    EXPECT_EQ(st.code(), StatusCode::kDataError) << variant;
    EXPECT_NE(st.message().find("model.dlg:2:5: div: integer division by zero"),
              std::string::npos)
        << st.message();
    DynamicRun good(3, 0);
    ASSERT_TRUE(good.run(*s, 3).ok()) << variant;
    EXPECT_TRUE(good.matches());
  }
}

// Warm sessions run without allocating, at max and below, staged or not.
TEST(ExecutorDynamic, RunsAllocateNothing) {
  for (const char *variant : {"add", "dynamic", "dynamic-unscaled", "dynamic-copy"}) {
    const uint64_t atStart = gAllocations.load();
    auto m = load(variant);
    auto s = session(m, 2);
    ASSERT_TRUE(s);
    ASSERT_GT(gAllocations.load(), atStart); // the counter counts
    const bool dynamic = !m->dynamicDims().empty();
    DynamicRun small(2, 1), full(testing::kDynamicMax, 1);
    std::vector<float> a(6, 1), b(6, 2), c(6);
    auto runOnce = [&](int64_t n) {
      if (!dynamic) {
        const void *in[] = {a.data(), b.data()};
        void *out[] = {c.data()};
        return s->run(in, 2, out, 1);
      }
      return (n == 2 ? small : full).run(*s, n);
    };
    ASSERT_TRUE(runOnce(2).ok());
    ASSERT_TRUE(runOnce(testing::kDynamicMax).ok());
    const uint64_t before = gAllocations.load();
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(runOnce(2).ok());
      ASSERT_TRUE(runOnce(testing::kDynamicMax).ok());
    }
    EXPECT_EQ(gAllocations.load() - before, 0u) << variant;
  }
}

} // namespace
} // namespace dlc::rt
