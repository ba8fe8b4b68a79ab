//===- Loader.h - shuffled batches, prefetched on a thread ------*- C++ -*-===//
//
// Batches of a dataset in a seeded order, assembled on a background thread
// while the caller runs a step on the previous one.
//
// The order. Epoch e visits the samples in the permutation
// epochPermutation(seed, e, n), a function of (seed, e, n) only, so that a
// run resumed at (epoch, batch) replays exactly the batches the interrupted
// run would have seen. The algorithm, for re-implementation (all arithmetic
// on uint64, modulo 2^64; SplitMix64 as support/Init.h describes it):
//
//   epochSeed = SplitMix64(seed).next() ^ e     (a bijection of seed, then e)
//   g         = SplitMix64(epochSeed)
//   p         = [0, 1, ..., n-1]
//   for i = n-1 down to 1:                        (Fisher-Yates)
//     j = g.next() % (i + 1);  swap(p[i], p[j])
//
// (The modulo's bias is below n / 2^64.) Without shuffling, p is the
// identity in every epoch.
//
// Batches. Batch b of an epoch is the global batch p[b*B, min((b+1)*B, n)):
// ceil(n / B) batches, the last one partial unless `dropLast` drops it. Rank
// r of R (data parallelism) takes the contiguous slice [g*r/R, g*(r+1)/R)
// of a global batch of g samples (B must be a multiple of R, so full
// batches split evenly). Each batch is copied into one contiguous host
// tensor per column (driver/data/Dataset.h, gatherBatch).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_DATA_LOADER_H
#define DLC_DRIVER_DATA_LOADER_H

#include "driver/data/Dataset.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

namespace dlc::data {

/// The order of the samples in epoch `epoch` (see the file comment).
std::vector<int64_t> epochPermutation(uint64_t seed, int64_t epoch,
                                      int64_t numSamples);

struct LoaderOptions {
  /// B: samples per global batch.
  int64_t batchSize = 1;
  /// Drop the last batch of an epoch when it has fewer than B samples.
  bool dropLast = false;
  /// false: every epoch in the dataset's order (evaluation).
  bool shuffle = true;
  uint64_t seed = 0;
  /// This process's rank r and the number of ranks R.
  int64_t rank = 0, worldSize = 1;
  /// Batches assembled ahead of the consumer (the queue's bound), >= 1.
  size_t prefetch = 2;
};

/// An empty string, or why `options` cannot batch `numSamples` samples
/// ("--batch-size 6 is not a multiple of the 4 ranks").
std::string checkLoaderOptions(const LoaderOptions &options,
                               int64_t numSamples);

/// ceil(n / B), or floor(n / B) with `dropLast`.
int64_t batchesPerEpoch(int64_t numSamples, int64_t batchSize, bool dropLast);

/// The sample indices of rank r's shard of batch `batch` in `permutation`.
std::vector<int64_t> shardIndices(const std::vector<int64_t> &permutation,
                                  const LoaderOptions &options, int64_t batch);

struct Batch {
  int64_t epoch = 0;
  /// Within the epoch.
  int64_t index = 0;
  /// Samples in the global batch (all ranks together).
  int64_t globalSize = 0;
  /// This rank's shard, one tensor per column in the dataset's order, of
  /// shape [shard size, spec.shape...].
  std::vector<HostTensor> tensors;
};

class Loader {
public:
  /// `dataset` must outlive the loader; `options` must pass
  /// checkLoaderOptions.
  Loader(const Dataset &dataset, LoaderOptions options);
  ~Loader();
  Loader(const Loader &) = delete;
  Loader &operator=(const Loader &) = delete;

  int64_t batchesPerEpoch() const;

  /// Starts the background thread at batch `batch` of epoch `epoch`; it
  /// assembles every batch from there to the end of epoch `endEpoch - 1`,
  /// at most `prefetch` ahead of next(). A running thread is stopped first.
  void start(int64_t epoch, int64_t batch, int64_t endEpoch);
  /// Waits for the next batch; false once the range is done. Rethrows what
  /// the thread threw (std::bad_alloc).
  bool next(Batch &out);
  /// Stops the thread and drops the queued batches (the destructor does).
  void stop();

private:
  void produce(int64_t epoch, int64_t batch, int64_t endEpoch);

  const Dataset &dataset_;
  LoaderOptions options_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> queue_;
  bool stopping_ = false, finished_ = false;
  std::exception_ptr failure_;
};

} // namespace dlc::data

#endif // DLC_DRIVER_DATA_LOADER_H
