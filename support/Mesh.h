//===- Mesh.h - A device mesh: named axes, ranks, collective groups -*- C++ -*-===//
//
// `--mesh data=2,model=2`: the ranks 0..size-1 laid out row-major over named
// axes (the last axis varies fastest). A collective over some of the axes
// runs in groups: the ranks whose coordinates agree on every other axis,
// ordered row-major by their coordinates on the collective's axes, in the
// order the collective lists them. Plain C++: the compiler, the oracle's
// SPMD simulation and the runtime's comm all use it.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_SUPPORT_MESH_H
#define DLC_SUPPORT_MESH_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dlc {

class Mesh {
public:
  Mesh() = default;
  /// Axes in order, each a name and a size >= 1.
  explicit Mesh(std::vector<std::pair<std::string, int64_t>> axes);

  /// Parses "data=2,model=2"; false with `error` set on a bad spec (empty,
  /// a size under 1, a name twice, more than 2^20 ranks).
  static bool parse(const std::string &spec, Mesh &out, std::string &error);

  const std::vector<std::pair<std::string, int64_t>> &axes() const { return axes_; }
  /// The number of ranks (1 for a mesh of no axes).
  int64_t size() const;
  /// The index of axis `name`, or -1.
  int64_t axisIndex(const std::string &name) const;
  /// "data=2,model=2".
  std::string str() const;

  /// Rank `rank`'s coordinate on every axis.
  std::vector<int64_t> coordinates(int64_t rank) const;
  int64_t rankOf(const std::vector<int64_t> &coordinates) const;

  /// The ranks of `rank`'s group over `axes` (names of this mesh's axes),
  /// in group order; `rank`'s own position in it is `positionInGroup`.
  std::vector<int64_t> group(int64_t rank, const std::vector<std::string> &axes) const;
  int64_t positionInGroup(int64_t rank, const std::vector<std::string> &axes) const;
  /// The product of the sizes of `axes`.
  int64_t groupSize(const std::vector<std::string> &axes) const;

private:
  std::vector<std::pair<std::string, int64_t>> axes_;
};

} // namespace dlc

#endif // DLC_SUPPORT_MESH_H
