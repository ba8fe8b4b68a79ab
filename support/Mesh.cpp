//===- Mesh.cpp - A device mesh: named axes, ranks, collective groups -----===//

#include "support/Mesh.h"

#include <cstdlib>

namespace dlc {

Mesh::Mesh(std::vector<std::pair<std::string, int64_t>> axes) : axes_(std::move(axes)) {}

bool Mesh::parse(const std::string &spec, Mesh &out, std::string &error) {
  std::vector<std::pair<std::string, int64_t>> axes;
  int64_t total = 1;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string::npos)
      end = spec.size();
    std::string item = spec.substr(start, end - start);
    size_t eq = item.find('=');
    char *tail = nullptr;
    long long size = eq == std::string::npos ? 0 : std::strtoll(item.c_str() + eq + 1, &tail, 10);
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size() || *tail || size < 1) {
      error = "--mesh expects NAME=SIZE[,NAME=SIZE...] with sizes of at least 1, got '" +
              spec + "'";
      return false;
    }
    std::string name = item.substr(0, eq);
    for (const auto &axis : axes)
      if (axis.first == name) {
        error = "--mesh names axis '" + name + "' twice";
        return false;
      }
    total *= size;
    if (total > (1 << 20)) {
      error = "--mesh '" + spec + "' has more than 2^20 ranks";
      return false;
    }
    axes.emplace_back(name, size);
    start = end + 1;
  }
  out = Mesh(std::move(axes));
  return true;
}

int64_t Mesh::size() const {
  int64_t n = 1;
  for (const auto &axis : axes_)
    n *= axis.second;
  return n;
}

int64_t Mesh::axisIndex(const std::string &name) const {
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].first == name)
      return static_cast<int64_t>(i);
  return -1;
}

std::string Mesh::str() const {
  std::string s;
  for (const auto &axis : axes_)
    s += (s.empty() ? "" : ",") + axis.first + "=" + std::to_string(axis.second);
  return s;
}

std::vector<int64_t> Mesh::coordinates(int64_t rank) const {
  std::vector<int64_t> c(axes_.size());
  for (size_t i = axes_.size(); i-- > 0;) {
    c[i] = rank % axes_[i].second;
    rank /= axes_[i].second;
  }
  return c;
}

int64_t Mesh::rankOf(const std::vector<int64_t> &coordinates) const {
  int64_t rank = 0;
  for (size_t i = 0; i < axes_.size(); ++i)
    rank = rank * axes_[i].second + coordinates[i];
  return rank;
}

int64_t Mesh::groupSize(const std::vector<std::string> &axes) const {
  int64_t n = 1;
  for (const std::string &name : axes) {
    int64_t i = axisIndex(name);
    n *= i < 0 ? 1 : axes_[i].second;
  }
  return n;
}

std::vector<int64_t> Mesh::group(int64_t rank, const std::vector<std::string> &axes) const {
  std::vector<int64_t> base = coordinates(rank);
  std::vector<int64_t> members;
  int64_t n = groupSize(axes);
  for (int64_t position = 0; position < n; ++position) {
    // `position` row-major over the listed axes, the last fastest.
    std::vector<int64_t> c = base;
    int64_t rest = position;
    for (size_t k = axes.size(); k-- > 0;) {
      int64_t i = axisIndex(axes[k]);
      if (i < 0)
        continue;
      c[i] = rest % axes_[i].second;
      rest /= axes_[i].second;
    }
    members.push_back(rankOf(c));
  }
  return members;
}

int64_t Mesh::positionInGroup(int64_t rank, const std::vector<std::string> &axes) const {
  std::vector<int64_t> c = coordinates(rank);
  int64_t position = 0;
  for (const std::string &name : axes) {
    int64_t i = axisIndex(name);
    if (i >= 0)
      position = position * axes_[i].second + c[i];
  }
  return position;
}

} // namespace dlc
