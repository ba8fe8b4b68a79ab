//===- ThreadPoolTest.cpp - runtime/hal/cpu/ThreadPool --------------------===//

#include "runtime/hal/cpu/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace dlc::rt::hal::cpu {
namespace {

/// Runs parallelFor and returns the chunks it made, sorted.
std::vector<std::pair<int64_t, int64_t>> chunks(ThreadPool &pool, int64_t extent, int64_t grain) {
  std::mutex mutex;
  std::set<std::pair<int64_t, int64_t>> seen;
  pool.parallelFor(extent, grain, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mutex);
    seen.insert({begin, end});
  });
  return {seen.begin(), seen.end()};
}

TEST(ThreadPool, ChunksPartitionTheRangeOnGrainBoundaries) {
  for (uint32_t threads : {1u, 2u, 3u, 8u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threadCount(), threads);
    for (int64_t extent : {1, 2, 7, 9, 64, 1000, 1001})
      for (int64_t grain : {1, 4, 16, 5000}) {
        auto c = chunks(pool, extent, grain);
        ASSERT_FALSE(c.empty());
        EXPECT_LE(c.size(), threads);
        int64_t next = 0;
        for (size_t i = 0; i < c.size(); ++i) {
          EXPECT_EQ(c[i].first, next) << extent << "/" << grain << " threads " << threads;
          EXPECT_EQ(c[i].first % grain, 0);
          EXPECT_GT(c[i].second, c[i].first);
          if (i + 1 < c.size())
            EXPECT_GE(c[i].second - c[i].first, grain);
          next = c[i].second;
        }
        EXPECT_EQ(next, extent);
      }
  }
}

// DLC_DETERMINISTIC=1 (fixedChunks): the same chunks on every thread
// count, so that kernels calling a GEMM per chunk compute the same bits.
TEST(ThreadPool, FixedChunksDoNotDependOnTheThreadCount) {
  ThreadPool one(1, true, true), two(2, true, true), five(5, true, true);
  for (int64_t extent : {1, 7, 64, 1000, 1001})
    for (int64_t grain : {1, 4, 16}) {
      auto c = chunks(one, extent, grain);
      EXPECT_EQ(c, chunks(two, extent, grain)) << extent << "/" << grain;
      EXPECT_EQ(c, chunks(five, extent, grain)) << extent << "/" << grain;
      EXPECT_LE(c.size(), ThreadPool::kFixedChunks);
      EXPECT_EQ(c.back().second, extent);
    }
}

TEST(ThreadPool, ManyJobsInARowEachRunEveryIteration) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  for (int job = 0; job < 2000; ++job)
    pool.parallelFor(100, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        sum += i;
    });
  EXPECT_EQ(sum.load(), 2000 * 4950);
}

TEST(ThreadPool, ChunkSize) {
  EXPECT_EQ(ThreadPool::chunkSize(9, 4, 3), 4);
  EXPECT_EQ(ThreadPool::chunkSize(10, 1, 2), 5);
  EXPECT_EQ(ThreadPool::chunkSize(1, 1, 16), 1);
}

} // namespace
} // namespace dlc::rt::hal::cpu
