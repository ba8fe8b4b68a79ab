//===- MemoryPackingTest.cpp - the memory packers -------------------------===//

#include "passes/analysis/MemoryPacking.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

using namespace dlc;

namespace {

constexpr int64_t U = 256; // one unit of the arena alignment

/// The smallest arena over every placement of the blocks at multiples of
/// the unit below `limit`: brute force, for a handful of blocks.
int64_t bruteForce(const std::vector<LiveRange> &ranges, int64_t limit) {
  std::vector<int64_t> offsets(ranges.size());
  int64_t best = limit;
  std::function<void(size_t, int64_t)> place = [&](size_t i, int64_t top) {
    if (top >= best)
      return;
    if (i == ranges.size()) {
      best = top;
      return;
    }
    for (int64_t o = 0; o + ranges[i].size <= limit; o += U) {
      bool fits = true;
      for (size_t j = 0; j < i && fits; ++j)
        fits = !liveAtOnce(ranges[i], ranges[j]) ||
               o + ranges[i].size <= offsets[j] ||
               offsets[j] + ranges[j].size <= o;
      if (!fits)
        continue;
      offsets[i] = o;
      place(i + 1, std::max(top, o + ranges[i].size));
    }
  };
  place(0, 0);
  return best;
}

std::vector<LiveRange> randomRanges(std::mt19937_64 &rng, size_t n,
                                    int64_t steps, int64_t maxUnits) {
  std::vector<LiveRange> ranges;
  for (size_t i = 0; i < n; ++i) {
    int64_t first = rng() % steps;
    int64_t last = first + rng() % (steps - first);
    ranges.push_back({int64_t(1 + rng() % maxUnits) * U, first, last});
  }
  return ranges;
}

TEST(MemoryPacking, PeakIsTheLargestSumLiveAtOneStep) {
  EXPECT_EQ(peakLiveSize({}), 0);
  EXPECT_EQ(peakLiveSize({{U, 0, 1}, {2 * U, 1, 2}, {4 * U, 2, 2}}), 6 * U);
  EXPECT_EQ(peakLiveSize({{U, 0, 0}, {2 * U, 1, 1}}), 2 * U);
}

// TFLite's rule: the smallest gap that holds the block, not the lowest.
TEST(MemoryPacking, GreedyBySizeTakesTheSmallestGap) {
  std::vector<LiveRange> ranges = {
      {5 * U, 1, 2}, // at 0
      {4 * U, 1, 3}, // above it, at 5
      {3 * U, 2, 2}, // above both, at 9
      {2 * U, 2, 3}, // at 12
      {U, 3, 3},     // live with the 4 and the 2 only: gaps [0, 5) and
                     // [9, 12); the smaller one wins
  };
  Packing p = packGreedyBySize(ranges);
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{0, 5 * U, 9 * U, 12 * U, 9 * U}));
  EXPECT_EQ(p.size, 14 * U);
  EXPECT_EQ(p.packer, "greedy-by-size");
}

TEST(MemoryPacking, BestBeatsGreedyBySizeWhereItMissesTheBound) {
  // The dlc-plan-memory lit test's chain: a, b, c, d.
  std::vector<LiveRange> ranges = {
      {4 * U, 0, 1}, {4 * U, 1, 2}, {U, 2, 3}, {4 * U, 3, 3}};
  EXPECT_EQ(packGreedyBySize(ranges).size, 9 * U);
  Packing best = packBest(ranges);
  EXPECT_EQ(best.size, 8 * U);
  EXPECT_TRUE(findOverlaps(ranges, best).empty());
}

TEST(MemoryPacking, RandomPackingsAreValidAndNeverWorseThanGreedy) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    auto ranges = randomRanges(rng, 1 + rng() % 60, 30, 16);
    Packing greedy = packGreedyBySize(ranges), best = packBest(ranges);
    int64_t bound = peakLiveSize(ranges);
    ASSERT_TRUE(findOverlaps(ranges, greedy).empty()) << trial;
    ASSERT_TRUE(findOverlaps(ranges, best).empty()) << trial;
    EXPECT_GE(greedy.size, bound);
    EXPECT_GE(best.size, bound);
    EXPECT_LE(best.size, greedy.size);
    for (size_t i = 0; i < ranges.size(); ++i) {
      EXPECT_EQ(best.offsets[i] % U, 0);
      EXPECT_LE(best.offsets[i] + ranges[i].size, best.size);
    }
  }
}

// With the heuristics and the local search off, the exact search alone
// must reach the optimum that brute force finds.
TEST(MemoryPacking, ExactSearchIsOptimalOnSmallInputs) {
  std::mt19937_64 rng(11);
  PackingOptions exactOnly;
  exactOnly.perturbations = 0;
  for (int trial = 0; trial < 150; ++trial) {
    auto ranges = randomRanges(rng, 2 + rng() % 5, 6, 4);
    int64_t limit = 0;
    for (const LiveRange &r : ranges)
      limit += r.size;
    Packing best = packBest(ranges, exactOnly);
    ASSERT_TRUE(findOverlaps(ranges, best).empty()) << trial;
    EXPECT_EQ(best.size, bruteForce(ranges, limit)) << trial;
  }
}

TEST(MemoryPacking, SameInputSamePacking) {
  std::mt19937_64 rng(3);
  auto ranges = randomRanges(rng, 80, 40, 32);
  Packing a = packBest(ranges), b = packBest(ranges);
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_EQ(a.packer, b.packer);
}

} // namespace
