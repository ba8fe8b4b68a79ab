//===- Reduction.cpp - reductions, softmax, norms, losses -----------------===//

#include "oracle/kernels/Kernels.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>

namespace dlc::oracle {

namespace {

const char *reduceName(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum: return "sum";
  case ReduceOp::Mean: return "mean";
  case ReduceOp::Max: return "max";
  case ReduceOp::Min: return "min";
  case ReduceOp::Prod: return "prod";
  }
  return "reduce";
}

/// Splits a shape around `axis` into outer (dims before), size (the axis)
/// and inner (dims after) element counts.
void splitAt(const std::vector<int64_t> &shape, int64_t axis, int64_t &outer,
             int64_t &size, int64_t &inner) {
  assert(axis >= 0 && axis < static_cast<int64_t>(shape.size()));
  outer = 1;
  inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  size = shape[axis];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d)
    inner *= shape[d];
}

} // namespace

Tensor reduce(ReduceOp op, const Tensor &x, std::vector<int64_t> axes,
              bool keepdims) {
  const int64_t rank = x.rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    assert(axes[i] >= 0 && axes[i] < rank && "reduce axis out of range");
    assert((i == 0 || axes[i] > axes[i - 1]) && "axes must be sorted/unique");
    reduced[axes[i]] = true;
  }
  // Shape with reduced dims set to 1; its row-major flat index equals the
  // flat index of the squeezed (keepdims=false) result.
  std::vector<int64_t> keptShape = x.shape;
  std::vector<int64_t> outShape;
  int64_t reducedCount = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      reducedCount *= x.shape[d];
      keptShape[d] = 1;
      if (keepdims)
        outShape.push_back(1);
    } else {
      outShape.push_back(x.shape[d]);
    }
  }
  const int64_t outNumel = shapeNumel(outShape);
  if (reducedCount == 0 && outNumel > 0 && op != ReduceOp::Sum &&
      op != ReduceOp::Prod)
    throw EvalError(std::string(reduceName(op)) +
                    ": reduction over zero elements (input shape " +
                    formatShape(x.shape) + ")");

  const double inf = std::numeric_limits<double>::infinity();
  double init = op == ReduceOp::Max    ? -inf
                : op == ReduceOp::Min  ? inf
                : op == ReduceOp::Prod ? 1.0
                                       : 0.0;
  std::vector<double> acc(static_cast<size_t>(outNumel), init);
  std::vector<int64_t> keptStrides = contiguousStrides(keptShape);

  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  const int64_t n = x.numel();
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d])
        o += idx[d] * keptStrides[d];
    const double v = x.data[flat];
    double &a = acc[o];
    switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      a += v;
      break;
    case ReduceOp::Prod:
      a *= v;
      break;
    case ReduceOp::Max:
      if (std::isnan(v) || std::isnan(a))
        a = std::numeric_limits<double>::quiet_NaN();
      else if (v > a)
        a = v;
      break;
    case ReduceOp::Min:
      if (std::isnan(v) || std::isnan(a))
        a = std::numeric_limits<double>::quiet_NaN();
      else if (v < a)
        a = v;
      break;
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < x.shape[d])
        break;
      idx[d] = 0;
    }
  }

  Tensor out = Tensor::zeros(x.dtype, outShape);
  for (int64_t i = 0; i < outNumel; ++i) {
    double v = acc[i];
    if (op == ReduceOp::Mean)
      v /= static_cast<double>(reducedCount);
    out.data[i] = roundTo(out.dtype, v);
  }
  return out;
}

namespace {

Tensor softmaxImpl(const Tensor &x, int64_t axis, bool logarithmic) {
  int64_t outer, size, inner;
  splitAt(x.shape, axis, outer, size, inner);
  Tensor out = Tensor::zeros(x.dtype, x.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t k) { return (o * size + k) * inner + in; };
      double maxV = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < size; ++k)
        maxV = std::max(maxV, x.data[at(k)]);
      double sum = 0.0;
      for (int64_t k = 0; k < size; ++k)
        sum += std::exp(x.data[at(k)] - maxV);
      const double logSum = std::log(sum);
      for (int64_t k = 0; k < size; ++k) {
        const double shifted = x.data[at(k)] - maxV;
        const double v =
            logarithmic ? shifted - logSum : std::exp(shifted) / sum;
        out.data[at(k)] = roundTo(out.dtype, v);
      }
    }
  return out;
}

/// Per-position cross-entropy losses (unrounded doubles); `counted` is the
/// number of positions whose label is not `ignoreIndex`.
std::vector<double> crossEntropyLosses(const Tensor &logits,
                                       const Tensor &labels, double smoothing,
                                       std::optional<int64_t> ignoreIndex,
                                       int64_t &counted) {
  assert(logits.rank() >= 1 && "cross_entropy logits need rank >= 1");
  const int64_t C = logits.shape.back();
  assert(labels.shape == std::vector<int64_t>(logits.shape.begin(),
                                              logits.shape.end() - 1) &&
         "cross_entropy labels shape must be logits.shape[:-1]");
  const int64_t positions = labels.numel();
  std::vector<double> losses(static_cast<size_t>(positions), 0.0);
  counted = 0;
  for (int64_t p = 0; p < positions; ++p) {
    const int64_t label = toInt64(labels.data[p]);
    if (ignoreIndex && label == *ignoreIndex)
      continue;
    if (label < 0 || label >= C)
      throw EvalError("cross_entropy: label " + std::to_string(label) +
                      " at position " + std::to_string(p) +
                      " out of range [0, " + std::to_string(C) + ")");
    ++counted;
    const double *row = logits.data.data() + p * C;
    double maxV = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < C; ++c)
      maxV = std::max(maxV, row[c]);
    double sum = 0.0, rowSum = 0.0;
    for (int64_t c = 0; c < C; ++c) {
      sum += std::exp(row[c] - maxV);
      rowSum += row[c];
    }
    // -log_softmax[c] = log(sum exp(x - max)) + max - x[c]
    const double logSumExp = std::log(sum) + maxV;
    losses[p] = logSumExp - row[label];
    if (smoothing != 0)
      losses[p] = (1 - smoothing) * losses[p] +
                  smoothing * (logSumExp - rowSum / static_cast<double>(C));
  }
  return losses;
}

/// `losses` reduced; `counted` of them count towards a mean.
Tensor reduceLosses(const char *name, const std::vector<double> &losses,
                    int64_t counted, const std::vector<int64_t> &shape,
                    Reduction reduction, DType out) {
  if (reduction == Reduction::None)
    return Tensor::fromValues(out, shape, losses);
  double sum = 0.0;
  for (double l : losses)
    sum += l;
  if (reduction == Reduction::Sum)
    return Tensor::scalar(out, sum);
  if (losses.empty())
    throw EvalError(std::string(name) + ": mean over zero elements");
  return Tensor::scalar(out, sum / static_cast<double>(counted));
}

} // namespace

Tensor softmax(const Tensor &x, int64_t axis) {
  return softmaxImpl(x, axis, /*logarithmic=*/false);
}

Tensor logSoftmax(const Tensor &x, int64_t axis) {
  return softmaxImpl(x, axis, /*logarithmic=*/true);
}

Tensor layerNorm(const Tensor &x, const Tensor &scale, const Tensor *bias,
                 int64_t axis, double epsilon) {
  assert(axis >= 0 && axis <= x.rank());
  const std::vector<int64_t> normShape(x.shape.begin() + axis, x.shape.end());
  assert(scale.shape == normShape && "layer_norm scale shape mismatch");
  assert((!bias || bias->shape == normShape) && "layer_norm bias mismatch");
  const int64_t inner = shapeNumel(normShape);
  const int64_t outer = inner == 0 ? 0 : x.numel() / inner;
  Tensor out = Tensor::zeros(x.dtype, x.shape);
  for (int64_t o = 0; o < outer; ++o) {
    const double *row = x.data.data() + o * inner;
    double mean = 0.0;
    for (int64_t j = 0; j < inner; ++j)
      mean += row[j];
    mean /= static_cast<double>(inner);
    double var = 0.0;
    for (int64_t j = 0; j < inner; ++j)
      var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<double>(inner); // biased
    const double invStd = 1.0 / std::sqrt(var + epsilon);
    for (int64_t j = 0; j < inner; ++j) {
      double v = (row[j] - mean) * invStd * scale.data[j];
      if (bias)
        v += bias->data[j];
      out.data[o * inner + j] = roundTo(out.dtype, v);
    }
  }
  return out;
}

Tensor rmsNorm(const Tensor &x, const Tensor &scale, int64_t axis,
               double epsilon) {
  assert(axis >= 0 && axis <= x.rank());
  const std::vector<int64_t> normShape(x.shape.begin() + axis, x.shape.end());
  assert(scale.shape == normShape && "rms_norm scale shape mismatch");
  const int64_t inner = shapeNumel(normShape);
  const int64_t outer = inner == 0 ? 0 : x.numel() / inner;
  Tensor out = Tensor::zeros(x.dtype, x.shape);
  for (int64_t o = 0; o < outer; ++o) {
    const double *row = x.data.data() + o * inner;
    double meanSq = 0.0;
    for (int64_t j = 0; j < inner; ++j)
      meanSq += row[j] * row[j];
    meanSq /= static_cast<double>(inner);
    const double invRms = 1.0 / std::sqrt(meanSq + epsilon);
    for (int64_t j = 0; j < inner; ++j)
      out.data[o * inner + j] =
          roundTo(out.dtype, row[j] * invRms * scale.data[j]);
  }
  return out;
}

Tensor crossEntropy(const Tensor &logits, const Tensor &labels,
                    Reduction reduction, DType out, double labelSmoothing,
                    std::optional<int64_t> ignoreIndex) {
  int64_t counted = 0;
  std::vector<double> losses = crossEntropyLosses(
      logits, labels, labelSmoothing, ignoreIndex, counted);
  return reduceLosses("cross_entropy", losses, counted, labels.shape,
                      reduction, out);
}

Tensor mse(const Tensor &pred, const Tensor &target, Reduction reduction) {
  assert(pred.shape == target.shape && "mse shapes differ");
  std::vector<double> losses(pred.data.size());
  for (size_t i = 0; i < losses.size(); ++i) {
    const double d = pred.data[i] - target.data[i];
    losses[i] = d * d;
  }
  return reduceLosses("mse", losses, static_cast<int64_t>(losses.size()),
                      pred.shape, reduction, pred.dtype);
}

} // namespace dlc::oracle
