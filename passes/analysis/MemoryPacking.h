//===- MemoryPacking.h - offsets for live ranges in one arena ---*- C++ -*-===//
//
// Dynamic storage allocation: given blocks with a size and a live range of
// steps, give each an offset so that blocks live at a common step do not
// overlap, in as small an arena as possible. Plain C++ (no MLIR), so that
// dlc-plan-memory and bench/memplan share it. The packers are described in
// docs/design/2026-11-22-memory-planning.md.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_ANALYSIS_MEMORYPACKING_H
#define DLC_PASSES_ANALYSIS_MEMORYPACKING_H

#include <cstdint>
#include <string>
#include <vector>

namespace dlc {

/// A block to place: `size` bytes (a multiple of the arena alignment), live
/// from step `first` to step `last`, both included.
struct LiveRange {
  int64_t size = 0, first = 0, last = 0;
};

inline bool liveAtOnce(const LiveRange &a, const LiveRange &b) {
  return a.first <= b.last && b.first <= a.last;
}

struct Packing {
  std::vector<int64_t> offsets;
  /// The arena: the largest offset + size.
  int64_t size = 0;
  /// Which packer found it, e.g. "greedy-by-size", "exact".
  std::string packer;
};

/// The largest sum of sizes live at one step: no packing is smaller.
int64_t peakLiveSize(const std::vector<LiveRange> &ranges);

/// TFLite's greedy-by-size offset assignment (the baseline): blocks by size,
/// largest first (ties in input order); each goes into the smallest gap
/// between the blocks already placed that are live at the same time and
/// that fits it, or above the highest of them when none fits.
Packing packGreedyBySize(const std::vector<LiveRange> &ranges);

struct PackingOptions {
  /// Graphs with at most this many blocks are also packed by an exact
  /// branch and bound.
  unsigned exactLimit = 12;
  /// Nodes the exact search may visit before it keeps the best found.
  uint64_t exactNodeBudget = 2'000'000;
  /// Random perturbations of the best heuristic order that are tried.
  unsigned perturbations = 200;
};

/// The smallest of greedy-by-size, several other orders and placement
/// rules, a local search over orders, and (for small inputs) the exact
/// search. Never larger than packGreedyBySize. Deterministic.
Packing packBest(const std::vector<LiveRange> &ranges,
                 const PackingOptions &options = {});

/// Index pairs of blocks live at once whose byte ranges overlap (empty when
/// `packing` is valid), at most `limit` of them.
std::vector<std::pair<size_t, size_t>>
findOverlaps(const std::vector<LiveRange> &ranges, const Packing &packing,
             size_t limit = 1);

} // namespace dlc

#endif // DLC_PASSES_ANALYSIS_MEMORYPACKING_H
