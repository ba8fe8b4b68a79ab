//===- Init.cpp - deterministic parameter initialisers --------------------===//
//
// See the comment on initParam in Init.h for the exact algorithm.
//
//===----------------------------------------------------------------------===//

#include "support/Init.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

namespace dlc {

uint64_t SplitMix64::next() {
  state_ += 0x9E3779B97F4A7C15ull;
  uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix64::uniform() {
  // 53 random bits scaled by 2^-53: exact, in [0, 1).
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double SplitMix64::normal() {
  const double pi = 3.14159265358979323846;
  const double u1 = uniform();
  const double u2 = uniform();
  // 1 - u1 is in (0, 1], so the log never sees 0.
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * pi * u2);
}

static void computeFans(const std::vector<int64_t> &shape, double &fanIn,
                        double &fanOut) {
  if (shape.empty()) {
    fanIn = fanOut = 1;
  } else if (shape.size() == 1) {
    fanIn = fanOut = static_cast<double>(shape[0]);
  } else if (shape.size() == 2) {
    fanIn = static_cast<double>(shape[0]);
    fanOut = static_cast<double>(shape[1]);
  } else {
    int64_t receptive = 1;
    for (size_t d = 2; d < shape.size(); ++d)
      receptive *= shape[d];
    fanIn = static_cast<double>(shape[1] * receptive);
    fanOut = static_cast<double>(shape[0] * receptive);
  }
}

/// Draws of the generator each element takes: two for the normal kinds
/// (Box-Muller), one for the uniform ones, none for constants.
static uint64_t drawsPerElement(InitKind kind) {
  switch (kind) {
  case InitKind::Normal:
  case InitKind::He:
    return 2;
  case InitKind::Uniform:
  case InitKind::Xavier:
    return 1;
  default:
    return 0;
  }
}

HostTensor initParam(InitKind kind, const InitOptions &options, DType dtype,
                     std::vector<int64_t> shape) {
  HostTensor out(dtype, std::move(shape));
  double fanIn = 0, fanOut = 0;
  computeFans(out.shape(), fanIn, fanOut);
  const uint64_t draws = drawsPerElement(kind);
  // Elements [begin, end): the generator is a counter (state = seed + k *
  // gamma after k draws), so a range starts where the sequence would be and
  // the values do not depend on how the tensor is split.
  float *const f32 =
      dtype == DType::F32 ? reinterpret_cast<float *>(out.mutableData()) : nullptr;
  auto fill = [&](int64_t begin, int64_t end) {
    SplitMix64 rng(options.seed + uint64_t(begin) * draws * 0x9E3779B97F4A7C15ull);
    for (int64_t i = begin; i < end; ++i) {
      double value = 0.0;
      switch (kind) {
      case InitKind::Zeros:
        value = 0.0;
        break;
      case InitKind::Ones:
        value = 1.0;
        break;
      case InitKind::Normal:
        value = options.mean + options.std * rng.normal();
        break;
      case InitKind::Uniform:
        value = options.low + (options.high - options.low) * rng.uniform();
        break;
      case InitKind::Xavier: {
        const double a = std::sqrt(6.0 / (fanIn + fanOut));
        value = -a + 2.0 * a * rng.uniform();
        break;
      }
      case InitKind::He:
        value = std::sqrt(2.0 / fanIn) * rng.normal();
        break;
      }
      // The rounded value is exact in the dtype, so storing it is exact too;
      // f32 (nearly every parameter) stores its rounding directly.
      if (f32)
        f32[i] = static_cast<float>(value);
      else
        out.setDouble(i, roundTo(dtype, value));
    }
  };
  // Large tensors (GPT-2's embeddings: 38M values, log and cos each) are
  // filled by every core; small ones on this thread.
  const int64_t n = out.numel();
  const int64_t perThread = int64_t(1) << 18;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<int64_t>(threads, (n + perThread - 1) / perThread));
  if (threads <= 1 || draws == 0) {
    fill(0, n);
    return out;
  }
  std::vector<std::thread> workers;
  const int64_t chunk = (n + threads - 1) / threads;
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back(fill, std::min<int64_t>(n, t * chunk), std::min<int64_t>(n, (t + 1) * chunk));
  fill(0, std::min<int64_t>(n, chunk));
  for (std::thread &w : workers)
    w.join();
  return out;
}

} // namespace dlc
