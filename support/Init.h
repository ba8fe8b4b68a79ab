//===- Init.h - deterministic parameter initialisers ------------*- C++ -*-===//
//
// The initialisers of a parameter (`zeros`, `ones`, `normal`, `uniform`,
// `xavier`, `he`), bit-exact on every platform for a given seed so that a
// model's parameters are the same in the oracle, in a compiled module and in
// a NumPy re-implementation (test/e2e/initialisers.py).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_SUPPORT_INIT_H
#define DLC_SUPPORT_INIT_H

#include "support/HostTensor.h"

#include <cstdint>
#include <vector>

namespace dlc {

enum class InitKind { Zeros, Ones, Normal, Uniform, Xavier, He };

struct InitOptions {
  double mean = 0;
  double std = 1;
  double low = 0;
  double high = 1;
  uint64_t seed = 0;
};

/// Deterministic parameter initialisation.  The exact algorithm (so it can be
/// re-implemented e.g. in NumPy with uint64 arithmetic):
///
///   Generator: SplitMix64, state = seed (uint64, all arithmetic mod 2^64):
///     next():  state += 0x9E3779B97F4A7C15
///              z = state
///              z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
///              z = (z ^ (z >> 27)) * 0x94D049BB133111EB
///              return z ^ (z >> 31)
///   uniform(): u = (next() >> 11) * 2^-53                 in [0, 1)
///   normal():  u1 = uniform(); u2 = uniform()            (in that order)
///              return sqrt(-2 * log(1 - u1)) * cos(2 * pi * u2)
///              (one normal per pair of uniforms; the sine partner is
///              discarded)
///
///   Elements are generated in row-major order, one draw per element:
///     Zeros:   0                      (no draws)
///     Ones:    1                      (no draws)
///     Normal:  mean + std * normal()
///     Uniform: low + (high - low) * uniform()
///     Xavier:  a = sqrt(6 / (fan_in + fan_out));  -a + 2a * uniform()
///     He:      sqrt(2 / fan_in) * normal()
///   and each value is rounded with roundTo(dtype, value) (support/DType.h)
///   before it is stored.
///
///   Fans: rank 0: fan_in = fan_out = 1
///         rank 1: fan_in = fan_out = shape[0]
///         rank 2: ([in, out], dlc computes x @ w)
///                 fan_in = shape[0], fan_out = shape[1]
///         rank >= 3 (conv OIHW): receptive = prod(shape[2:]),
///                 fan_in = shape[1] * receptive,
///                 fan_out = shape[0] * receptive
///
/// Bit-exact reproducibility across platforms relies on log/cos/sqrt of the
/// C library; those may differ in the last ulp between libms, which is far
/// below f32 resolution. Throws std::invalid_argument for an invalid shape.
HostTensor initParam(InitKind kind, const InitOptions &options, DType dtype,
                     std::vector<int64_t> shape);

/// The SplitMix64 generator described above (exposed for tests and for
/// seeded random inputs).
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  /// (next() >> 11) * 2^-53, in [0, 1).
  double uniform();
  /// Box-Muller, one normal per two uniforms (cosine branch).
  double normal();

private:
  uint64_t state_;
};

} // namespace dlc

#endif // DLC_SUPPORT_INIT_H
