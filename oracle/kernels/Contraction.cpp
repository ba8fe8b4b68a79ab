//===- Contraction.cpp - matmul, conv2d, pooling --------------------------===//

#include "oracle/kernels/Kernels.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <string>

namespace dlc::oracle {

Tensor matmul(const Tensor &a, const Tensor &b, bool transposeA,
              bool transposeB) {
  assert(a.rank() >= 2 && b.rank() >= 2 && "matmul operands need rank >= 2");
  // Stored (physical) trailing dims of each operand.
  const int64_t aRows = a.shape[a.rank() - 2], aCols = a.shape[a.rank() - 1];
  const int64_t bRows = b.shape[b.rank() - 2], bCols = b.shape[b.rank() - 1];
  // Logical dims after the optional transposes.
  const int64_t M = transposeA ? aCols : aRows;
  const int64_t K = transposeA ? aRows : aCols;
  const int64_t Kb = transposeB ? bCols : bRows;
  const int64_t N = transposeB ? bRows : bCols;
  assert(K == Kb && "matmul contraction dims differ");
  (void)Kb;

  std::vector<int64_t> aBatch(a.shape.begin(), a.shape.end() - 2);
  std::vector<int64_t> bBatch(b.shape.begin(), b.shape.end() - 2);
  std::vector<int64_t> batch = broadcastShapes(aBatch, bBatch);
  std::vector<int64_t> aMap = broadcastIndexMap(batch, aBatch);
  std::vector<int64_t> bMap = broadcastIndexMap(batch, bBatch);

  std::vector<int64_t> outShape = batch;
  outShape.push_back(M);
  outShape.push_back(N);
  Tensor out = Tensor::zeros(a.dtype, outShape);

  const int64_t numBatch = shapeNumel(batch);
  for (int64_t bi = 0; bi < numBatch; ++bi) {
    const int64_t aBase = aMap[bi] * aRows * aCols;
    const int64_t bBase = bMap[bi] * bRows * bCols;
    const int64_t oBase = bi * M * N;
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0.0;
        for (int64_t k = 0; k < K; ++k) {
          // logical a(m, k), b(k, n)
          int64_t ai = transposeA ? k * aCols + m : m * aCols + k;
          int64_t bj = transposeB ? n * bCols + k : k * bCols + n;
          acc += a.data[aBase + ai] * b.data[bBase + bj];
        }
        out.data[oBase + m * N + n] = roundTo(out.dtype, acc);
      }
    }
  }
  return out;
}

Tensor conv2d(const Tensor &x, const Tensor &w, const Tensor *bias,
              std::array<int64_t, 2> strides, std::array<int64_t, 4> padding,
              std::array<int64_t, 2> dilations, int64_t groups) {
  assert(x.rank() == 4 && w.rank() == 4 && "conv2d expects NCHW / OIHW");
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2],
                W = x.shape[3];
  const int64_t O = w.shape[0], Cg = w.shape[1], KH = w.shape[2],
                KW = w.shape[3];
  const int64_t sh = strides[0], sw = strides[1];
  const int64_t pt = padding[0], pl = padding[1], pb = padding[2],
                pr = padding[3];
  const int64_t dh = dilations[0], dw = dilations[1];
  assert(groups >= 1 && C % groups == 0 && O % groups == 0 &&
         Cg == C / groups && "conv2d group mismatch");
  assert(sh >= 1 && sw >= 1 && dh >= 1 && dw >= 1);
  assert(!bias || (bias->rank() == 1 && bias->shape[0] == O));
  (void)C;
  const int64_t OH = (H + pt + pb - dh * (KH - 1) - 1) / sh + 1;
  const int64_t OW = (W + pl + pr - dw * (KW - 1) - 1) / sw + 1;
  assert(OH >= 0 && OW >= 0);
  const int64_t outPerGroup = O / groups;

  Tensor out = Tensor::zeros(x.dtype, {N, O, OH, OW});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o) {
      const int64_t g = o / outPerGroup;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = bias ? bias->data[o] : 0.0;
          for (int64_t ci = 0; ci < Cg; ++ci) {
            const int64_t c = g * Cg + ci;
            for (int64_t kh = 0; kh < KH; ++kh) {
              const int64_t ih = oh * sh - pt + kh * dh;
              if (ih < 0 || ih >= H)
                continue; // zero padding
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t iw = ow * sw - pl + kw * dw;
                if (iw < 0 || iw >= W)
                  continue;
                acc += x.data[((n * C + c) * H + ih) * W + iw] *
                       w.data[((o * Cg + ci) * KH + kh) * KW + kw];
              }
            }
          }
          out.data[((n * O + o) * OH + oh) * OW + ow] =
              roundTo(out.dtype, acc);
        }
    }
  return out;
}

namespace {

enum class PoolKind { Max, AvgIncludePad, AvgExcludePad };

Tensor pool2d(PoolKind kind, const Tensor &x, std::array<int64_t, 2> kernel,
              std::array<int64_t, 2> strides,
              std::array<int64_t, 4> padding) {
  assert(x.rank() == 4 && "pooling expects NCHW");
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2],
                W = x.shape[3];
  const int64_t KH = kernel[0], KW = kernel[1];
  const int64_t sh = strides[0], sw = strides[1];
  const int64_t pt = padding[0], pl = padding[1], pb = padding[2],
                pr = padding[3];
  assert(KH >= 1 && KW >= 1 && sh >= 1 && sw >= 1);
  const int64_t OH = (H + pt + pb - KH) / sh + 1;
  const int64_t OW = (W + pl + pr - KW) / sw + 1;
  assert(OH >= 0 && OW >= 0);
  const double negInf = -std::numeric_limits<double>::infinity();

  Tensor out = Tensor::zeros(x.dtype, {N, C, OH, OW});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double maxV = negInf; // padding contributes -inf
          double sum = 0.0;     // padding contributes 0
          int64_t realCount = 0;
          for (int64_t kh = 0; kh < KH; ++kh) {
            const int64_t ih = oh * sh - pt + kh;
            if (ih < 0 || ih >= H)
              continue;
            for (int64_t kw = 0; kw < KW; ++kw) {
              const int64_t iw = ow * sw - pl + kw;
              if (iw < 0 || iw >= W)
                continue;
              const double v = x.data[((n * C + c) * H + ih) * W + iw];
              if (std::isnan(v) || std::isnan(maxV))
                maxV = std::numeric_limits<double>::quiet_NaN();
              else if (v > maxV)
                maxV = v;
              sum += v;
              ++realCount;
            }
          }
          double result = 0.0;
          switch (kind) {
          case PoolKind::Max:
            result = maxV;
            break;
          case PoolKind::AvgIncludePad:
            result = sum / static_cast<double>(KH * KW);
            break;
          case PoolKind::AvgExcludePad:
            if (realCount == 0)
              throw EvalError("avg_pool2d: window at output (" +
                              std::to_string(oh) + ", " + std::to_string(ow) +
                              ") covers only padding");
            result = sum / static_cast<double>(realCount);
            break;
          }
          out.data[((n * C + c) * OH + oh) * OW + ow] =
              roundTo(out.dtype, result);
        }
  return out;
}

} // namespace

Tensor maxPool2d(const Tensor &x, std::array<int64_t, 2> kernel,
                 std::array<int64_t, 2> strides,
                 std::array<int64_t, 4> padding) {
  return pool2d(PoolKind::Max, x, kernel, strides, padding);
}

Tensor avgPool2d(const Tensor &x, std::array<int64_t, 2> kernel,
                 std::array<int64_t, 2> strides,
                 std::array<int64_t, 4> padding, bool countIncludePad) {
  return pool2d(countIncludePad ? PoolKind::AvgIncludePad
                                : PoolKind::AvgExcludePad,
                x, kernel, strides, padding);
}

} // namespace dlc::oracle
