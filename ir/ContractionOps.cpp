//===- ContractionOps.cpp - shape rules of matmul, conv2d and pooling -----===//

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"
#include "ir/Vjp.h"

using namespace mlir;
using namespace dlc;

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  StringRef opName = getOperationName();
  auto lhs = getRankedType(adaptor.getLhs());
  auto rhs = getRankedType(adaptor.getRhs());
  if (!lhs || !rhs)
    return opError(loc, opName, "needs ranked tensor operands");
  if (lhs.getElementType() != rhs.getElementType())
    return opError(loc, opName, "element types differ: ", formatType(lhs),
                   " @ ", formatType(rhs), " (use cast to convert)");
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return opError(loc, opName, "needs operands of rank at least 2, got ",
                   formatType(lhs), " @ ", formatType(rhs),
                   " (reshape a vector to a 1-row or 1-column matrix)");
  SmallVector<int64_t> a(lhs.getShape()), b(rhs.getShape());
  bool transposeA = boolOr(adaptor.getTransposeAAttr(), false);
  bool transposeB = boolOr(adaptor.getTransposeBAttr(), false);
  if (transposeA)
    std::swap(a[a.size() - 1], a[a.size() - 2]);
  if (transposeB)
    std::swap(b[b.size() - 1], b[b.size() - 2]);
  int64_t m = a[a.size() - 2], k = a.back(), k2 = b[b.size() - 2], n = b.back();
  auto operand = [](RankedTensorType t, bool transposed) {
    return transposed ? "transpose(" + formatType(t) + ")" : formatType(t);
  };
  if (k != k2)
    return opError(loc, opName, "contracting dimensions differ: ", k, " vs ",
                   k2, " in ", operand(lhs, transposeA), " @ ",
                   operand(rhs, transposeB));
  auto batch = broadcastShapes(ArrayRef<int64_t>(a).drop_back(2),
                               ArrayRef<int64_t>(b).drop_back(2));
  if (!batch)
    return opError(loc, opName, "batch dimensions do not broadcast: ",
                   formatType(lhs), " @ ", formatType(rhs));
  batch->push_back(m);
  batch->push_back(n);
  types.push_back(RankedTensorType::get(*batch, lhs.getElementType()));
  return success();
}

/// Checks that `attr` has `size` elements, each at least `min`.
static LogicalResult checkList(std::optional<Location> loc, StringRef opName,
                               StringRef name, ArrayRef<int64_t> values,
                               size_t size, int64_t min) {
  if (values.size() != size)
    return opError(loc, opName, name, " needs ", size, " values, got ",
                   values.size());
  for (int64_t v : values)
    if (v < min)
      return opError(loc, opName, name, " values must be at least ", min,
                     ", got ", formatShape(values));
  return success();
}

/// Output size of a sliding window along one dimension, or a failure that
/// says the window does not fit.
static FailureOr<int64_t> windowOutputSize(std::optional<Location> loc,
                                           StringRef opName, StringRef dimName,
                                           int64_t size,
                                           int64_t padBefore, int64_t padAfter,
                                           int64_t window, int64_t stride,
                                           int64_t dilation) {
  int64_t span, padded;
  if (__builtin_mul_overflow(dilation, window - 1, &span) ||
      __builtin_add_overflow(span, 1, &span) ||
      __builtin_add_overflow(size, padBefore, &padded) ||
      __builtin_add_overflow(padded, padAfter, &padded))
    return opError(loc, opName, "the window (", window, " with dilation ",
                   dilation, ") or the padded ", dimName, " (", size, " + ",
                   padBefore, " + ", padAfter, ") overflows 64 bits");
  if (padded < span)
    return opError(loc, opName, "a window of ", span, " does not fit the ",
                   dimName, " of the input, ", size, " padded to ", padded);
  return (padded - span) / stride + 1;
}

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  StringRef opName = getOperationName();
  auto x = getRankedType(adaptor.getX());
  auto w = getRankedType(adaptor.getW());
  if (!x || !w)
    return opError(loc, opName, "needs ranked tensor operands");
  if (x.getRank() != 4 || w.getRank() != 4)
    return opError(loc, opName, "needs x as [N, C, H, W] and w as [O, I, KH, "
                   "KW], got ", formatType(x), " and ", formatType(w));
  if (x.getElementType() != w.getElementType())
    return opError(loc, opName, "element types differ: x is ", formatType(x),
                   ", w is ", formatType(w));
  if (failed(requireAttrs(loc, opName,
                          {{"strides", adaptor.getStridesAttr()},
                           {"padding", adaptor.getPaddingAttr()},
                           {"dilations", adaptor.getDilationsAttr()},
                           {"groups", adaptor.getGroupsAttr()}})))
    return failure();
  if (failed(checkList(loc, opName, "strides", adaptor.getStrides(), 2, 1)) ||
      failed(checkList(loc, opName, "padding", adaptor.getPadding(), 4, 0)) ||
      failed(checkList(loc, opName, "dilations", adaptor.getDilations(), 2, 1)))
    return failure();
  if (w.getDimSize(2) < 1 || w.getDimSize(3) < 1)
    return opError(loc, opName, "the kernel needs a height and a width of at "
                   "least 1, w is ", formatType(w));
  int64_t groups = adaptor.getGroups();
  // Channels-last: x is [N, H, W, C] (dims below: channel, height, width).
  bool last = adaptor.getChannelsLast();
  int64_t cDim = last ? 3 : 1, hDim = last ? 1 : 2, wDim = last ? 2 : 3;
  int64_t c = x.getDimSize(cDim), o = w.getDimSize(0);
  if (groups < 1 || c % groups != 0 || o % groups != 0)
    return opError(loc, opName, "groups = ", groups,
                   " must divide the input channels (", c,
                   ") and the output channels (", o, ")");
  if (w.getDimSize(1) * groups != c)
    return opError(loc, opName, "the weights take ", w.getDimSize(1) * groups,
                   " input channel(s) but x has ", c, ": x is ", formatType(x),
                   ", w is ", formatType(w), " with groups = ", groups);
  if (Value bias = adaptor.getBias()) {
    auto b = getRankedType(bias);
    if (!b || b.getRank() != 1 || b.getDimSize(0) != o ||
        b.getElementType() != x.getElementType())
      return opError(loc, opName, "bias must be ", formatElementType(x.getElementType()),
                     "[", o, "], got ", formatType(bias.getType()));
  }
  ArrayRef<int64_t> s = adaptor.getStrides(), p = adaptor.getPadding(),
                    d = adaptor.getDilations();
  auto oh = windowOutputSize(loc, opName, "height", x.getDimSize(hDim), p[0],
                             p[2], w.getDimSize(2), s[0], d[0]);
  if (failed(oh))
    return failure();
  auto ow = windowOutputSize(loc, opName, "width", x.getDimSize(wDim), p[1], p[3],
                             w.getDimSize(3), s[1], d[1]);
  if (failed(ow))
    return failure();
  SmallVector<int64_t> shape{x.getDimSize(0), o, *oh, *ow};
  if (last)
    shape = {x.getDimSize(0), *oh, *ow, o};
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

/// Shared by max_pool2d and avg_pool2d.
static LogicalResult inferPool(std::optional<Location> loc, StringRef opName,
                               Value input, DenseI64ArrayAttr kernelAttr,
                               DenseI64ArrayAttr stridesAttr,
                               DenseI64ArrayAttr paddingAttr, bool channelsLast,
                               SmallVectorImpl<Type> &types) {
  if (failed(requireAttrs(loc, opName,
                          {{"kernel", kernelAttr},
                           {"strides", stridesAttr},
                           {"padding", paddingAttr}})))
    return failure();
  ArrayRef<int64_t> kernel = kernelAttr, strides = stridesAttr,
                    padding = paddingAttr;
  auto x = getRankedType(input);
  if (!x || x.getRank() != 4)
    return opError(loc, opName, "needs x as [N, C, H, W], got ",
                   formatType(input.getType()));
  if (failed(checkList(loc, opName, "kernel", kernel, 2, 1)) ||
      failed(checkList(loc, opName, "strides", strides, 2, 1)) ||
      failed(checkList(loc, opName, "padding", padding, 4, 0)))
    return failure();
  for (int i = 0; i < 2; ++i)
    if (padding[i] >= kernel[i] || padding[i + 2] >= kernel[i])
      return opError(loc, opName, "padding ", formatShape(padding),
                     " must be smaller than the kernel ", formatShape(kernel));
  // Channels-last: x is [N, H, W, C].
  int64_t hDim = channelsLast ? 1 : 2, wDim = channelsLast ? 2 : 3,
          cDim = channelsLast ? 3 : 1;
  auto oh = windowOutputSize(loc, opName, "height", x.getDimSize(hDim),
                             padding[0], padding[2], kernel[0], strides[0], 1);
  if (failed(oh))
    return failure();
  auto ow = windowOutputSize(loc, opName, "width", x.getDimSize(wDim), padding[1],
                             padding[3], kernel[1], strides[1], 1);
  if (failed(ow))
    return failure();
  SmallVector<int64_t> shape{x.getDimSize(0), x.getDimSize(cDim), *oh, *ow};
  if (channelsLast)
    shape = {x.getDimSize(0), *oh, *ow, x.getDimSize(cDim)};
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferPool(loc, getOperationName(), adaptor.getX(),
                   adaptor.getKernelAttr(), adaptor.getStridesAttr(),
                   adaptor.getPaddingAttr(), adaptor.getChannelsLast(), types);
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferPool(loc, getOperationName(), adaptor.getX(),
                   adaptor.getKernelAttr(), adaptor.getStridesAttr(),
                   adaptor.getPaddingAttr(), adaptor.getChannelsLast(), types);
}

//===----------------------------------------------------------------------===//
// Cost
//===----------------------------------------------------------------------===//

/// A multiply-add per element of the result and of the contraction.

int64_t MatmulOp::getFlops() {
  auto lhs = getLhs().getType();
  int64_t k = getTransposeA() ? lhs.getDimSize(lhs.getRank() - 2)
                              : lhs.getDimSize(lhs.getRank() - 1);
  return saturatingProduct({2, numElementsOf(getResult()), k});
}

/// A multiply-add per output element and weight of its window; one add for
/// the bias.
int64_t Conv2dOp::getFlops() {
  auto w = getW().getType();
  int64_t outputs = numElementsOf(getResult());
  return saturatingSum(saturatingProduct({2, outputs, w.getDimSize(1),
                                          w.getDimSize(2), w.getDimSize(3)}),
                       getBias() ? outputs : 0);
}

/// One comparison or addition per window element.
int64_t MaxPool2dOp::getFlops() {
  return saturatingProduct(
      {numElementsOf(getResult()), getKernel()[0], getKernel()[1]});
}
int64_t AvgPool2dOp::getFlops() {
  return saturatingProduct(
      {numElementsOf(getResult()), getKernel()[0], getKernel()[1]});
}

//===----------------------------------------------------------------------===//
// Derivatives
//===----------------------------------------------------------------------===//

/// C = op(A) @ op(B): the gradients are the transposed products (the
/// transposes become the matmuls' flags, never materialised), summed over
/// batch dimensions that were broadcast.
LogicalResult MatmulOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                 SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0], a = getLhs(), c = getRhs();
  grads.assign(2, Value());
  if (!g)
    return success();
  bool ta = getTransposeA(), tb = getTransposeB();
  Value ga = ta ? b.matmul(c, g, tb, true) : b.matmul(g, c, false, !tb);
  grads[0] = b.sumToShape(ga, a.getType());
  // A matrix applied to every row of a batch (x[B, T, K] @ w[K, N], a
  // layer's weight): its gradient is one GEMM contracting the batch's rows
  // too, x viewed as [B*T, K] — not B products of [K, N] summed after,
  // which writes B weight-sized tensors and reads them back.
  auto aType = cast<RankedTensorType>(a.getType());
  auto cType = cast<RankedTensorType>(c.getType());
  auto gType = cast<RankedTensorType>(g.getType());
  if (!ta && cType.getRank() == 2 && aType.getRank() > 2 && aType.hasStaticShape() &&
      gType.hasStaticShape()) {
    int64_t k = aType.getShape().back(), n = gType.getShape().back();
    int64_t rows = aType.getNumElements() / std::max<int64_t>(1, k);
    Value a2 = b.reshape(a, {rows, k}), g2 = b.reshape(g, {rows, n});
    grads[1] = tb ? b.matmul(g2, a2, true, false) : b.matmul(a2, g2, true, false);
    return success();
  }
  Value gb = tb ? b.matmul(g, a, true, ta) : b.matmul(a, g, !ta, false);
  grads[1] = b.sumToShape(gb, c.getType());
  return success();
}

namespace {
/// A 2-D window along one spatial dimension: input size, padding before and
/// after, kernel, stride, dilation, and the output size they give.
struct Window {
  int64_t size, before, after, kernel, stride, dilation, out;
  int64_t extent() const { return dilation * (kernel - 1) + 1; }
  int64_t padded() const { return size + before + after; }
  /// Padded rows past the last window (never read).
  int64_t unused() const { return padded() - ((out - 1) * stride + extent()); }
};
} // namespace

static std::array<Window, 2> windowsOf(ArrayRef<int64_t> x, ArrayRef<int64_t> out,
                                       ArrayRef<int64_t> kernel,
                                       ArrayRef<int64_t> strides,
                                       ArrayRef<int64_t> padding,
                                       ArrayRef<int64_t> dilations) {
  std::array<Window, 2> w;
  for (int d = 0; d < 2; ++d)
    w[d] = {x[2 + d],  padding[d],  padding[2 + d], kernel[d],
            strides[d], dilations[d], out[2 + d]};
  return w;
}

/// dy with stride - 1 zeros between its rows and columns: what a stride-1
/// convolution must read to act as the transposed strided one.
static Value dilateByStride(VjpBuilder &b, Value dy,
                            const std::array<Window, 2> &w) {
  ArrayRef<int64_t> s = shapeOfValue(dy);
  SmallVector<int64_t> full{s[0], s[1], (w[0].out - 1) * w[0].stride + 1,
                            (w[1].out - 1) * w[1].stride + 1};
  return b.unslice(dy, full, {0, 0, 0, 0}, {1, 1, w[0].stride, w[1].stride});
}

/// The weights of the transposed convolution: each kernel flipped in both
/// spatial dimensions, input and output channels exchanged within each
/// group: [O, C/g, KH, KW] -> [C, O/g, KH, KW].
static Value transposedKernel(VjpBuilder &b, Value w, int64_t groups) {
  ArrayRef<int64_t> s = shapeOfValue(w);
  int64_t o = s[0], cg = s[1], kh = s[2], kw = s[3];
  auto reversed = [&](int64_t n) {
    SmallVector<int64_t> idx;
    for (int64_t i = n - 1; i >= 0; --i)
      idx.push_back(i);
    return b.indices(idx);
  };
  Value flipped = b.gather(b.gather(w, reversed(kh), 2), reversed(kw), 3);
  Value grouped = b.reshape(flipped, {groups, o / groups, cg, kh, kw});
  Value swapped = b.transpose(grouped, {0, 2, 1, 3, 4});
  return b.reshape(swapped, {groups * cg, o / groups, kh, kw});
}

static Value conv(VjpBuilder &b, Value x, Value w, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> padding, ArrayRef<int64_t> dilations,
                  int64_t groups) {
  OpBuilder &o = b.builder();
  return b.create<Conv2dOp>(
      {x, w}, {o.getNamedAttr("strides", o.getDenseI64ArrayAttr(strides)),
               o.getNamedAttr("padding", o.getDenseI64ArrayAttr(padding)),
               o.getNamedAttr("dilations", o.getDenseI64ArrayAttr(dilations)),
               o.getNamedAttr("groups", o.getI64IntegerAttr(groups))});
}

/// dx: the transposed convolution of dy (a stride-1 convolution of dy,
/// dilated by the stride and padded by the kernel's extent, with the
/// transposed kernel), cut to the unpadded input.
static Value convInputGrad(VjpBuilder &b, Conv2dOp op, Value dy,
                           const std::array<Window, 2> &w) {
  Value dilated = dilateByStride(b, dy, w);
  SmallVector<int64_t> padding{w[0].extent() - 1, w[1].extent() - 1,
                               w[0].extent() - 1 + w[0].unused(),
                               w[1].extent() - 1 + w[1].unused()};
  Value full = conv(b, dilated, transposedKernel(b, op.getW(), op.getGroups()),
                    {1, 1}, padding, {w[0].dilation, w[1].dilation},
                    op.getGroups());
  ArrayRef<int64_t> x = shapeOfValue(op.getX());
  return b.slice(full, {0, 0, w[0].before, w[1].before},
                 {x[0], x[1], w[0].before + x[2], w[1].before + x[3]},
                 {1, 1, 1, 1});
}

/// dw[o, c] = sum over images and output positions of dy[n, o] times the
/// input window: a convolution with the images as channels (the input's
/// channels as its batch, dy's channels as its filters), the forward
/// stride as dilation and the forward dilation as stride. With groups, the
/// diagonal blocks of the channel-by-filter result.
static Value convWeightGrad(VjpBuilder &b, Conv2dOp op, Value dy,
                            const std::array<Window, 2> &w) {
  Value x = op.getX();
  ArrayRef<int64_t> xs = shapeOfValue(x);
  Value padded = b.pad(x, {0, 0, w[0].before, w[1].before},
                       {0, 0, w[0].after, w[1].after});
  Value used = b.slice(padded, {0, 0, 0, 0},
                       {xs[0], xs[1], w[0].padded() - w[0].unused(),
                        w[1].padded() - w[1].unused()},
                       {1, 1, 1, 1});
  Value full = conv(b, b.transpose(used, {1, 0, 2, 3}),
                    b.transpose(dy, {1, 0, 2, 3}), {w[0].dilation, w[1].dilation},
                    {0, 0, 0, 0}, {w[0].stride, w[1].stride}, 1);
  // full: [C, O, KH, KW]; keep channel c with filter o of the same group.
  int64_t groups = op.getGroups();
  ArrayRef<int64_t> ws = shapeOfValue(op.getW());
  int64_t o = ws[0], cg = ws[1], kh = ws[2], kw = ws[3];
  if (groups == 1)
    return b.transpose(full, {1, 0, 2, 3});
  Value blocks = b.transpose(
      b.reshape(full, {groups, cg, groups, o / groups, kh, kw}),
      {0, 2, 1, 3, 4, 5});
  SmallVector<int64_t> diagonal;
  for (int64_t i = 0; i < groups; ++i)
    diagonal.push_back(i * groups + i);
  Value picked = b.gather(
      b.reshape(blocks, {groups * groups, cg, o / groups, kh, kw}),
      b.indices(diagonal), 0);
  return b.reshape(b.transpose(picked, {0, 2, 1, 3, 4}), {o, cg, kh, kw});
}

LogicalResult Conv2dOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                 SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.assign((*this)->getNumOperands(), Value());
  if (!g)
    return success();
  if (getChannelsLast())
    return emitOpError("channels_last is the CPU's inference layout: it has no derivative");
  ArrayRef<int64_t> ws = shapeOfValue(getW());
  auto w = windowsOf(shapeOfValue(getX()), shapeOfValue(getResult()),
                     {ws[2], ws[3]}, getStrides(), getPadding(), getDilations());
  grads[0] = convInputGrad(b, *this, g, w);
  grads[1] = convWeightGrad(b, *this, g, w);
  if (getBias())
    grads[2] = b.reduceSum(g, {0, 2, 3}, false);
  return success();
}

/// The input of a pooling window at offset (i, j) for every output
/// position: a strided slice of the padded input, [N, C, OH, OW].
static Value windowSlice(VjpBuilder &b, Value padded,
                         const std::array<Window, 2> &w, int64_t i, int64_t j) {
  ArrayRef<int64_t> s = shapeOfValue(padded);
  return b.slice(padded, {0, 0, i, j},
                 {s[0], s[1], i + (w[0].out - 1) * w[0].stride + 1,
                  j + (w[1].out - 1) * w[1].stride + 1},
                 {1, 1, w[0].stride, w[1].stride});
}

/// Sums `part(i, j)` (the gradient of window offset (i, j), [N, C, OH, OW])
/// back to the input positions each offset read, and cuts the padding.
static Value poolInputGrad(VjpBuilder &b, Value x, const std::array<Window, 2> &w,
                           llvm::function_ref<Value(int64_t, int64_t)> part) {
  ArrayRef<int64_t> xs = shapeOfValue(x);
  SmallVector<int64_t> padded{xs[0], xs[1], w[0].padded(), w[1].padded()};
  Value sum;
  for (int64_t i = 0; i < w[0].kernel; ++i)
    for (int64_t j = 0; j < w[1].kernel; ++j) {
      Value placed = b.unslice(part(i, j), padded, {0, 0, i, j},
                               {1, 1, w[0].stride, w[1].stride});
      sum = sum ? b.add(sum, placed) : placed;
    }
  return b.slice(sum, {0, 0, w[0].before, w[1].before},
                 {xs[0], xs[1], w[0].before + xs[2], w[1].before + xs[3]},
                 {1, 1, 1, 1});
}

/// True when the pooling windows tile the input: kernel = stride, no
/// padding or dilation, the sizes whole multiples (2x2 pools, and a global
/// average pool, one window the size of the image).
static bool windowsTile(const std::array<Window, 2> &w) {
  for (const Window &d : w)
    if (d.kernel != d.stride || d.before || d.after || d.dilation != 1 ||
        d.out * d.kernel != d.size)
      return false;
  return true;
}

/// The max-pool gradient when the windows tile the input (kernel = stride,
/// no padding, sizes divisible; LeNet's and most CNNs' 2x2 pools): each
/// element is in one window, so a view of x as [N, C, OH, OW, kh*kw] gives
/// each window's first maximum by one row reduction (the smallest offset
/// that equals the max) and each element's gradient by one select: two
/// fused kernels, where the general rule below takes a slice and a scatter
/// per window offset. Null when the windows do not tile.
static Value tiledMaxPoolGrad(VjpBuilder &b, Value x, Value y, Value g,
                              const std::array<Window, 2> &w) {
  ArrayRef<int64_t> xs = shapeOfValue(x);
  if (!windowsTile(w))
    return Value();
  int64_t n = xs[0], c = xs[1], oh = w[0].out, ow = w[1].out, kh = w[0].kernel,
          kw = w[1].kernel;
  SmallVector<int64_t> full{n, c, oh, ow, kh * kw};
  Value windows =
      b.reshape(b.transpose(b.reshape(x, {n, c, oh, kh, ow, kw}), {0, 1, 2, 4, 3, 5}), full);
  Value isMax = b.compare(ComparePredicate::eq, windows,
                          b.broadcastTo(b.reshape(y, {n, c, oh, ow, 1}), full));
  Value offset = b.iota(full, 4, b.builder().getI32Type());
  Value first = b.create<ReduceMinOp>(
      {b.select(isMax, offset, b.like(offset, double(kh * kw)))},
      {b.builder().getNamedAttr("axes", b.builder().getDenseI64ArrayAttr({4})),
       b.builder().getNamedAttr("keepdims", b.builder().getBoolAttr(true))});
  Value perWindow =
      b.select(b.compare(ComparePredicate::eq, offset, b.broadcastTo(first, full)),
               b.broadcastTo(b.reshape(g, {n, c, oh, ow, 1}), full), b.like(windows, 0));
  return b.reshape(
      b.transpose(b.reshape(perWindow, {n, c, oh, ow, kh, kw}), {0, 1, 2, 4, 3, 5}), xs);
}

/// Each window's gradient goes to its first maximum (row-major), as XLA's
/// select-and-scatter does.
LogicalResult MaxPool2dOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0], x = getX(), y = getResult();
  grads.assign(1, Value());
  if (!g)
    return success();
  if (getChannelsLast())
    return emitOpError("channels_last is the CPU's inference layout: it has no derivative");
  auto w = windowsOf(shapeOfValue(x), shapeOfValue(y), getKernel(),
                     getStrides(), getPadding(), {1, 1});
  if (Value tiled = tiledMaxPoolGrad(b, x, y, g, w)) {
    grads[0] = tiled;
    return success();
  }
  Value padded = b.pad(x, {0, 0, w[0].before, w[1].before},
                       {0, 0, w[0].after, w[1].after}, -INFINITY);
  SmallVector<Value> parts;
  Value taken = b.boolean(false), zero = b.like(g, 0);
  for (int64_t i = 0; i < w[0].kernel; ++i)
    for (int64_t j = 0; j < w[1].kernel; ++j) {
      Value isMax = b.compare(ComparePredicate::eq, windowSlice(b, padded, w, i, j), y);
      Value first = b.select(taken, b.boolean(false), isMax);
      taken = b.select(first, b.boolean(true), taken);
      parts.push_back(b.select(first, g, zero));
    }
  grads[0] = poolInputGrad(b, x, w, [&](int64_t i, int64_t j) {
    return parts[i * w[1].kernel + j];
  });
  return success();
}

/// Each window's gradient is shared by the elements it averaged.
LogicalResult AvgPool2dOp::buildVjp(VjpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0], x = getX();
  grads.assign(1, Value());
  if (g && getChannelsLast())
    return emitOpError("channels_last is the CPU's inference layout: it has no derivative");
  if (!g)
    return success();
  auto w = windowsOf(shapeOfValue(x), shapeOfValue(getResult()), getKernel(),
                     getStrides(), getPadding(), {1, 1});
  // Elements per window: the whole window, or those not in the padding (a
  // constant per output position, from the static shapes).
  Value share;
  if (getCountIncludePad()) {
    share = b.div(g, b.like(g, double(w[0].kernel * w[1].kernel)));
  } else {
    auto count = [](const Window &w, int64_t p) {
      int64_t lo = p * w.stride - w.before;
      int64_t first = std::max<int64_t>(lo, 0);
      int64_t last = std::min<int64_t>(lo + w.kernel, w.size);
      return std::max<int64_t>(last - first, 1);
    };
    SmallVector<double> counts;
    for (int64_t p = 0; p < w[0].out; ++p)
      for (int64_t q = 0; q < w[1].out; ++q)
        counts.push_back(double(count(w[0], p) * count(w[1], q)));
    auto element = cast<RankedTensorType>(g.getType()).getElementType();
    auto type = RankedTensorType::get({w[0].out, w[1].out}, element);
    SmallVector<APFloat> values;
    for (double c : counts) {
      APFloat v(c);
      bool lost;
      v.convert(cast<FloatType>(element).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
      values.push_back(v);
    }
    Value divisor = b.builder().create<ConstantOp>(
        b.location(), type,
        cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
    share = b.div(g, divisor);
  }
  if (windowsTile(w)) {
    // Each element is in one window: its share broadcast over the window
    // ([N, C, OH, 1, OW, 1] to [N, C, OH, kh, OW, kw]), one kernel where
    // the general rule takes a slice and a pad per window offset (a
    // global average pool over 7x7 would take 49).
    ArrayRef<int64_t> xs = shapeOfValue(x);
    int64_t n = xs[0], c = xs[1], oh = w[0].out, ow = w[1].out;
    grads[0] = b.reshape(b.broadcastTo(b.reshape(share, {n, c, oh, 1, ow, 1}),
                                       {n, c, oh, w[0].kernel, ow, w[1].kernel}),
                         xs);
    return success();
  }
  grads[0] = poolInputGrad(b, x, w, [&](int64_t, int64_t) { return share; });
  return success();
}
