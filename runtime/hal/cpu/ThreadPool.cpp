//===- ThreadPool.cpp - Split a range over worker threads -----------------===//
//
// Chunks are claimed under one mutex (uncontended: tens of nanoseconds).
// Waiting is what costs: a futex sleep and wake-up is several microseconds,
// paid by every kernel of a plan when the pool sleeps between them, which
// for a small model's train step was more than the second thread gained.
// So a worker spins for a short while (kSpinRounds pauses, tens of
// microseconds) on the job counter before it sleeps, and the caller spins on
// the chunks left before it sleeps; the condition variables are signalled
// only when someone sleeps.
//
//===----------------------------------------------------------------------===//

#include "runtime/hal/cpu/ThreadPool.h"

#include "runtime/hal/cpu/Denormals.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DLC_CPU_RELAX() _mm_pause()
#else
#define DLC_CPU_RELAX() std::this_thread::yield()
#endif

namespace dlc::rt::hal::cpu {

namespace {
/// How many times a waiting thread polls before it sleeps.
constexpr int kSpinRounds = 1 << 12;
} // namespace

ThreadPool::ThreadPool(uint32_t threads, bool flushDenormals, bool fixedChunks)
    : flushDenormals_(flushDenormals), fixedChunks_(fixedChunks) {
  for (uint32_t i = 1; i < std::max<uint32_t>(threads, 1); ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

int64_t ThreadPool::chunkSize(int64_t extent, int64_t grain, uint32_t threads) {
  const int64_t grains = (extent + grain - 1) / grain;
  const int64_t chunks = std::min<int64_t>(grains, std::max<uint32_t>(threads, 1));
  const int64_t grainsPerChunk = (grains + chunks - 1) / chunks;
  return grainsPerChunk * grain;
}

void ThreadPool::parallelFor(int64_t extent, int64_t grain,
                             const std::function<void(int64_t, int64_t)> &fn) {
  if (extent <= 0)
    return;
  ScopedFlushDenormals mode(flushDenormals_);
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunk = chunkSize(extent, grain, fixedChunks_ ? kFixedChunks : threadCount());
  const int64_t chunkCount = (extent + chunk - 1) / chunk;
  if (chunkCount == 1 || workers_.empty()) {
    for (int64_t begin = 0; begin < extent; begin += chunk)
      fn(begin, std::min(extent, begin + chunk));
    return;
  }
  bool wakeSleepers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    extent_ = extent;
    chunk_ = chunk;
    chunkCount_ = chunkCount;
    nextChunk_ = 0;
    pending_.store(chunkCount);
    generation_.fetch_add(1);
    wakeSleepers = sleepers_ > 0;
  }
  if (wakeSleepers)
    wake_.notify_all();
  runChunks();
  for (int i = 0; i < kSpinRounds && pending_.load() != 0; ++i)
    DLC_CPU_RELAX();
  std::unique_lock<std::mutex> lock(mutex_);
  callerSleeping_ = true;
  done_.wait(lock, [this] { return pending_.load() == 0; });
  callerSleeping_ = false;
  fn_ = nullptr;
}

void ThreadPool::runChunks() {
  for (;;) {
    int64_t index;
    const std::function<void(int64_t, int64_t)> *fn;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!fn_ || nextChunk_ >= chunkCount_)
        return;
      index = nextChunk_++;
      fn = fn_;
    }
    const int64_t begin = index * chunk_;
    (*fn)(begin, std::min(extent_, begin + chunk_));
    bool wakeCaller;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      wakeCaller = pending_.fetch_sub(1) == 1 && callerSleeping_;
    }
    if (wakeCaller)
      done_.notify_all();
  }
}

void ThreadPool::workerLoop() {
  ScopedFlushDenormals mode(flushDenormals_);
  uint64_t seen = 0;
  for (;;) {
    for (int i = 0; i < kSpinRounds && generation_.load() == seen; ++i)
      DLC_CPU_RELAX();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ++sleepers_;
      wake_.wait(lock, [&] { return generation_.load() != seen; });
      --sleepers_;
      if (stopping_)
        return;
      seen = generation_.load();
    }
    runChunks();
  }
}

} // namespace dlc::rt::hal::cpu
