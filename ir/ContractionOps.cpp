//===- ContractionOps.cpp - shape rules of matmul, conv2d and pooling -----===//

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"

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
  int64_t span = dilation * (window - 1) + 1;
  int64_t padded = size + padBefore + padAfter;
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
  int64_t groups = adaptor.getGroups();
  int64_t c = x.getDimSize(1), o = w.getDimSize(0);
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
  auto oh = windowOutputSize(loc, opName, "height", x.getDimSize(2), p[0],
                             p[2], w.getDimSize(2), s[0], d[0]);
  if (failed(oh))
    return failure();
  auto ow = windowOutputSize(loc, opName, "width", x.getDimSize(3), p[1], p[3],
                             w.getDimSize(3), s[1], d[1]);
  if (failed(ow))
    return failure();
  types.push_back(RankedTensorType::get({x.getDimSize(0), o, *oh, *ow},
                                        x.getElementType()));
  return success();
}

/// Shared by max_pool2d and avg_pool2d.
static LogicalResult inferPool(std::optional<Location> loc, StringRef opName,
                               Value input, DenseI64ArrayAttr kernelAttr,
                               DenseI64ArrayAttr stridesAttr,
                               DenseI64ArrayAttr paddingAttr,
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
  auto oh = windowOutputSize(loc, opName, "height", x.getDimSize(2),
                             padding[0], padding[2], kernel[0], strides[0], 1);
  if (failed(oh))
    return failure();
  auto ow = windowOutputSize(loc, opName, "width", x.getDimSize(3), padding[1],
                             padding[3], kernel[1], strides[1], 1);
  if (failed(ow))
    return failure();
  types.push_back(RankedTensorType::get(
      {x.getDimSize(0), x.getDimSize(1), *oh, *ow}, x.getElementType()));
  return success();
}

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferPool(loc, getOperationName(), adaptor.getX(),
                   adaptor.getKernelAttr(), adaptor.getStridesAttr(),
                   adaptor.getPaddingAttr(), types);
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferPool(loc, getOperationName(), adaptor.getX(),
                   adaptor.getKernelAttr(), adaptor.getStridesAttr(),
                   adaptor.getPaddingAttr(), types);
}

//===----------------------------------------------------------------------===//
// Cost
//===----------------------------------------------------------------------===//

/// A multiply-add per element of the result and of the contraction.
int64_t MatmulOp::getFlops() {
  auto lhs = getLhs().getType();
  int64_t k = getTransposeA() ? lhs.getDimSize(lhs.getRank() - 2)
                              : lhs.getDimSize(lhs.getRank() - 1);
  return 2 * numElementsOf(getResult()) * k;
}

/// A multiply-add per output element and weight of its window; one add for
/// the bias.
int64_t Conv2dOp::getFlops() {
  auto w = getW().getType();
  int64_t perOutput = w.getDimSize(1) * w.getDimSize(2) * w.getDimSize(3);
  int64_t outputs = numElementsOf(getResult());
  return 2 * outputs * perOutput + (getBias() ? outputs : 0);
}

/// One comparison or addition per window element.
int64_t MaxPool2dOp::getFlops() {
  return numElementsOf(getResult()) * getKernel()[0] * getKernel()[1];
}
int64_t AvgPool2dOp::getFlops() {
  return numElementsOf(getResult()) * getKernel()[0] * getKernel()[1];
}
