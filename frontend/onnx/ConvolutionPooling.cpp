//===- ConvolutionPooling.cpp - ONNX Conv and pooling ---------------------===//
//
// 2-D Conv, MaxPool and AveragePool map to `dlc.conv2d` and the pooling
// ops; 1-D ones become 2-D with a unit height. `auto_pad` and `ceil_mode`
// turn into explicit padding. Global pooling is a reduction over the
// spatial dimensions. ConvTranspose is the convolution its gradient is: the
// input with stride-1 zeros between its elements, padded, convolved with
// the kernel flipped and its channel axes swapped.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ShapeHelpers.h"

using namespace mlir;

namespace dlc::onnximport {

/// The window of a convolution or pooling node, per spatial dimension.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, begin, end;
};

/// Reads kernel_shape, strides, dilations, pads / auto_pad (and
/// ceil_mode) for inputs whose spatial sizes are `spatial`.
static std::optional<Window> readWindow(NodeImporter &n,
                                        ArrayRef<int64_t> spatial,
                                        ArrayRef<int64_t> weightKernel,
                                        bool pooling) {
  size_t rank = spatial.size();
  Window w;
  auto kernel = n.intsAttr("kernel_shape", SmallVector<int64_t>(weightKernel));
  auto strides = n.intsAttr("strides", SmallVector<int64_t>(rank, 1));
  auto dilations = n.intsAttr("dilations", SmallVector<int64_t>(rank, 1));
  auto pads = n.intsAttr("pads", SmallVector<int64_t>(2 * rank, 0));
  auto autoPad = n.stringAttr("auto_pad", "NOTSET");
  auto ceilMode = n.intAttr("ceil_mode", 0);
  if (!kernel || !strides || !dilations || !pads || !autoPad || !ceilMode)
    return std::nullopt;
  if (kernel->size() != rank || strides->size() != rank ||
      dilations->size() != rank || pads->size() != 2 * rank) {
    n.error() << "kernel_shape, strides, dilations and pads must have one "
                 "entry per spatial dimension ("
              << rank << "; pads 2 per dimension)";
    return std::nullopt;
  }
  if (pooling && llvm::any_of(*dilations, [](int64_t d) { return d != 1; })) {
    (void)n.unsupported("dilations", "dlc's pooling has no dilation");
    return std::nullopt;
  }
  w.kernel = *kernel;
  w.strides = *strides;
  w.dilations = *dilations;
  w.begin.assign(pads->begin(), pads->begin() + rank);
  w.end.assign(pads->begin() + rank, pads->end());
  for (size_t d = 0; d < rank; ++d) {
    int64_t extent = (w.kernel[d] - 1) * w.dilations[d] + 1;
    if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
      int64_t out = (spatial[d] + w.strides[d] - 1) / w.strides[d];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[d] + extent - spatial[d]);
      int64_t small = total / 2, large = total - small;
      w.begin[d] = *autoPad == "SAME_UPPER" ? small : large;
      w.end[d] = *autoPad == "SAME_UPPER" ? large : small;
    } else if (*autoPad == "VALID") {
      w.begin[d] = w.end[d] = 0;
    } else if (*autoPad != "NOTSET") {
      (void)n.unsupported("auto_pad", "unknown value '" + *autoPad + "'");
      return std::nullopt;
    }
    if (*ceilMode) {
      // The last window may overhang the end; it must start inside the
      // input or its leading padding. The overhang becomes end padding.
      int64_t padded = spatial[d] + w.begin[d] + w.end[d];
      int64_t out = (padded - extent + w.strides[d] - 1) / w.strides[d] + 1;
      if ((out - 1) * w.strides[d] >= spatial[d] + w.begin[d])
        --out;
      w.end[d] += std::max<int64_t>(0, (out - 1) * w.strides[d] + extent - padded);
    }
  }
  return w;
}

/// [N, C, W] -> [N, C, 1, W] for 1-D windows; 2-D passes; others fail.
static Value to2d(NodeImporter &n, Value x, size_t spatialRank) {
  if (!x)
    return {};
  if (spatialRank == 2)
    return x;
  auto shape = shapeOf(x);
  if (spatialRank == 1)
    return n.reshape(x, {shape[0], shape[1], 1, shape[2]});
  n.error() << spatialRank << "-D windows are not supported (dlc has 1-D and "
               "2-D convolution and pooling)";
  return {};
}

static SmallVector<int64_t> pad2d(const Window &w) {
  if (w.begin.size() == 1)
    return {0, w.begin[0], 0, w.end[0]};
  return {w.begin[0], w.begin[1], w.end[0], w.end[1]};
}

static SmallVector<int64_t> pair2d(ArrayRef<int64_t> v) {
  if (v.size() == 1)
    return {1, v[0]};
  return {v[0], v[1]};
}

/// Back from 2-D to the input's rank.
static Value from2d(NodeImporter &n, Value y, size_t spatialRank) {
  if (!y || spatialRank == 2)
    return y;
  auto shape = shapeOf(y);
  return n.reshape(y, {shape[0], shape[1], shape[3]});
}

static LogicalResult importConv(NodeImporter &n) {
  Value x = n.input(0), w = n.input(1);
  if (!x || !w)
    return failure();
  auto xShape = shapeOf(x), wShape = shapeOf(w);
  if (xShape.size() < 3 || wShape.size() != xShape.size())
    return n.error() << "Conv needs X [N, C, spatial...] and W [M, C/group, "
                        "kernel...] of the same rank";
  size_t rank = xShape.size() - 2;
  auto window = readWindow(n, ArrayRef<int64_t>(xShape).drop_front(2),
                           ArrayRef<int64_t>(wShape).drop_front(2), false);
  auto group = n.intAttr("group", 1);
  if (!window || !group)
    return failure();
  SmallVector<Value> operands{to2d(n, x, rank), to2d(n, w, rank)};
  if (n.hasInput(2))
    operands.push_back(n.input(2));
  Value y = n.create<Conv2dOp>(
      operands,
      {n.i64s("strides", pair2d(window->strides)),
       n.i64s("padding", pad2d(*window)),
       n.i64s("dilations", pair2d(window->dilations)), n.i64("groups", *group)});
  return n.setOutput(0, from2d(n, y, rank));
}

/// Python's floor division (a negative total padding rounds down).
static int64_t floorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

static LogicalResult importConvTranspose(NodeImporter &n) {
  Value x = n.input(0), w = n.input(1);
  if (!x || !w)
    return failure();
  auto xShape = shapeOf(x), wShape = shapeOf(w);
  if (xShape.size() < 3 || wShape.size() != xShape.size())
    return n.error() << "ConvTranspose needs X [N, C, spatial...] and W [C, "
                        "M/group, kernel...] of the same rank";
  size_t rank = xShape.size() - 2;
  if (rank > 2)
    return n.error() << rank << "-D windows are not supported (dlc has 1-D "
                                "and 2-D convolution and pooling)";
  auto group = n.intAttr("group", 1);
  auto strides = n.intsAttr("strides", SmallVector<int64_t>(rank, 1));
  auto dilations = n.intsAttr("dilations", SmallVector<int64_t>(rank, 1));
  auto outPadding = n.intsAttr("output_padding", SmallVector<int64_t>(rank, 0));
  auto outShape = n.intsAttr("output_shape");
  auto kernel = n.intsAttr("kernel_shape", SmallVector<int64_t>(
                                               wShape.begin() + 2, wShape.end()));
  auto autoPad = n.stringAttr("auto_pad", "NOTSET");
  if (!group || !strides || !dilations || !outPadding || !outShape ||
      !kernel || !autoPad)
    return failure();
  bool same = *autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER";
  if (!same && *autoPad != "NOTSET" && *autoPad != "VALID")
    return n.unsupported("auto_pad", "unknown value '" + *autoPad + "'");
  bool hasPads = n.hasAttr("pads") && *autoPad == "NOTSET";
  auto pads = n.intsAttr("pads", SmallVector<int64_t>(2 * rank, 0));
  if (!pads)
    return failure();
  if (strides->size() != rank || dilations->size() != rank ||
      outPadding->size() != rank || kernel->size() != rank ||
      pads->size() != 2 * rank)
    return n.error() << "strides, dilations, output_padding and kernel_shape "
                        "must have one entry per spatial dimension ("
                     << rank << "; pads 2 per dimension)";
  if (!outShape->empty() && outShape->size() != rank) {
    // output_shape may also be given with the batch and channel dimensions.
    if (outShape->size() == rank + 2)
      outShape->erase(outShape->begin(), outShape->begin() + 2);
    else
      return n.error() << "output_shape must have one entry per spatial "
                          "dimension ("
                       << rank << ")";
  }
  int64_t channels = xShape[1], g = *group;
  if (g < 1 || channels % g != 0 || wShape[0] != channels)
    return n.error() << "W's first dimension (" << wShape[0]
                     << ") must be X's channels (" << channels
                     << "), divisible by group (" << g << ")";
  for (size_t d = 0; d < rank; ++d)
    if ((*kernel)[d] != wShape[2 + d])
      return n.error() << "kernel_shape does not match W's spatial shape";
  // Per spatial dimension: the zero-interleaved input's length, the padding
  // of the equivalent convolution (negative: cropped) and the output size.
  SmallVector<int64_t> lo(rank), hi(rank), out(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t s = (*strides)[d], in = xShape[2 + d];
    int64_t extent = ((*kernel)[d] - 1) * (*dilations)[d] + 1;
    int64_t natural = s * (in - 1) + (*outPadding)[d] + extent;
    int64_t begin = 0;
    if (hasPads) {
      begin = (*pads)[d];
      out[d] = outShape->empty() ? natural - begin - (*pads)[rank + d]
                                 : (*outShape)[d];
    } else {
      out[d] = !outShape->empty() ? (*outShape)[d] : same ? in * s : natural;
      int64_t total = natural - out[d];
      if (*autoPad == "SAME_UPPER")
        begin = floorDiv(total, 2);
      else if (same)
        begin = total - floorDiv(total, 2);
    }
    if (out[d] < 1)
      return n.error() << "the output size along spatial dimension " << d
                       << " is " << out[d];
    int64_t inserted = s * (in - 1) + 1;
    lo[d] = extent - 1 - begin;
    hi[d] = out[d] - inserted - lo[d] + extent - 1;
  }
  // 1. Stride - 1 zeros after every element: [N, C, H, 1, W, 1] padded to
  //    [N, C, H, s, W, s], flattened, the trailing zeros cut.
  SmallVector<int64_t> split{xShape[0], channels}, padHigh{0, 0};
  SmallVector<int64_t> merged{xShape[0], channels}, limits{xShape[0], channels};
  bool strided = false;
  for (size_t d = 0; d < rank; ++d) {
    int64_t s = (*strides)[d], in = xShape[2 + d];
    split.append({in, 1});
    padHigh.append({0, s - 1});
    merged.push_back(in * s);
    limits.push_back(s * (in - 1) + 1);
    strided |= s != 1;
  }
  Value u = x;
  if (strided) {
    u = n.reshape(x, split);
    u = n.create<PadOp>({u}, {n.i64s("low", SmallVector<int64_t>(split.size(), 0)),
                              n.i64s("high", padHigh),
                              n.named("value", n.b.getF64FloatAttr(0))});
    u = n.reshape(u, merged);
    u = slice(n, u, SmallVector<int64_t>(rank + 2, 0), limits,
              SmallVector<int64_t>(rank + 2, 1));
  }
  // 2. Negative padding crops.
  auto uShape = shapeOf(u);
  SmallVector<int64_t> starts(rank + 2, 0), ends(uShape);
  bool crop = false;
  for (size_t d = 0; d < rank; ++d) {
    starts[2 + d] = std::max<int64_t>(0, -lo[d]);
    ends[2 + d] = uShape[2 + d] - std::max<int64_t>(0, -hi[d]);
    crop |= lo[d] < 0 || hi[d] < 0;
    if (ends[2 + d] <= starts[2 + d])
      return n.error() << "the padding crops the whole input along spatial "
                          "dimension "
                       << d;
  }
  if (crop)
    u = slice(n, u, starts, ends, SmallVector<int64_t>(rank + 2, 1));
  // 3. The kernel flipped, [C, M/g, k...] -> [M, C/g, k...].
  int64_t perGroupOut = wShape[1], perGroupIn = channels / g;
  SmallVector<int64_t> grouped{g, perGroupIn, perGroupOut};
  grouped.append(wShape.begin() + 2, wShape.end());
  SmallVector<int64_t> perm{0, 2, 1};
  for (size_t d = 0; d < rank; ++d)
    perm.push_back(3 + d);
  SmallVector<int64_t> kShape{g * perGroupOut, perGroupIn};
  kShape.append(wShape.begin() + 2, wShape.end());
  Value k = n.reshape(n.transpose(n.reshape(w, grouped), perm), kShape);
  for (size_t d = 0; d < rank; ++d) {
    Constant reversed = Constant::empty(n.i64(), {wShape[2 + d]});
    for (int64_t i = wShape[2 + d] - 1; i >= 0; --i)
      reversed.pushInt(i);
    k = n.create<GatherOp>({k, n.constant(reversed)},
                           {n.i64("axis", static_cast<int64_t>(2 + d))});
  }
  Window win;
  win.begin.assign({std::max<int64_t>(0, lo[0])});
  win.end.assign({std::max<int64_t>(0, hi[0])});
  if (rank == 2) {
    win.begin.push_back(std::max<int64_t>(0, lo[1]));
    win.end.push_back(std::max<int64_t>(0, hi[1]));
  }
  SmallVector<Value> operands{to2d(n, u, rank), to2d(n, k, rank)};
  if (n.hasInput(2))
    operands.push_back(n.input(2));
  Value y = n.create<Conv2dOp>(
      operands,
      {n.i64s("strides", {1, 1}), n.i64s("padding", pad2d(win)),
       n.i64s("dilations", pair2d(*dilations)), n.i64("groups", g)});
  return n.setOutput(0, from2d(n, y, rank));
}

template <typename OpTy>
static LogicalResult importPool(NodeImporter &n) {
  constexpr bool isMax = std::is_same_v<OpTy, MaxPool2dOp>;
  if (isMax && n.wantsOutput(1))
    return n.error() << "output 'Indices' is not supported";
  if (isMax) {
    auto order = n.intAttr("storage_order", 0);
    if (!order)
      return failure();
    if (*order)
      return n.unsupported("storage_order", "only row-major (0) is");
  }
  Value x = n.input(0);
  if (!x)
    return failure();
  auto xShape = shapeOf(x);
  if (xShape.size() < 3)
    return n.error() << "pooling needs X [N, C, spatial...]";
  size_t rank = xShape.size() - 2;
  if (!n.hasAttr("kernel_shape"))
    return n.error() << "attribute 'kernel_shape' is required";
  auto window = readWindow(n, ArrayRef<int64_t>(xShape).drop_front(2), {}, true);
  if (!window)
    return failure();
  SmallVector<NamedAttribute> attrs{n.i64s("kernel", pair2d(window->kernel)),
                                    n.i64s("strides", pair2d(window->strides)),
                                    n.i64s("padding", pad2d(*window))};
  if constexpr (!isMax) {
    auto include = n.intAttr("count_include_pad", 0);
    auto ceilMode = n.intAttr("ceil_mode", 0);
    if (!include || !ceilMode)
      return failure();
    if (*include && *ceilMode)
      return n.unsupported("ceil_mode",
                           "with count_include_pad=1, the overhanging windows "
                           "would count padding dlc cannot tell apart");
    attrs.push_back(n.named("count_include_pad", n.b.getBoolAttr(*include)));
  }
  // 8-bit integers pool exactly in f32 (the maximum picks an element).
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  bool narrow = isMax && element.isInteger(8);
  if (narrow)
    x = n.cast(x, n.b.getF32Type());
  Value y = n.create<OpTy>({to2d(n, x, rank)}, attrs);
  y = from2d(n, y, rank);
  return n.setOutput(0, narrow ? n.cast(y, element) : y);
}

template <typename OpTy>
static LogicalResult importGlobalPool(NodeImporter &n) {
  Value x = n.input(0);
  if (!x)
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < static_cast<int64_t>(shapeOf(x).size()); ++d)
    axes.push_back(d);
  return n.setOutput(0, n.create<OpTy>({x}, {n.i64s("axes", axes),
                                             n.named("keepdims",
                                                     n.b.getBoolAttr(true))}));
}

void addConvolutionOps(OpTable &t) {
  t["Conv"] = {{"auto_pad", "dilations", "group", "kernel_shape", "pads",
                "strides"},
               importConv};
  t["ConvTranspose"] = {{"auto_pad", "dilations", "group", "kernel_shape",
                         "output_padding", "output_shape", "pads", "strides"},
                        importConvTranspose};
  t["MaxPool"] = {{"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads",
                   "storage_order", "strides"},
                  importPool<MaxPool2dOp>};
  // AveragePool's `dilations` (opset 19) are read, and refused unless 1.
  t["AveragePool"] = {{"auto_pad", "ceil_mode", "count_include_pad",
                       "dilations", "kernel_shape", "pads", "strides"},
                      importPool<AvgPool2dOp>};
  t["GlobalAveragePool"] = {{}, importGlobalPool<ReduceMeanOp>};
  t["GlobalMaxPool"] = {{}, importGlobalPool<ReduceMaxOp>};
}

} // namespace dlc::onnximport
