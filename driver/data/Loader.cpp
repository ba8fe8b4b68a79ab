//===- Loader.cpp - shuffled batches, prefetched on a thread --------------===//

#include "driver/data/Loader.h"

#include "support/Init.h"

#include <numeric>

namespace dlc::data {

std::vector<int64_t> epochPermutation(uint64_t seed, int64_t epoch,
                                      int64_t numSamples) {
  std::vector<int64_t> p(static_cast<size_t>(numSamples));
  std::iota(p.begin(), p.end(), int64_t(0));
  SplitMix64 g(SplitMix64(seed).next() ^ static_cast<uint64_t>(epoch));
  for (int64_t i = numSamples - 1; i >= 1; --i) {
    auto j = static_cast<int64_t>(g.next() % static_cast<uint64_t>(i + 1));
    std::swap(p[i], p[j]);
  }
  return p;
}

std::string checkLoaderOptions(const LoaderOptions &options,
                               int64_t numSamples) {
  if (options.batchSize < 1)
    return "the batch size must be at least 1, got " +
           std::to_string(options.batchSize);
  if (options.worldSize < 1 || options.rank < 0 ||
      options.rank >= options.worldSize)
    return "rank " + std::to_string(options.rank) + " is not in [0, " +
           std::to_string(options.worldSize) + ")";
  if (options.batchSize % options.worldSize != 0)
    return "the batch size " + std::to_string(options.batchSize) +
           " is not a multiple of the " + std::to_string(options.worldSize) +
           " ranks";
  if (options.prefetch < 1)
    return "the loader must prefetch at least one batch";
  if (batchesPerEpoch(numSamples, options.batchSize, options.dropLast) == 0)
    return std::to_string(numSamples) + " samples make no batch of " +
           std::to_string(options.batchSize) +
           (options.dropLast ? " (the partial batch is dropped)" : "");
  return "";
}

int64_t batchesPerEpoch(int64_t numSamples, int64_t batchSize, bool dropLast) {
  return dropLast ? numSamples / batchSize
                  : (numSamples + batchSize - 1) / batchSize;
}

std::vector<int64_t> shardIndices(const std::vector<int64_t> &permutation,
                                  const LoaderOptions &options, int64_t batch) {
  int64_t n = static_cast<int64_t>(permutation.size());
  int64_t begin = batch * options.batchSize;
  int64_t size = std::min(options.batchSize, n - begin);
  int64_t from = begin + size * options.rank / options.worldSize;
  int64_t to = begin + size * (options.rank + 1) / options.worldSize;
  return std::vector<int64_t>(permutation.begin() + from,
                              permutation.begin() + to);
}

Loader::Loader(const Dataset &dataset, LoaderOptions options)
    : dataset_(dataset), options_(options) {}

Loader::~Loader() { stop(); }

int64_t Loader::batchesPerEpoch() const {
  return data::batchesPerEpoch(dataset_.numSamples, options_.batchSize,
                               options_.dropLast);
}

void Loader::start(int64_t epoch, int64_t batch, int64_t endEpoch) {
  stop();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = finished_ = false;
    failure_ = nullptr;
  }
  thread_ = std::thread(&Loader::produce, this, epoch, batch, endEpoch);
}

void Loader::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable())
    thread_.join();
  queue_.clear();
}

void Loader::produce(int64_t epoch, int64_t batch, int64_t endEpoch) {
  try {
    int64_t perEpoch = batchesPerEpoch();
    for (; epoch < endEpoch; ++epoch, batch = 0) {
      std::vector<int64_t> order(static_cast<size_t>(dataset_.numSamples));
      if (options_.shuffle)
        order = epochPermutation(options_.seed, epoch, dataset_.numSamples);
      else
        std::iota(order.begin(), order.end(), int64_t(0));
      for (; batch < perEpoch; ++batch) {
        Batch next;
        next.epoch = epoch;
        next.index = batch;
        next.globalSize = std::min(options_.batchSize,
                                   dataset_.numSamples - batch * options_.batchSize);
        next.tensors = gatherBatch(dataset_, shardIndices(order, options_, batch));
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] {
          return stopping_ || queue_.size() < options_.prefetch;
        });
        if (stopping_)
          return;
        queue_.push_back(std::move(next));
        changed_.notify_all();
      }
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    failure_ = std::current_exception();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  finished_ = true;
  changed_.notify_all();
}

bool Loader::next(Batch &out) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !queue_.empty() || finished_ || stopping_; });
  if (!queue_.empty()) {
    out = std::move(queue_.front());
    queue_.pop_front();
    changed_.notify_all();
    return true;
  }
  if (failure_)
    std::rethrow_exception(failure_);
  return false;
}

} // namespace dlc::data
