//===- EmuLibraryGemm.cpp - cuda-emu's stand-in for cuBLASLt --------------===//

#include "runtime/hal/cuda_emu/EmuLibraryGemm.h"

#include <cmath>
#include <cstring>
#include <vector>

using namespace dlc;
using namespace dlc::rt;

namespace {

double load(DType dtype, const void *base, int64_t index) {
  switch (dtype) {
  case DType::F32:
    return static_cast<const float *>(base)[index];
  case DType::BF16:
    return fromBF16Bits(static_cast<const uint16_t *>(base)[index]);
  case DType::F16:
    return fromF16Bits(static_cast<const uint16_t *>(base)[index]);
  default:
    return NAN;
  }
}

void store(DType dtype, void *base, int64_t index, double value) {
  switch (dtype) {
  case DType::F32:
    static_cast<float *>(base)[index] = static_cast<float>(value);
    break;
  case DType::BF16:
    static_cast<uint16_t *>(base)[index] = toBF16Bits(static_cast<float>(value));
    break;
  case DType::F16:
    static_cast<uint16_t *>(base)[index] = toF16Bits(value);
    break;
  default:
    break;
  }
}

/// An f32 operand as the tensor cores take it in TF32: 10 mantissa bits,
/// rounded to nearest.
double toTf32(double value) {
  float f = static_cast<float>(value);
  if (!std::isfinite(f))
    return f;
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits = (bits + 0x1000u) & ~0x1fffu;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

double activate(LibraryGemmCall::Activation activation, double x) {
  switch (activation) {
  case LibraryGemmCall::Activation::kRelu:
    return x > 0 ? x : 0;
  case LibraryGemmCall::Activation::kGeluTanh:
    return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  case LibraryGemmCall::Activation::kNone:
    break;
  }
  return x;
}

} // namespace

Status hal::cuda_emu::emulateLibraryGemm(const LibraryGemmCall &g, void *const *args) {
  const void *a = args[g.a], *b = args[g.b];
  void *d = args[g.d];
  const void *bias = g.bias >= 0 ? args[g.bias] : nullptr;
  const void *c = g.c >= 0 ? args[g.c] : nullptr;
  std::vector<double> lhs(g.m * g.k), rhs(g.k * g.n);
  for (int64_t batch = 0; batch < g.batch; ++batch) {
    // op(A) as m x k and op(B) as k x n, in double.
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t kk = 0; kk < g.k; ++kk) {
        double v = load(g.operandDtype, a,
                        batch * g.strideA + (g.transposeA ? kk * g.m + i : i * g.k + kk));
        lhs[i * g.k + kk] = g.tf32 ? toTf32(v) : v;
      }
    for (int64_t kk = 0; kk < g.k; ++kk)
      for (int64_t j = 0; j < g.n; ++j) {
        double v = load(g.operandDtype, b,
                        batch * g.strideB + (g.transposeB ? j * g.k + kk : kk * g.n + j));
        rhs[kk * g.n + j] = g.tf32 ? toTf32(v) : v;
      }
    const int64_t out = batch * g.m * g.n;
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (int64_t kk = 0; kk < g.k; ++kk)
          sum += lhs[i * g.k + kk] * rhs[kk * g.n + j];
        if (bias)
          sum += load(g.biasDtype, bias, j);
        if (c)
          sum += load(g.resultDtype, c, out + i * g.n + j);
        store(g.resultDtype, d, out + i * g.n + j, activate(g.activation, sum));
      }
  }
  return okStatus();
}
