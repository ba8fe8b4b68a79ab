//===- ConvolutionPooling.cpp - ONNX Conv and pooling ---------------------===//
//
// 2-D Conv, MaxPool and AveragePool map to `dlc.conv2d` and the pooling
// ops; 1-D ones become 2-D with a unit height. `auto_pad` and `ceil_mode`
// turn into explicit padding. Global pooling is a reduction over the
// spatial dimensions. ConvTranspose is the convolution its gradient is: the
// input with stride-1 zeros between its elements, padded, convolved with
// the kernel flipped and its channel axes swapped. 3-D convolution is a sum
// over the kernel's depth of 2-D convolutions of depth slices (the output
// depth folded into the batch); 3-D and dilated pooling take the maximum
// (or the mean) of the window's strided slices of the padded input, one
// dimension at a time.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ShapeHelpers.h"
#include "ir/ShapeUtils.h"

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
  for (size_t d = 0; d < rank; ++d) {
    const char *bad = (*kernel)[d] < 1      ? "kernel_shape"
                      : (*strides)[d] < 1   ? "strides"
                      : (*dilations)[d] < 1 ? "dilations"
                      : (*pads)[d] < 0 || (*pads)[d + rank] < 0 ? "pads"
                                                                : nullptr;
    if (bad) {
      n.error() << "attribute '" << bad << "' needs values of at least "
                << (StringRef(bad) == "pads" ? 0 : 1);
      return std::nullopt;
    }
    // The window's extent and the padded size, computed without wrapping
    // past 2^63 (a huge dilation or padding would give a negative or a
    // small size).
    int64_t extent, padded;
    if (__builtin_mul_overflow((*kernel)[d] - 1, (*dilations)[d], &extent) ||
        __builtin_add_overflow(extent, 1, &extent) ||
        __builtin_add_overflow(spatial[d], (*pads)[d], &padded) ||
        __builtin_add_overflow(padded, (*pads)[d + rank], &padded) ||
        padded > (int64_t(1) << 48) || extent > (int64_t(1) << 48)) {
      n.error() << "the window (kernel_shape " << (*kernel)[d] << ", dilation "
                << (*dilations)[d] << ") or the padded input (" << spatial[d]
                << " + " << (*pads)[d] << " + " << (*pads)[d + rank]
                << ") of spatial dimension " << d << " is over 2^48";
      return std::nullopt;
    }
  }
  if (!weightKernel.empty() && n.hasAttr("kernel_shape") &&
      ArrayRef<int64_t>(*kernel) != weightKernel) {
    n.error() << "kernel_shape " << formatShape(*kernel)
              << " contradicts the weights' spatial shape "
              << formatShape(weightKernel);
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

/// A 3-D convolution as 2-D ones: for each kernel depth kd, the input's
/// depth slices that meet it ([N, OD, C, H, W] folded to [N * OD, C, H, W])
/// convolved with w[:, :, kd], summed over kd.
static Value conv3d(NodeImporter &n, Value x, Value w, Value bias,
                    const Window &win, int64_t groups) {
  auto xShape = shapeOf(x), wShape = shapeOf(w);
  int64_t batch = xShape[0], channels = xShape[1], kd = wShape[2];
  int64_t sd = win.strides[0], dd = win.dilations[0];
  if (win.begin[0] || win.end[0])
    x = n.create<PadOp>(
        {x}, {n.i64s("low", {0, 0, win.begin[0], 0, 0}),
              n.i64s("high", {0, 0, win.end[0], 0, 0}),
              n.named("value", n.b.getF64FloatAttr(0))});
  int64_t depth = xShape[2] + win.begin[0] + win.end[0];
  int64_t outDepth = (depth - dd * (kd - 1) - 1) / sd + 1;
  if (outDepth < 1) {
    n.error() << "the kernel's depth does not fit the padded input";
    return {};
  }
  Value sum;
  for (int64_t k = 0; k < kd; ++k) {
    Value part = slice(n, x, {0, 0, k * dd, 0, 0},
                       {batch, channels, k * dd + (outDepth - 1) * sd + 1,
                        xShape[3], xShape[4]},
                       {1, 1, sd, 1, 1});
    part = n.reshape(n.transpose(part, {0, 2, 1, 3, 4}),
                     {batch * outDepth, channels, xShape[3], xShape[4]});
    Value wk = n.reshape(
        slice(n, w, {0, 0, k, 0, 0},
              {wShape[0], wShape[1], k + 1, wShape[3], wShape[4]},
              {1, 1, 1, 1, 1}),
        {wShape[0], wShape[1], wShape[3], wShape[4]});
    SmallVector<Value> operands{part, wk};
    if (bias && k == 0)
      operands.push_back(bias);
    Value y = n.create<Conv2dOp>(
        operands,
        {n.i64s("strides", {win.strides[1], win.strides[2]}),
         n.i64s("padding", {win.begin[1], win.begin[2], win.end[1], win.end[2]}),
         n.i64s("dilations", {win.dilations[1], win.dilations[2]}),
         n.i64("groups", groups)});
    sum = sum ? n.create<AddOp>({sum, y}) : y;
  }
  if (!sum)
    return {};
  auto yShape = shapeOf(sum);
  Value y = n.reshape(sum, {batch, outDepth, yShape[1], yShape[2], yShape[3]});
  return n.transpose(y, {0, 2, 1, 3, 4});
}

/// Pooling of any window rank, dilations included: the maximum (or the
/// mean) over the window's offsets of strided slices of the padded input,
/// one dimension at a time (the window is a box: separable). With `indices`, also MaxPool's Indices: the flat input index of each
/// maximum (its first occurrence in window order), row- or column-major
/// within the spatial dimensions.
static Value poolBySlices(NodeImporter &n, Value x, const Window &w,
                          bool isMax, bool includePad,
                          Value *indices = nullptr, bool columnMajor = false) {
  auto shape = shapeOf(x);
  size_t rank = shape.size() - 2;
  SmallVector<int64_t> low{0, 0}, high{0, 0}, out;
  for (size_t d = 0; d < rank; ++d) {
    low.push_back(w.begin[d]);
    high.push_back(w.end[d]);
    int64_t padded = shape[2 + d] + w.begin[d] + w.end[d];
    int64_t extent = (w.kernel[d] - 1) * w.dilations[d] + 1;
    out.push_back((padded - extent) / w.strides[d] + 1);
    if (out.back() < 1) {
      n.error() << "the window does not fit the padded input";
      return {};
    }
  }
  Value padded = x;
  if (llvm::any_of(low, [](int64_t v) { return v; }) ||
      llvm::any_of(high, [](int64_t v) { return v; }))
    padded = n.create<PadOp>(
        {x}, {n.i64s("low", low), n.i64s("high", high),
              n.named("value", n.b.getF64FloatAttr(isMax ? -INFINITY : 0))});
  Value acc;
  if (!indices) {
    // Separable: the window's maximum (sum) is the maximum (sum) along
    // each dimension in turn, sum(kernel) slices instead of their product.
    Value stage = padded;
    for (size_t d = 0; d < rank; ++d) {
      SmallVector<int64_t> starts(rank + 2, 0), limits = shapeOf(stage),
                                               strides(rank + 2, 1);
      Value reduced;
      for (int64_t k = 0; k < w.kernel[d]; ++k) {
        starts[2 + d] = k * w.dilations[d];
        limits[2 + d] = starts[2 + d] + (out[d] - 1) * w.strides[d] + 1;
        strides[2 + d] = w.strides[d];
        Value part = slice(n, stage, starts, limits, strides);
        reduced = !reduced ? part
                  : isMax  ? n.create<MaxOp>({reduced, part})
                           : n.create<AddOp>({reduced, part});
      }
      stage = reduced;
    }
    acc = stage;
  }
  SmallVector<int64_t> offset(rank, 0);
  while (indices) {
    SmallVector<int64_t> starts{0, 0}, limits{shape[0], shape[1]},
        strides{1, 1};
    for (size_t d = 0; d < rank; ++d) {
      int64_t start = offset[d] * w.dilations[d];
      starts.push_back(start);
      limits.push_back(start + (out[d] - 1) * w.strides[d] + 1);
      strides.push_back(w.strides[d]);
    }
    Value part = slice(n, padded, starts, limits, strides);
    if (indices) {
      // Where this offset reads inside the input, the element's spatial
      // flat index (padding never wins: it is -inf).
      std::vector<int64_t> tableShape(rank + 2, 1);
      for (size_t d = 0; d < rank; ++d)
        tableShape[2 + d] = out[d];
      Constant table = Constant::empty(n.i64(), tableShape);
      SmallVector<int64_t> at(rank, 0);
      for (int64_t i = 0, total = product(out); i < total; ++i) {
        int64_t flat = 0, stride = 1;
        for (size_t k = 0; k < rank; ++k) {
          size_t d = columnMajor ? k : rank - 1 - k;
          int64_t pos = at[d] * w.strides[d] + offset[d] * w.dilations[d] -
                        w.begin[d];
          flat += std::clamp<int64_t>(pos, 0, shape[2 + d] - 1) * stride;
          stride *= shape[2 + d];
        }
        table.pushInt(flat);
        for (size_t d = rank; d-- > 0;) {
          if (++at[d] < out[d])
            break;
          at[d] = 0;
        }
      }
      Value where = n.constant(table);
      if (!acc) {
        *indices = n.broadcastTo(where, shapeOf(part));
      } else {
        Value better = n.compare(ComparePredicate::gt, part, acc);
        *indices = n.create<SelectOp>({better, where, *indices});
      }
    }
    acc = !acc ? part
          : isMax ? n.create<MaxOp>({acc, part})
                  : n.create<AddOp>({acc, part});
    size_t d = rank;
    while (d > 0 && ++offset[d - 1] == w.kernel[d - 1])
      offset[--d] = 0;
    if (d == 0)
      break;
  }
  if (indices && *indices) {
    // Plus the image's offset: (n * C + c) * spatial size.
    SmallVector<int64_t> oShape = shapeOf(acc);
    Value image = n.create<AddOp>(
        {n.create<MulOp>({n.iota(oShape, 0), n.scalar(shape[1], n.i64())}),
         n.iota(oShape, 1)});
    int64_t plane = product(ArrayRef<int64_t>(shape).drop_front(2));
    *indices = n.create<AddOp>(
        {*indices, n.create<MulOp>({image, n.scalar(plane, n.i64())})});
  }
  if (isMax || !acc)
    return acc;
  // The mean's divisor per output position: the window's elements inside
  // the input (or inside the padding too, with count_include_pad).
  std::vector<int64_t> countShape(rank + 2, 1);
  for (size_t d = 0; d < rank; ++d)
    countShape[2 + d] = out[d];
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  Constant count = Constant::empty(element, countShape);
  SmallVector<int64_t> at(rank, 0);
  for (int64_t i = 0, total = product(out); i < total; ++i) {
    double c = 1;
    for (size_t d = 0; d < rank; ++d) {
      int64_t inside = 0;
      for (int64_t k = 0; k < w.kernel[d]; ++k) {
        int64_t pos = at[d] * w.strides[d] + k * w.dilations[d] - w.begin[d];
        inside += includePad ? pos < shape[2 + d] + w.end[d]
                             : pos >= 0 && pos < shape[2 + d];
      }
      c *= inside;
    }
    count.push(c);
    for (size_t d = rank; d-- > 0;) {
      if (++at[d] < out[d])
        break;
      at[d] = 0;
    }
  }
  return n.create<DivOp>({acc, n.constant(count)});
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
  if (rank == 3)
    return n.setOutput(0, conv3d(n, x, w, n.hasInput(2) ? n.input(2) : Value(),
                                 *window, *group));
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
  if (rank > 3)
    return n.error() << rank << "-D windows are not supported (dlc has 1-D, "
                                "2-D and 3-D convolution)";
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
  for (size_t d = 0; d < rank; ++d) {
    win.begin.push_back(std::max<int64_t>(0, lo[d]));
    win.end.push_back(std::max<int64_t>(0, hi[d]));
  }
  if (rank == 3) {
    win.kernel = *kernel;
    win.strides.assign(3, 1);
    win.dilations = *dilations;
    return n.setOutput(0, conv3d(n, u, k, n.hasInput(2) ? n.input(2) : Value(),
                                 win, g));
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
  bool withIndices = isMax && n.wantsOutput(1);
  auto order = n.intAttr("storage_order", 0);
  if (!order)
    return failure();
  Value x = n.input(0);
  if (!x)
    return failure();
  auto xShape = shapeOf(x);
  if (xShape.size() < 3)
    return n.error() << "pooling needs X [N, C, spatial...]";
  // T is a float type (MaxPool-12 also takes int8/uint8); a boolean X made
  // the 3-D pooling's sums fail halfway and the importer went on with the
  // null value (found by the onnx fuzz target).
  Type xElement = cast<RankedTensorType>(x.getType()).getElementType();
  if (!isa<FloatType>(xElement) && !(isMax && xElement.isInteger(8)))
    return n.error() << "X has element type " << xElement << "; pooling takes float tensors"
                     << (isMax ? " (MaxPool also int8 and uint8)" : "");
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
  bool dilated = llvm::any_of(window->dilations, [](int64_t d) { return d != 1; });
  Value y, indices;
  if (rank > 2 || dilated || withIndices) {
    bool include = false;
    if constexpr (!isMax)
      include = llvm::cast<BoolAttr>(attrs.back().getValue()).getValue();
    y = poolBySlices(n, x, *window, isMax, include,
                     withIndices ? &indices : nullptr, *order != 0);
    if (withIndices && failed(n.setOutput(1, indices)))
      return failure();
  } else {
    y = from2d(n, n.create<OpTy>({to2d(n, x, rank)}, attrs), rank);
  }
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
