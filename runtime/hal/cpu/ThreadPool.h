//===- ThreadPool.h - Split a range over worker threads ---------*- C++ -*-===//
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dlc::rt::hal::cpu {

/// `threads` workers in all, the calling thread being one of them (so a pool
/// of 1 starts no thread). parallelFor is called by one thread at a time.
/// With `flushDenormals`, every chunk runs with denormal floats flushed to
/// zero (Denormals.h); the calling thread's mode is restored on return.
/// With `fixedChunks`, a range splits into the same chunks whatever the
/// number of threads (kFixedChunks of them at most), so that results do not
/// depend on it: a GEMM library may round a block of rows differently by
/// its height (oneDNN's AVX2 kernels do), and a kernel calls it per chunk.
class ThreadPool {
public:
  static constexpr uint32_t kFixedChunks = 8;
  explicit ThreadPool(uint32_t threads, bool flushDenormals = true, bool fixedChunks = false);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  uint32_t threadCount() const { return static_cast<uint32_t>(workers_.size()) + 1; }

  /// Calls fn(begin, end) over chunks that partition [0, extent): each chunk
  /// starts at a multiple of `grain` and holds at least `grain` iterations
  /// except the last; at most threadCount() chunks (kFixedChunks with
  /// fixedChunks), run concurrently.
  /// Returns when all have returned. extent >= 1, grain >= 1.
  void parallelFor(int64_t extent, int64_t grain,
                   const std::function<void(int64_t, int64_t)> &fn);

  /// The chunk size parallelFor uses (exposed for tests).
  static int64_t chunkSize(int64_t extent, int64_t grain, uint32_t threads);

private:
  void workerLoop();
  void runChunks();

  bool flushDenormals_;
  bool fixedChunks_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  /// Bumped (under mutex_) for each job and at shutdown; polled unlocked.
  std::atomic<uint64_t> generation_{0};
  bool stopping_ = false;
  int sleepers_ = 0;            ///< workers waiting on wake_, guarded by mutex_
  bool callerSleeping_ = false; ///< guarded by mutex_
  // The job of the current generation.
  const std::function<void(int64_t, int64_t)> *fn_ = nullptr;
  int64_t extent_ = 0, chunk_ = 1, chunkCount_ = 0;
  int64_t nextChunk_ = 0; ///< guarded by mutex_
  /// Chunks not yet finished: changed under mutex_, polled unlocked.
  std::atomic<int64_t> pending_{0};
};

} // namespace dlc::rt::hal::cpu
