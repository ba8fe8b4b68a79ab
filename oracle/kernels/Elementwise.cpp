//===- Elementwise.cpp - broadcasting and cast ----------------------------===//
//
// The element-wise scalar functions themselves are in ScalarFunctions.cpp,
// keyed by the names of ElementwiseOpInterface.
//
//===----------------------------------------------------------------------===//

#include "oracle/kernels/Kernels.h"

#include <algorithm>
#include <cassert>

namespace dlc::oracle {

std::vector<int64_t> broadcastShapes(const std::vector<int64_t> &a,
                                     const std::vector<int64_t> &b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned; missing dims count as 1.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    assert((da == db || da == 1 || db == 1) && "shapes do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor cast(const Tensor &x, DType to) {
  Tensor out = Tensor::zeros(to, x.shape);
  for (size_t i = 0; i < x.data.size(); ++i)
    out.data[i] = roundTo(to, x.data[i]);
  return out;
}

} // namespace dlc::oracle
