//===- TensorReport.cpp - printing and comparing output tensors -----------===//

#include "driver/TensorReport.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <sstream>

namespace dlc {

using oracle::Tensor;

static void printValue(llvm::raw_ostream &os, const Tensor &t, double v) {
  if (isFloat(t.dtype))
    os << llvm::format("%.6g", v);
  else
    os << static_cast<int64_t>(v);
}

void printTensorSummary(llvm::raw_ostream &os, const std::string &name,
                        const Tensor &tensor, unsigned count) {
  os << name << ": " << dtypeName(tensor.dtype)
     << formatShape(tensor.shape) << "\n  values: [";
  size_t n = tensor.data.size();
  for (size_t i = 0; i < n && i < count; ++i) {
    if (i) os << ", ";
    printValue(os, tensor, tensor.data[i]);
  }
  if (n > count) os << ", ...";
  os << "]";
  if (n > count) os << " (first " << count << " of " << n << ")";
  os << "\n";
  if (n == 0)
    return;
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (double v : tensor.data) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  double mean = sum / n, squares = 0;
  for (double v : tensor.data)
    squares += (v - mean) * (v - mean);
  os << "  min " << llvm::format("%.6g", lo) << "  max "
     << llvm::format("%.6g", hi) << "  mean " << llvm::format("%.6g", mean)
     << "  std " << llvm::format("%.6g", std::sqrt(squares / n)) << "\n";
}

/// The multi-index of flat element `i`, as "[1, 2]".
static std::string indexOf(const Tensor &t, size_t i) {
  std::vector<int64_t> index(t.shape.size());
  for (size_t d = t.shape.size(); d-- > 0;) {
    index[d] = static_cast<int64_t>(i) % t.shape[d];
    i /= t.shape[d];
  }
  return formatShape(index);
}

bool compareTensors(const Tensor &actual, const Tensor &expected, double rtol,
                    double atol, std::string &report) {
  std::ostringstream out;
  if (actual.shape != expected.shape) {
    out << "shape " << formatShape(actual.shape)
        << " differs from the expected " << formatShape(expected.shape);
    report = out.str();
    return false;
  }
  double maxAbs = 0, maxRel = 0;
  size_t mismatches = 0, first = 0;
  for (size_t i = 0; i < actual.data.size(); ++i) {
    double a = actual.data[i], e = expected.data[i];
    bool bothNan = std::isnan(a) && std::isnan(e);
    double diff = bothNan ? 0 : std::fabs(a - e);
    if (std::isnan(diff) || diff > atol + rtol * std::fabs(e)) {
      if (mismatches++ == 0) first = i;
    }
    if (!std::isnan(diff)) {
      maxAbs = std::max(maxAbs, diff);
      if (e != 0) maxRel = std::max(maxRel, diff / std::fabs(e));
    }
  }
  out << "max abs error " << maxAbs << ", max rel error " << maxRel;
  if (mismatches)
    out << "; " << mismatches << " of " << actual.data.size()
        << " elements differ, first at " << indexOf(actual, first) << ": "
        << actual.data[first] << " vs expected " << expected.data[first]
        << " (rtol " << rtol << ", atol " << atol << ")";
  report = out.str();
  return mismatches == 0;
}

} // namespace dlc
