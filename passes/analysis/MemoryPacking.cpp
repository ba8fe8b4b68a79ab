//===- MemoryPacking.cpp - offsets for live ranges in one arena -----------===//
//
// Every packer here places blocks one at a time in some order, each into a
// gap among the blocks already placed that are live at the same time (the
// rest of the arena is free for it). They differ in the order and in which
// gap: packBest tries several of both, then perturbs the best order, and
// for a handful of blocks searches all compact packings exactly.
//
//===----------------------------------------------------------------------===//

#include "passes/analysis/MemoryPacking.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <numeric>

namespace dlc {

namespace {

/// Which gap a block goes into.
enum class Fit {
  /// The smallest gap that holds it (TFLite's rule).
  smallestGap,
  /// The lowest gap that holds it.
  lowestOffset,
};

/// A small deterministic generator (SplitMix64), so that the packing is the
/// same on every platform.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n ? next() % n : 0; }
};

} // namespace

using Order = std::vector<unsigned>;

int64_t peakLiveSize(const std::vector<LiveRange> &ranges) {
  std::vector<std::pair<int64_t, int64_t>> events;
  events.reserve(2 * ranges.size());
  for (const LiveRange &r : ranges) {
    events.push_back({r.first, r.size});
    events.push_back({r.last + 1, -r.size});
  }
  // At one step, frees (negative) come before allocations.
  std::sort(events.begin(), events.end());
  int64_t live = 0, peak = 0;
  for (auto &[step, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

/// Places the blocks in `order`, each by `fit`.
static Packing placeInOrder(const std::vector<LiveRange> &ranges,
                            const Order &order, Fit fit) {
  Packing packing;
  packing.offsets.assign(ranges.size(), 0);
  // Indices of the blocks placed so far, by increasing offset.
  std::vector<unsigned> placed;
  placed.reserve(ranges.size());
  for (unsigned i : order) {
    const LiveRange &block = ranges[i];
    int64_t best = -1, bestGap = std::numeric_limits<int64_t>::max();
    int64_t end = 0; // the top of the blocks seen so far that are live with i
    for (unsigned j : placed) {
      if (!liveAtOnce(block, ranges[j]))
        continue;
      int64_t offset = packing.offsets[j];
      if (offset >= end && offset - end >= block.size) {
        if (fit == Fit::lowestOffset) {
          best = end;
          break;
        }
        if (offset - end < bestGap) {
          bestGap = offset - end;
          best = end;
        }
      }
      end = std::max(end, offset + ranges[j].size);
    }
    if (best < 0)
      best = end;
    packing.offsets[i] = best;
    packing.size = std::max(packing.size, best + block.size);
    auto at = std::upper_bound(
        placed.begin(), placed.end(), best,
        [&](int64_t offset, unsigned j) { return offset < packing.offsets[j]; });
    placed.insert(at, i);
  }
  return packing;
}

/// The indices sorted by `before`, ties in input order.
static Order sortedOrder(size_t n,
                         const std::function<bool(unsigned, unsigned)> &before) {
  Order order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), before);
  return order;
}

Packing packGreedyBySize(const std::vector<LiveRange> &ranges) {
  Order order = sortedOrder(ranges.size(), [&](unsigned a, unsigned b) {
    return ranges[a].size > ranges[b].size;
  });
  Packing packing = placeInOrder(ranges, order, Fit::smallestGap);
  packing.packer = "greedy-by-size";
  return packing;
}

/// Pisarchyk and Lee's "greedy by breadth" order: the steps by decreasing
/// sum of live sizes, and at each step its blocks not yet ordered, largest
/// first. The blocks of the tightest steps are placed first.
static Order breadthOrder(const std::vector<LiveRange> &ranges) {
  int64_t steps = 0;
  for (const LiveRange &r : ranges)
    steps = std::max(steps, r.last + 1);
  std::vector<int64_t> breadth(steps, 0);
  std::vector<std::vector<unsigned>> liveAt(steps);
  for (unsigned i = 0; i < ranges.size(); ++i)
    for (int64_t s = ranges[i].first; s <= ranges[i].last; ++s) {
      breadth[s] += ranges[i].size;
      liveAt[s].push_back(i);
    }
  std::vector<int64_t> stepOrder(steps);
  std::iota(stepOrder.begin(), stepOrder.end(), int64_t(0));
  std::stable_sort(stepOrder.begin(), stepOrder.end(),
                   [&](int64_t a, int64_t b) { return breadth[a] > breadth[b]; });
  Order order;
  std::vector<bool> taken(ranges.size());
  for (int64_t s : stepOrder) {
    std::vector<unsigned> &blocks = liveAt[s];
    std::stable_sort(blocks.begin(), blocks.end(), [&](unsigned a, unsigned b) {
      return ranges[a].size > ranges[b].size;
    });
    for (unsigned i : blocks)
      if (!taken[i]) {
        taken[i] = true;
        order.push_back(i);
      }
  }
  for (unsigned i = 0; i < ranges.size(); ++i)
    if (!taken[i])
      order.push_back(i);
  return order;
}

namespace {

/// Branch and bound over compact packings: every packing can be pushed down
/// until each block lies at 0 or on a block live at the same time, and
/// listing such a packing by (offset, index) places each block on one
/// already listed. So the search lists blocks in that order, trying for each
/// the tops of the placed blocks live with it.
struct ExactSearch {
  const std::vector<LiveRange> &ranges;
  uint64_t budget;
  int64_t lowerBound;
  std::vector<int64_t> offsets;
  std::vector<bool> placed;
  Packing best;
  uint64_t nodes = 0;

  /// The smallest top for the unplaced blocks, which all lie at or above
  /// `floor` and are disjoint where live at once: floor plus the largest
  /// sum of their sizes live at one step (at some block's first step).
  int64_t unplacedBound(int64_t floor) const {
    int64_t peak = 0;
    for (size_t a = 0; a < ranges.size(); ++a) {
      if (placed[a])
        continue;
      int64_t live = 0;
      for (size_t b = 0; b < ranges.size(); ++b)
        if (!placed[b] && ranges[b].first <= ranges[a].first &&
            ranges[a].first <= ranges[b].last)
          live += ranges[b].size;
      peak = std::max(peak, live);
    }
    return floor + peak;
  }

  void search(size_t count, int64_t lastOffset, size_t lastIndex,
              int64_t height) {
    if (++nodes > budget || best.size == lowerBound)
      return;
    if (count == ranges.size()) {
      if (height < best.size) {
        best.offsets = offsets;
        best.size = height;
      }
      return;
    }
    if (std::max(height, unplacedBound(lastOffset)) >= best.size)
      return;
    std::vector<int64_t> candidates;
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (placed[i])
        continue;
      candidates.assign(1, 0);
      for (size_t j = 0; j < ranges.size(); ++j)
        if (placed[j] && liveAtOnce(ranges[i], ranges[j]))
          candidates.push_back(offsets[j] + ranges[j].size);
      std::sort(candidates.begin(), candidates.end());
      candidates.erase(std::unique(candidates.begin(), candidates.end()),
                       candidates.end());
      for (int64_t c : candidates) {
        if (c < lastOffset || (c == lastOffset && count && i < lastIndex))
          continue;
        int64_t top = std::max(height, c + ranges[i].size);
        if (top >= best.size)
          break;
        bool fits = true;
        for (size_t j = 0; j < ranges.size() && fits; ++j)
          fits = !placed[j] || !liveAtOnce(ranges[i], ranges[j]) ||
                 c + ranges[i].size <= offsets[j] ||
                 offsets[j] + ranges[j].size <= c;
        if (!fits)
          continue;
        placed[i] = true;
        offsets[i] = c;
        search(count + 1, c, i, top);
        placed[i] = false;
      }
    }
  }
};

} // namespace

Packing packBest(const std::vector<LiveRange> &ranges,
                 const PackingOptions &options) {
  Packing best = packGreedyBySize(ranges);
  const int64_t lowerBound = peakLiveSize(ranges);
  const size_t n = ranges.size();
  auto length = [&](unsigned i) { return ranges[i].last - ranges[i].first; };

  // 1. Orders x fits.
  std::vector<std::pair<const char *, Order>> orders;
  orders.push_back({"size", sortedOrder(n, [&](unsigned a, unsigned b) {
                      return ranges[a].size > ranges[b].size;
                    })});
  orders.push_back({"size then lifetime", sortedOrder(n, [&](unsigned a, unsigned b) {
                      return ranges[a].size != ranges[b].size
                                 ? ranges[a].size > ranges[b].size
                                 : length(a) > length(b);
                    })});
  orders.push_back({"lifetime", sortedOrder(n, [&](unsigned a, unsigned b) {
                      return length(a) != length(b) ? length(a) > length(b)
                                                    : ranges[a].size > ranges[b].size;
                    })});
  orders.push_back({"area", sortedOrder(n, [&](unsigned a, unsigned b) {
                      // size x (steps live); doubles cannot overflow here.
                      return double(ranges[a].size) * double(length(a) + 1) >
                             double(ranges[b].size) * double(length(b) + 1);
                    })});
  orders.push_back({"start", sortedOrder(n, [&](unsigned a, unsigned b) {
                      return ranges[a].first != ranges[b].first
                                 ? ranges[a].first < ranges[b].first
                                 : ranges[a].size > ranges[b].size;
                    })});
  orders.push_back({"breadth", breadthOrder(ranges)});
  Order bestOrder = orders.front().second;
  Fit bestFit = Fit::smallestGap;
  for (auto &[name, order] : orders)
    for (Fit fit : {Fit::smallestGap, Fit::lowestOffset}) {
      if (best.size == lowerBound)
        return best;
      Packing packing = placeInOrder(ranges, order, fit);
      if (packing.size < best.size) {
        best = std::move(packing);
        best.packer = std::string(name) + " order, " +
                      (fit == Fit::smallestGap ? "smallest gap" : "lowest offset");
        bestOrder = order;
        bestFit = fit;
      }
    }

  // 2. Local search: move one block earlier in the best order, keeping
  // moves that do not make the arena larger (plateaus are walked on).
  SplitMix64 rng{0x646c63u};
  Order order = bestOrder;
  int64_t current = best.size;
  for (unsigned trial = 0; trial < options.perturbations && n > 1; ++trial) {
    if (best.size == lowerBound)
      return best;
    Order next = order;
    size_t from = 1 + rng.below(n - 1), to = rng.below(from);
    unsigned moved = next[from];
    next.erase(next.begin() + from);
    next.insert(next.begin() + to, moved);
    Packing packing = placeInOrder(ranges, next, bestFit);
    if (packing.size > current)
      continue;
    order = std::move(next);
    current = packing.size;
    if (packing.size < best.size) {
      best = std::move(packing);
      best.packer = "local search";
    }
  }

  // 3. Exact search for small inputs, from the best found as the bound.
  if (n <= options.exactLimit && best.size > lowerBound) {
    ExactSearch exact{ranges, options.exactNodeBudget, lowerBound,
                      std::vector<int64_t>(n, 0), std::vector<bool>(n, false),
                      best};
    exact.search(0, 0, 0, 0);
    if (exact.best.size < best.size) {
      best = std::move(exact.best);
      best.packer = "exact";
    }
  }
  return best;
}

std::vector<std::pair<size_t, size_t>>
findOverlaps(const std::vector<LiveRange> &ranges, const Packing &packing,
             size_t limit) {
  std::vector<std::pair<size_t, size_t>> overlaps;
  for (size_t a = 0; a < ranges.size(); ++a)
    for (size_t b = a + 1; b < ranges.size(); ++b) {
      if (!liveAtOnce(ranges[a], ranges[b]) || !ranges[a].size ||
          !ranges[b].size)
        continue;
      int64_t oa = packing.offsets[a], ob = packing.offsets[b];
      if (oa < ob + ranges[b].size && ob < oa + ranges[a].size) {
        overlaps.push_back({a, b});
        if (overlaps.size() >= limit)
          return overlaps;
      }
    }
  return overlaps;
}

} // namespace dlc
