//===- TestModules.h - Small modules for the runtime's tests ----*- C++ -*-===//
//
// Test-only (never in a production library): builds modules with the
// ModuleWriter whose kernels are C++ compiled here by the host compiler
// (c++ -O2 -shared -fPIC), so that the executor is tested end to end without
// the compiler. Also builds hostile variants for the corruption tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/Status.h"
#include "runtime/format/ModuleWriter.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::testing {

using Bytes = std::vector<uint8_t>;
using rt::Status;

/// Compiles C++ `source` into a shared object (cached on disk by a hash of
/// the source and compiler, so each test process does not recompile).
Status compileSharedObject(const std::string &source, Bytes *out);

/// The kernels every test module uses, in one translation unit:
///   dlc_test_add       c[i] = a[i] + b[i]                      (f32)
///   dlc_test_matmul    y[r, :] = x[r, :] @ w   for rows [begin, end), K x N fixed
///   dlc_test_bias_relu y[r, :] = max(h[r, :] + b, 0)
std::string testKernelSource(int64_t k, int64_t n);

/// c = a + b over f32[n]: inputs a, b; output c; one kernel, extent n, grain 1.
Status buildAddModule(int64_t n, format::ModuleWriter *writer);

/// The add module (n = 6) with three state tensors (format 1.5): `w` f32[3,
/// 4] drawn normal (std 0.02, seed 7), `m` f32[2] zeros, `h` f32[4, 2]
/// drawn He (seed 3).
Status buildDrawnStateModule(format::ModuleWriter *writer);

/// y = relu(x @ w + b), h = x @ w: input x f32[m, k]; weights w f32[k, n]
/// (value (3i mod 7) - 3 at flat index i) and b f32[n] ((j mod 3) - 1);
/// outputs y and h, both f32[m, n]. Plan: matmul into the arena, bias+relu
/// into y, copy the arena to h.
Status buildMlpModule(int64_t m, int64_t k, int64_t n, format::ModuleWriter *writer);
float mlpWeight(int64_t i);

/// y[i] = x[idx[i]]: inputs x f32[4] and idx i32[n], output y f32[n]; the
/// kernel checks its indices (data check 0, a gather_index of bound 4) and
/// takes the status words as its fourth argument.
Status buildGatherModule(int64_t n, format::ModuleWriter *writer);
float mlpBias(int64_t j);

/// A module with a dynamic dimension (format 1.3) N in [1, max]: inputs
/// x f32[2 max, 3] and s f32[max] (dynamic: 2 rows and 1 per N) and
/// b f32[3]; output y f32[2 max, 3] (dynamic); y[r, :] = 2 x[r, :] + b +
/// s[r / 2] (dynamicReference). One kernel over the 2 max rows that checks
/// its data: a 0 in x fails check 0 (a division_by_zero), so a run whose
/// launch reads rows nobody gave fails.
struct DynamicTweaks {
  bool scaled = true;   ///< the launch's rows grow with N (CpuLaunch.dynamic_dim)
  bool copyOut = false; ///< the kernel writes the arena, a Copy moves it to y
  bool cudaEmu = false; ///< a cuda kernel with a cuda-emu launch stub instead
  /// The kernel writes the arena, and a second launch of it, not scaled,
  /// computes y from that: y = rows(rows(x, s, b), s, b).
  bool chained = false;
  int64_t grain = 1;
};
constexpr int64_t kDynamicMax = 8; ///< the dynamic-* variants' max
Status buildDynamicModule(int64_t max, const DynamicTweaks &tweaks, format::ModuleWriter *writer);
/// y's element i (flat) from the inputs of a run.
float dynamicReference(const std::vector<float> &x, const std::vector<float> &s,
                       const std::vector<float> &b, int64_t i);

/// Recomputes the header's CRC and the prelude (after a test edited the
/// header in place), so that the edit reaches the semantic checks.
void resealHeader(Bytes &bytes);

/// Named modules, valid or not, for the tests and dlc-runtime-testgen:
///   add mlp                        valid
///   bad-identifier bad-version     rejected in the prelude
///   huge-dims negative-dim weight-offset-max section-past-end kernel-index
///   args-mismatch empty-entry arena-ref-past-end write-to-input
///   unknown-command                rejected by the semantic checks
///   missing-symbol huge-arena library-call
///                                  load, but fail when a session is created
///   gib-arena                      valid: add with an (unused) arena of 1 GiB
///   gather                         valid, with a data check
///   status-ref-offset check-kernel-index
///                                  its status words or check made invalid
///   dynamic dynamic-unscaled dynamic-copy dynamic-emu dynamic-chained
///                                  valid: buildDynamicModule (max 8), its
///                                  launch scaled, not, writing through a
///                                  copy, for cuda-emu, and chained
Status buildVariant(const std::string &name, Bytes *out);
const std::vector<std::string> &variantNames();

} // namespace dlc::testing
