//===- ThreadPool.cpp - Split a range over worker threads -----------------===//

#include "runtime/hal/cpu/ThreadPool.h"

#include "runtime/hal/cpu/Denormals.h"

#include <algorithm>

namespace dlc::rt::hal::cpu {

ThreadPool::ThreadPool(uint32_t threads, bool flushDenormals)
    : flushDenormals_(flushDenormals) {
  for (uint32_t i = 1; i < std::max<uint32_t>(threads, 1); ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
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
  const int64_t chunk = chunkSize(extent, grain, threadCount());
  const int64_t chunkCount = (extent + chunk - 1) / chunk;
  if (chunkCount == 1 || workers_.empty()) {
    for (int64_t begin = 0; begin < extent; begin += chunk)
      fn(begin, std::min(extent, begin + chunk));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    extent_ = extent;
    chunk_ = chunk;
    chunkCount_ = chunkCount;
    nextChunk_ = 0;
    pending_ = chunkCount;
    ++generation_;
  }
  wake_.notify_all();
  runChunks();
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return pending_ == 0; });
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
    bool last;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last = --pending_ == 0;
    }
    if (last)
      done_.notify_all();
  }
}

void ThreadPool::workerLoop() {
  ScopedFlushDenormals mode(flushDenormals_);
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_)
        return;
      seen = generation_;
    }
    runChunks();
  }
}

} // namespace dlc::rt::hal::cpu
