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
Status buildVariant(const std::string &name, Bytes *out);
const std::vector<std::string> &variantNames();

} // namespace dlc::testing
