//===- Kernels.h - float64 reference kernels for the dlc oracle -*- C++ -*-===//
//
// Every kernel:
//  * computes in double (sums, dot products and means accumulate in double),
//  * rounds each OUTPUT element to the result dtype with roundTo() exactly
//    once, at the end,
//  * returns a new Tensor.
// Shapes and attributes are assumed to have been verified by the IR; they are
// only checked with assert().  Data-dependent failures (index out of range,
// integer division by zero, empty max/min/mean reduction, label out of range)
// throw EvalError.
//
// Integer arithmetic (Add/Sub/Mul/Div/Pow on integer dtypes) is done in
// 64-bit two's-complement wrapping arithmetic and then wrapped to the result
// dtype, so i32 results are exact (e.g. i32 overflow wraps like hardware).
//
// Implementations: ScalarFunctions.cpp, Elementwise.cpp, Contraction.cpp,
// Reduction.cpp, DataMovement.cpp. (Parameter initialisers are
// support/Init.h: codegen and the driver draw them too.)
//
//===----------------------------------------------------------------------===//
#ifndef DLC_ORACLE_KERNELS_KERNELS_H
#define DLC_ORACLE_KERNELS_KERNELS_H

#include "oracle/kernels/Tensor.h"

#include <array>
#include <string_view>
#include <cstdint>
#include <optional>
#include <vector>

namespace dlc::oracle {

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

/// Applies the scalar function `name` (the names of ElementwiseOpInterface:
/// `exp`, `add`, `lt`, `gelu_tanh`, `select`, ...; ScalarFunctions.cpp) to
/// `operands` broadcast together (NumPy rules). The result has the last
/// operand's dtype, or i1 for comparisons. Integer operands of add, sub,
/// mul, div, pow, max and min compute exactly in two's complement: div
/// truncates toward zero (EvalError on division by zero), pow throws
/// EvalError on a negative exponent. Max and min propagate NaN. Throws
/// EvalError for an unknown name.
Tensor elementwise(std::string_view name,
                   const std::vector<const Tensor *> &operands);
bool hasScalarFunction(std::string_view name);

/// elementwise() of one, two or three operands.
Tensor unary(std::string_view name, const Tensor &x);
Tensor binary(std::string_view name, const Tensor &lhs, const Tensor &rhs);
/// out = cond != 0 ? a : b, broadcasting all three; dtype = a.dtype.
Tensor select(const Tensor &cond, const Tensor &a, const Tensor &b);

/// NumPy broadcast of two shapes (right-aligned; each dim pair equal or one
/// of them 1).  Asserts compatibility.
std::vector<int64_t> broadcastShapes(const std::vector<int64_t> &a,
                                     const std::vector<int64_t> &b);

/// roundTo(to, v) per element.
Tensor cast(const Tensor &x, DType to);

//===----------------------------------------------------------------------===//
// Contractions: matmul, conv, pooling
//===----------------------------------------------------------------------===//

/// a: [..., M, K] (or [..., K, M] if transposeA), b: [..., K, N] (or
/// [..., N, K] if transposeB); both rank >= 2; the batch dims (all but the
/// last two) broadcast NumPy-style.  Result [..., M, N], dtype a.dtype.
Tensor matmul(const Tensor &a, const Tensor &b, bool transposeA = false,
              bool transposeB = false);

/// x [N, C, H, W], w [O, C/groups, KH, KW], bias [O] or nullptr.
/// padding = {top, left, bottom, right}; zero padding.
/// OH = (H + pt + pb - dh*(KH-1) - 1) / sh + 1, likewise OW.  dtype x.dtype.
Tensor conv2d(const Tensor &x, const Tensor &w, const Tensor *bias,
              std::array<int64_t, 2> strides, std::array<int64_t, 4> padding,
              std::array<int64_t, 2> dilations, int64_t groups);

/// x [N, C, H, W]; padding = {top, left, bottom, right} contributes -inf.
/// OH = (H + pt + pb - KH) / sh + 1, likewise OW.
Tensor maxPool2d(const Tensor &x, std::array<int64_t, 2> kernel,
                 std::array<int64_t, 2> strides,
                 std::array<int64_t, 4> padding);

/// As maxPool2d, padding contributes 0.  countIncludePad: divide by KH*KW;
/// otherwise by the number of non-padding elements in the window (EvalError
/// if a window holds no real element).
Tensor avgPool2d(const Tensor &x, std::array<int64_t, 2> kernel,
                 std::array<int64_t, 2> strides,
                 std::array<int64_t, 4> padding, bool countIncludePad);

//===----------------------------------------------------------------------===//
// Reductions, softmax, normalisation, losses
//===----------------------------------------------------------------------===//

enum class ReduceOp { Sum, Mean, Max, Min, Prod };

/// axes: non-negative, sorted, unique.  EMPTY axes = no reduction (a copy,
/// like NumPy axis=()).  keepdims keeps reduced dims with size 1.
/// Mean/Max/Min over zero elements throw EvalError (only when the output is
/// non-empty); Sum over zero elements is 0, Prod 1.  Max/Min propagate NaN.
Tensor reduce(ReduceOp op, const Tensor &x, std::vector<int64_t> axes,
              bool keepdims);

/// Numerically stable (subtracts the max along `axis`).  axis >= 0.
Tensor softmax(const Tensor &x, int64_t axis);
Tensor logSoftmax(const Tensor &x, int64_t axis);

/// Normalises over dims [axis, rank) with the biased variance:
/// y = (x - mean) / sqrt(var + eps) * scale + bias.
/// scale / bias have shape x.shape[axis:]; bias may be nullptr.
Tensor layerNorm(const Tensor &x, const Tensor &scale, const Tensor *bias,
                 int64_t axis, double epsilon);

/// y = x / sqrt(mean(x^2 over [axis, rank)) + eps) * scale.
Tensor rmsNorm(const Tensor &x, const Tensor &scale, int64_t axis,
               double epsilon);

enum class Reduction { None, Mean, Sum };

/// logits [..., C], labels [...] (= logits.shape[:-1], integer values).
/// Per position: -log_softmax(logits)[label], or with label smoothing e
/// (in [0, 1)) the cross-entropy against (1 - e) onehot(label) + e / C:
/// (1 - e) (-log_softmax[label]) + e mean_c(-log_softmax[c]).  A position
/// whose label is `ignoreIndex` has loss 0 and is not counted: Mean is the
/// sum over the counted positions (NaN when there are none).  None: shape
/// labels.shape; Mean/Sum: rank 0.  Any other label outside [0, C) ->
/// EvalError; Mean over zero positions -> EvalError.  Result dtype `out`.
Tensor crossEntropy(const Tensor &logits, const Tensor &labels,
                    Reduction reduction, DType out, double labelSmoothing = 0,
                    std::optional<int64_t> ignoreIndex = std::nullopt);

/// (pred - target)^2, same shapes; None keeps the shape, Mean/Sum give
/// rank 0.  dtype pred.dtype.  Mean over zero elements -> EvalError.
Tensor mse(const Tensor &pred, const Tensor &target, Reduction reduction);

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// Same numel (asserted); data unchanged.
Tensor reshape(const Tensor &x, std::vector<int64_t> newShape);

/// out.shape[i] = x.shape[perm[i]].
Tensor transpose(const Tensor &x, const std::vector<int64_t> &perm);

/// NumPy broadcast_to (asserts x.shape broadcasts to `shape`).
Tensor broadcastTo(const Tensor &x, std::vector<int64_t> shape);

/// Concatenate along `axis`; all inputs share dtype, rank and all other
/// dims.  At least one input.
Tensor concat(const std::vector<const Tensor *> &inputs, int64_t axis);
Tensor concat(const std::vector<Tensor> &inputs, int64_t axis);

/// Per dimension: start, limit >= 0, stride >= 1;
/// out size = ceil((limit - start) / stride) (0 if limit <= start);
/// element i = in[start + i*stride].
Tensor slice(const Tensor &x, const std::vector<int64_t> &starts,
             const std::vector<int64_t> &limits,
             const std::vector<int64_t> &strides);

/// NumPy take: out.shape = x.shape[:axis] + indices.shape + x.shape[axis+1:].
/// Negative indices wrap once (-1 = last); out of range -> EvalError.
Tensor gather(const Tensor &x, const Tensor &indices, int64_t axis);

/// table [V, D], ids (any shape, integer values in [0, V), no wrapping)
/// -> ids.shape + [D], dtype table.dtype.
Tensor embedding(const Tensor &table, const Tensor &ids);

/// Constant padding; low/high are per-dimension and non-negative.
Tensor pad(const Tensor &x, const std::vector<int64_t> &low,
           const std::vector<int64_t> &high, double value);

/// Element value = its index along `axis`.
Tensor iota(std::vector<int64_t> shape, int64_t axis, DType dtype);

} // namespace dlc::oracle

#endif // DLC_ORACLE_KERNELS_KERNELS_H
