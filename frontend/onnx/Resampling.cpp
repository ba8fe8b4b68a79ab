//===- Resampling.cpp - ONNX Resize and Upsample --------------------------===//
//
// Resizing is separable: each resized axis is one `dlc.gather` of the
// input's rows at the output positions' neighbours (a [out, taps] index
// table computed at import time), times a [out, taps] table of weights,
// summed over the taps. Nearest is a gather alone (one tap, exact for
// every element type). The tables follow ONNX's reference (onnx.reference
// Resize): coordinate transformation, nearest rounding, cubic and
// antialias weights, exclude_outside, and tf_crop_and_resize's
// extrapolation (a select against a constant mask). Sizes, scales and roi
// must be known at import time, as every shape. GridSample's positions are
// data: its taps are computed in the graph (floor, weights, border and
// reflection handling) and fetched with one dlc.gather each from the
// image flattened to rows of channels. RoiAlign samples its regions' bins
// the same way (a fixed sampling grid per bin) and averages (or maxes)
// the samples.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ShapeHelpers.h"

#include <cmath>

using namespace mlir;

namespace dlc::onnximport {

namespace {
/// What a Resize node asks for, per axis of the input.
struct ResizeSpec {
  std::string mode = "nearest", transform = "half_pixel",
              nearest = "round_prefer_floor";
  double cubicA = -0.75, extrapolation = 0;
  bool excludeOutside = false, antialias = false;
  /// Opset < 11 (Upsample, Resize-10): asymmetric, nearest rounds down when
  /// upsampling and up when downsampling, as ONNX Runtime does.
  bool legacyNearest = false;
  SmallVector<double> scales;
  SmallVector<int64_t> sizes;
  /// [start..., end...] per axis, for tf_crop_and_resize; empty otherwise.
  SmallVector<double> roi;
};

/// One resized axis: `taps` neighbours per output position, with weights.
struct AxisTable {
  int64_t out = 0, taps = 0;
  SmallVector<int64_t> indices;  // [out, taps], clamped to the input
  SmallVector<double> weights;   // [out, taps]
  SmallVector<bool> extrapolate; // [out], tf_crop_and_resize only
};
} // namespace

static SmallVector<double> cubicWeights(double ratio, double a) {
  auto r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
  return {((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a,
          ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
          ((a + 2) * q - (a + 3)) * q * q + 1,
          ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a};
}

static SmallVector<double> cubicAntialiasWeights(double ratio, double scale,
                                                 double a) {
  scale = std::min(scale, 1.0);
  auto coeff = [&](double x) {
    x = std::abs(x);
    double x2 = x * x, x3 = x * x2;
    if (x <= 1)
      return (a + 2) * x3 - (a + 3) * x2 + 1;
    if (x < 2)
      return a * x3 - 5 * a * x2 + 8 * a * x - 4 * a;
    return 0.0;
  };
  int64_t start = static_cast<int64_t>(std::floor(-2 / scale) + 1);
  SmallVector<double> w;
  double sum = 0;
  for (int64_t i = start; i < 2 - start; ++i) {
    w.push_back(coeff(scale * (i - ratio)));
    sum += w.back();
  }
  for (double &v : w)
    v /= sum;
  return w;
}

static SmallVector<double> linearAntialiasWeights(double ratio, double scale) {
  scale = std::min(scale, 1.0);
  int64_t start = static_cast<int64_t>(std::floor(-1 / scale) + 1);
  int64_t footprint = 2 - 2 * start;
  SmallVector<double> w;
  double sum = 0;
  for (int64_t i = start; i < start + footprint; ++i) {
    w.push_back(std::clamp(1 - std::abs((i - ratio) * scale), 0.0, 1.0));
    sum += w.back();
  }
  for (double &v : w)
    v /= sum;
  return w;
}

/// The source coordinate of output position `y` along an axis of `in`
/// elements resized to `outInt` with `scale`; nullopt for an unknown mode.
static std::optional<double> sourceCoordinate(const ResizeSpec &s, double y,
                                              double scale, int64_t in,
                                              int64_t outInt, double roiStart,
                                              double roiEnd) {
  double out = scale * in;
  const std::string &t = s.transform;
  if (s.legacyNearest || t == "asymmetric")
    return y / scale;
  if (t == "half_pixel")
    return (y + 0.5) / scale - 0.5;
  if (t == "pytorch_half_pixel")
    return out == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
  if (t == "align_corners")
    return out == 1 ? 0.0 : y * (in - 1) / (out - 1);
  if (t == "tf_half_pixel_for_nn")
    return (y + 0.5) / scale;
  if (t == "half_pixel_symmetric") {
    double offset = in / 2.0 * (1 - outInt / out);
    return offset + (y + 0.5) / scale - 0.5;
  }
  if (t == "tf_crop_and_resize") {
    double x = out == 1 ? (roiEnd - roiStart) * (in - 1) / 2
                        : y * (roiEnd - roiStart) * (in - 1) / (out - 1);
    return x + roiStart * (in - 1);
  }
  return std::nullopt;
}

/// The gather indices and weights of one axis (ONNX's reference,
/// `_interpolate_1d_along_axis`).
static std::optional<AxisTable> axisTable(NodeImporter &n, const ResizeSpec &s,
                                          int64_t in, int64_t out, double scale,
                                          double roiStart, double roiEnd) {
  AxisTable t;
  t.out = out;
  for (int64_t y = 0; y < out; ++y) {
    auto x = sourceCoordinate(s, y, scale, in, out, roiStart, roiEnd);
    if (!x) {
      (void)n.unsupported("coordinate_transformation_mode",
                          "unknown value '" + s.transform + "'");
      return std::nullopt;
    }
    if (s.transform == "tf_crop_and_resize")
      t.extrapolate.push_back(*x < 0 || *x > in - 1);
    double floorX = std::floor(*x);
    bool integral = *x == floorX;
    double ratio = integral ? 1.0 : *x - floorX;
    if (s.mode == "nearest") {
      int64_t at = static_cast<int64_t>(floorX);
      if (s.legacyNearest)
        at = static_cast<int64_t>(scale < 1 ? std::ceil(*x) : floorX);
      else if (!integral) {
        const std::string &m = s.nearest;
        bool up = m == "round_prefer_floor" ? ratio > 0.5
                  : m == "round_prefer_ceil" ? ratio >= 0.5
                                             : m == "ceil";
        if (m != "round_prefer_floor" && m != "round_prefer_ceil" &&
            m != "floor" && m != "ceil") {
          (void)n.unsupported("nearest_mode", "unknown value '" + m + "'");
          return std::nullopt;
        }
        at += up;
      }
      t.taps = 1;
      t.indices.push_back(std::clamp<int64_t>(at, 0, in - 1));
      t.weights.push_back(1);
      continue;
    }
    SmallVector<double> w;
    if (s.mode == "linear")
      w = s.antialias ? linearAntialiasWeights(ratio, scale)
                      : SmallVector<double>{1 - ratio, ratio};
    else
      w = s.antialias ? cubicAntialiasWeights(ratio, scale, s.cubicA)
                      : cubicWeights(ratio, s.cubicA);
    int64_t taps = w.size();
    t.taps = taps;
    // The `taps` neighbours nearest to x, ties to the smaller index.
    int64_t pad = (taps + 1) / 2;
    double padded = *x + pad;
    double p = std::floor(padded), frac = padded - p;
    int64_t offset = taps % 2 == 0 ? (frac == 0 ? -(taps / 2) : -(taps / 2) + 1)
                                   : (frac <= 0.5 ? -((taps - 1) / 2)
                                                  : -((taps - 1) / 2) + 1);
    int64_t start = static_cast<int64_t>(p) + offset - pad;
    if (s.excludeOutside) {
      double sum = 0;
      for (int64_t k = 0; k < taps; ++k) {
        if (start + k < 0 || start + k >= in)
          w[k] = 0;
        sum += w[k];
      }
      for (double &v : w)
        v /= sum == 0 ? 1 : sum;
    }
    for (int64_t k = 0; k < taps; ++k) {
      t.indices.push_back(std::clamp<int64_t>(start + k, 0, in - 1));
      t.weights.push_back(w[k]);
    }
  }
  return t;
}

/// Resizes `x` along `axis` by the table.
static Value resizeAxis(NodeImporter &n, Value x, int64_t axis,
                        const AxisTable &t, double extrapolation) {
  auto shape = shapeOf(x);
  int64_t rank = shape.size();
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  Constant idx = Constant::empty(n.i64(), {t.out, t.taps});
  for (int64_t i : t.indices)
    idx.pushInt(i);
  if (t.taps == 1)
    idx.shape = {t.out};
  Value y = n.create<GatherOp>({x, n.constant(idx)}, {n.i64("axis", axis)});
  if (t.taps > 1) {
    SmallVector<int64_t> wShape(rank + 1, 1);
    wShape[axis] = t.out;
    wShape[axis + 1] = t.taps;
    Constant w = Constant::empty(element, {wShape.begin(), wShape.end()});
    for (double v : t.weights)
      w.push(v);
    y = n.create<MulOp>({y, n.constant(w)});
    y = n.create<ReduceSumOp>({y}, {n.i64s("axes", {axis + 1})});
  }
  if (llvm::is_contained(t.extrapolate, true)) {
    SmallVector<int64_t> mShape(rank, 1);
    mShape[axis] = t.out;
    Constant mask = Constant::empty(n.i1(), {mShape.begin(), mShape.end()});
    for (bool e : t.extrapolate)
      mask.pushInt(e);
    y = n.create<SelectOp>(
        {n.constant(mask), n.scalar(extrapolation, element), y});
  }
  return y;
}

/// Resizes `x` as `s` says, axis by axis.
static LogicalResult resize(NodeImporter &n, Value x, ResizeSpec &s,
                            SmallVector<int64_t> axes) {
  if (!x)
    return failure();
  auto shape = shapeOf(x);
  int64_t rank = shape.size();
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  if (s.mode != "nearest" && s.mode != "linear" && s.mode != "cubic")
    return n.unsupported("mode", "unknown value '" + s.mode + "'");
  if (s.mode != "nearest" && !isa<FloatType>(element))
    return n.error() << s.mode << " resizing of integer tensors is not "
                        "supported (nearest is)";
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  for (int64_t &a : axes) {
    auto axis = normalizeAxisOrError(n, a, rank, "an axis");
    if (!axis)
      return failure();
    a = *axis;
  }
  int64_t count = axes.size();
  if (!s.scales.empty() && static_cast<int64_t>(s.scales.size()) != count)
    return n.error() << "scales has " << s.scales.size() << " values for "
                     << count << " resized axes";
  if (!s.sizes.empty() && static_cast<int64_t>(s.sizes.size()) != count)
    return n.error() << "sizes has " << s.sizes.size() << " values for "
                     << count << " resized axes";
  if (s.scales.empty() == s.sizes.empty())
    return n.error() << "exactly one of scales and sizes must be given";
  if (!s.roi.empty() && static_cast<int64_t>(s.roi.size()) != 2 * count)
    return n.error() << "roi has " << s.roi.size() << " values for " << count
                     << " resized axes (2 per axis)";
  auto policy = n.stringAttr("keep_aspect_ratio_policy", "stretch");
  if (!policy)
    return failure();
  SmallVector<double> scales(count);
  SmallVector<int64_t> sizes(count);
  if (!s.sizes.empty()) {
    for (int64_t i = 0; i < count; ++i)
      scales[i] = double(s.sizes[i]) / shape[axes[i]];
    if (*policy != "stretch") {
      if (*policy != "not_larger" && *policy != "not_smaller")
        return n.unsupported("keep_aspect_ratio_policy",
                             "unknown value '" + *policy + "'");
      double scale = *policy == "not_larger"
                         ? *std::min_element(scales.begin(), scales.end())
                         : *std::max_element(scales.begin(), scales.end());
      for (int64_t i = 0; i < count; ++i) {
        scales[i] = scale;
        s.sizes[i] = static_cast<int64_t>(scale * shape[axes[i]] + 0.5);
      }
    }
    sizes.assign(s.sizes.begin(), s.sizes.end());
  } else {
    for (int64_t i = 0; i < count; ++i) {
      if (!(s.scales[i] > 0))
        return n.error() << "scales must be positive (got " << s.scales[i]
                         << ")";
      scales[i] = s.scales[i];
      sizes[i] = static_cast<int64_t>(s.scales[i] * shape[axes[i]]);
    }
  }
  Value y = x;
  for (int64_t i = 0; i < count; ++i) {
    int64_t axis = axes[i], in = shape[axis];
    if (sizes[i] <= 0)
      return n.error() << "the output size along axis " << axis << " is "
                       << sizes[i] << "; it must be at least 1";
    double roiStart = s.roi.empty() ? 0 : s.roi[i];
    double roiEnd = s.roi.empty() ? 1 : s.roi[count + i];
    if (s.transform == "tf_crop_and_resize" && s.roi.empty())
      return n.error() << "tf_crop_and_resize needs the roi input";
    bool identity = std::abs(scales[i] - 1) < 1e-9 && sizes[i] == in &&
                    (s.transform != "tf_crop_and_resize" ||
                     (roiStart == 0 && roiEnd == 1));
    if (identity)
      continue;
    auto table = axisTable(n, s, in, sizes[i], scales[i], roiStart, roiEnd);
    if (!table)
      return failure();
    y = resizeAxis(n, y, axis, *table, s.extrapolation);
  }
  return n.setOutput(0, y);
}

/// The doubles of a float input known at import time.
static std::optional<SmallVector<double>> floatsInput(NodeImporter &n, size_t i,
                                                      StringRef what) {
  auto c = n.constantInput(i, what);
  if (!c)
    return std::nullopt;
  SmallVector<double> values;
  for (int64_t k = 0; k < c->numel(); ++k)
    values.push_back(c->get(k));
  return values;
}

/// Whether input `i` is given with at least one element.
static bool nonEmptyInput(NodeImporter &n, size_t i) {
  if (!n.hasInput(i))
    return false;
  RankedTensorType type = n.inputType(i);
  return type && type.getNumElements() != 0;
}

/// Resize-10 and Upsample: asymmetric coordinates, and their own nearest
/// rounding.
static LogicalResult legacyResize(NodeImporter &n, ResizeSpec &s) {
  s.transform = "asymmetric";
  s.legacyNearest = s.mode == "nearest";
  return resize(n, n.input(0), s, {});
}

static LogicalResult importResize(NodeImporter &n) {
  ResizeSpec s;
  auto mode = n.stringAttr("mode", "nearest");
  if (!mode)
    return failure();
  s.mode = *mode;
  if (n.opset() < 11) {
    // Resize-10: X, scales; asymmetric coordinates.
    auto scales = floatsInput(n, 1, "scales");
    if (!scales)
      return failure();
    s.scales = *scales;
    return legacyResize(n, s);
  }
  auto transform = n.stringAttr("coordinate_transformation_mode", "half_pixel");
  auto nearest = n.stringAttr("nearest_mode", "round_prefer_floor");
  auto a = n.floatAttr("cubic_coeff_a", -0.75);
  auto exclude = n.intAttr("exclude_outside", 0);
  auto extrapolation = n.floatAttr("extrapolation_value", 0);
  auto antialias = n.intAttr("antialias", 0);
  auto axes = n.intsAttr("axes");
  if (!transform || !nearest || !a || !exclude || !extrapolation ||
      !antialias || !axes)
    return failure();
  s.transform = *transform;
  s.nearest = *nearest;
  s.cubicA = *a;
  s.excludeOutside = *exclude != 0;
  s.extrapolation = *extrapolation;
  s.antialias = *antialias != 0 && s.mode != "nearest";
  if (s.transform == "tf_crop_and_resize" && nonEmptyInput(n, 1)) {
    auto roi = floatsInput(n, 1, "roi");
    if (!roi)
      return failure();
    s.roi = *roi;
  }
  if (nonEmptyInput(n, 2)) {
    auto scales = floatsInput(n, 2, "scales");
    if (!scales)
      return failure();
    s.scales = *scales;
  }
  if (nonEmptyInput(n, 3)) {
    auto sizes = n.intsInput(3, "sizes");
    if (!sizes)
      return failure();
    s.sizes = *sizes;
  }
  return resize(n, n.input(0), s, *axes);
}

static LogicalResult importUpsample(NodeImporter &n) {
  ResizeSpec s;
  auto mode = n.stringAttr("mode", "nearest");
  if (!mode)
    return failure();
  s.mode = *mode;
  if (s.mode == "bilinear")
    s.mode = "linear";
  if (s.mode == "cubic")
    return n.unsupported("mode", "Upsample is nearest or linear");
  if (n.opset() < 9) {
    if (!n.hasAttr("scales"))
      return n.error() << "attribute 'scales' is required";
    const ::onnx::AttributeProto *attr = n.attr("scales");
    for (float f : attr->floats())
      s.scales.push_back(f);
  } else {
    auto scales = floatsInput(n, 1, "scales");
    if (!scales)
      return failure();
    s.scales = *scales;
  }
  return legacyResize(n, s);
}

namespace {
/// Builds one 2-D GridSample.
struct GridSampler {
  NodeImporter &n;
  Value rows;          // X as [N * H * W, C]
  int64_t batch, channels, height, width;
  SmallVector<int64_t> outShape; // [N, Ho, Wo]
  std::string padding;
  bool alignCorners;
  Type element;

  Value scalar(double v) { return n.scalar(v, element); }
  Value add(Value a, Value b) { return n.create<AddOp>({a, b}); }
  Value sub(Value a, Value b) { return n.create<SubOp>({a, b}); }
  Value mul(Value a, Value b) { return n.create<MulOp>({a, b}); }
  Value floor(Value a) { return n.create<FloorOp>({a}); }
  Value less(Value a, Value b) { return n.compare(ComparePredicate::lt, a, b); }
  Value pick(Value c, Value a, Value b) { return n.create<SelectOp>({c, a, b}); }

  /// `v` reflected into [lo, hi] by the near border, repeatedly.
  Value reflect(Value v, double lo, double hi) {
    double range = hi - lo;
    // dx past a border = times * range + r; an odd number of crossings
    // ends at the other border.
    auto fold = [&](Value dx) {
      Value times = floor(n.create<DivOp>({dx, scalar(range)}));
      Value r = sub(dx, mul(times, scalar(range)));
      Value odd = n.compare(
          ComparePredicate::ne,
          sub(times, mul(floor(n.create<DivOp>({times, scalar(2)})), scalar(2))),
          scalar(0));
      return std::make_pair(r, odd);
    };
    auto [rLow, oddLow] = fold(sub(scalar(lo), v));
    auto [rHigh, oddHigh] = fold(sub(v, scalar(hi)));
    Value low = pick(oddLow, sub(scalar(hi), rLow), add(scalar(lo), rLow));
    Value high = pick(oddHigh, add(scalar(lo), rHigh), sub(scalar(hi), rHigh));
    return pick(less(v, scalar(lo)), low,
                pick(n.compare(ComparePredicate::gt, v, scalar(hi)), high, v));
  }

  double lowBorder() { return alignCorners ? 0.0 : -0.5; }
  double highBorder(int64_t size) {
    return alignCorners ? size - 1.0 : size - 0.5;
  }

  /// A grid coordinate in pixels, out-of-border positions moved as the
  /// padding mode says.
  Value coordinate(Value g, int64_t size, bool nearest) {
    Value x = alignCorners
                  ? mul(add(g, scalar(1)), scalar((size - 1) / 2.0))
                  : n.create<DivOp>(
                        {sub(mul(add(g, scalar(1)), scalar(size)), scalar(1)),
                         scalar(2)});
    if (nearest)
      x = n.create<RoundOp>({x});
    double lo = lowBorder(), hi = highBorder(size);
    if (padding == "border") {
      Value outside = n.create<SelectOp>(
          {less(x, scalar(lo)), n.scalar(1, n.i1()),
           n.compare(ComparePredicate::gt, x, scalar(hi))});
      Value clamped =
          n.create<MinOp>({n.create<MaxOp>({x, scalar(0)}), scalar(size - 1)});
      x = pick(outside, clamped, x);
    } else if (padding == "reflection") {
      x = reflect(x, lo, hi);
    }
    return x;
  }

  /// X at integer pixel positions (iy, ix) ([N, Ho, Wo], as floats),
  /// [N, C, Ho, Wo]; positions outside the image as the padding mode says.
  Value fetch(Value iy, Value ix) {
    Value valid;
    auto inside = [&](Value i, int64_t size) {
      if (padding == "reflection") {
        // int(reflect(i)) as ONNX's reference: toward zero.
        Value r = reflect(i, lowBorder(), highBorder(size));
        return pick(less(r, scalar(0)), n.create<CeilOp>({r}), floor(r));
      }
      return i;
    };
    iy = inside(iy, height);
    ix = inside(ix, width);
    if (padding == "zeros") {
      auto within = [&](Value i, int64_t size) {
        return n.create<SelectOp>(
            {less(i, scalar(0)), n.scalar(0, n.i1()),
             less(i, scalar(size))});
      };
      valid = n.create<SelectOp>(
          {within(iy, height), within(ix, width), n.scalar(0, n.i1())});
    }
    auto clampTo = [&](Value i, int64_t size) {
      return n.cast(
          n.create<MinOp>({n.create<MaxOp>({i, scalar(0)}), scalar(size - 1)}),
          n.i64());
    };
    Value flat = add(mul(clampTo(iy, height), n.scalar(width, n.i64())),
                     clampTo(ix, width));
    flat = add(flat, mul(n.iota(outShape, 0),
                         n.scalar(height * width, n.i64())));
    // [N, Ho, Wo, C] -> [N, C, Ho, Wo].
    Value v = n.transpose(
        n.create<GatherOp>({rows, flat}, {n.i64("axis", 0)}), {0, 3, 1, 2});
    if (valid)
      v = pick(n.reshape(valid, {batch, 1, outShape[1], outShape[2]}), v,
               scalar(0));
    return v;
  }

  /// [N, 1, Ho, Wo] weights, broadcast over the channels.
  Value weight(Value w) { return n.reshape(w, {batch, 1, outShape[1], outShape[2]}); }
};
} // namespace

/// Keys' cubic convolution weights (a = -0.75) of taps -1, 0, 1, 2.
static SmallVector<Value> cubicTaps(GridSampler &g, Value t) {
  double a = -0.75;
  auto poly = [&](Value x, bool near) {
    // |x| <= 1: (a+2)x^3 - (a+3)x^2 + 1; 1 < |x| < 2: a x^3 - 5a x^2 + 8a x - 4a.
    Value x2 = g.mul(x, x), x3 = g.mul(x2, x);
    if (near)
      return g.add(g.sub(g.mul(x3, g.scalar(a + 2)), g.mul(x2, g.scalar(a + 3))),
                   g.scalar(1));
    return g.sub(g.add(g.sub(g.mul(x3, g.scalar(a)), g.mul(x2, g.scalar(5 * a))),
                       g.mul(x, g.scalar(8 * a))),
                 g.scalar(4 * a));
  };
  Value one = g.scalar(1), two = g.scalar(2);
  return {poly(g.add(t, one), false), poly(t, true), poly(g.sub(one, t), true),
          poly(g.sub(two, t), false)};
}

static LogicalResult importGridSample(NodeImporter &n) {
  Value x = n.input(0), grid = n.input(1);
  auto mode = n.stringAttr("mode", n.opset() >= 20 ? "linear" : "bilinear");
  auto padding = n.stringAttr("padding_mode", "zeros");
  auto align = n.intAttr("align_corners", 0);
  if (!x || !grid || !mode || !padding || !align)
    return failure();
  auto xShape = shapeOf(x), gShape = shapeOf(grid);
  if (xShape.size() != 4 || gShape.size() != 4 || gShape[3] != 2 ||
      gShape[0] != xShape[0])
    return n.error() << "dlc samples 2-D grids: X [N, C, H, W] and grid "
                        "[N, H_out, W_out, 2]";
  std::string m = *mode == "bilinear" ? "linear"
                  : *mode == "bicubic" ? "cubic"
                                       : *mode;
  if (m != "linear" && m != "nearest" && m != "cubic")
    return n.unsupported("mode", "unknown value '" + *mode + "'");
  if (*padding != "zeros" && *padding != "border" && *padding != "reflection")
    return n.unsupported("padding_mode", "unknown value '" + *padding + "'");
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  if (!isa<FloatType>(element))
    return n.error() << "X must be a float tensor";
  int64_t batch = xShape[0], channels = xShape[1];
  GridSampler g{n, {}, batch, channels, xShape[2], xShape[3],
                {batch, gShape[1], gShape[2]}, *padding, *align != 0, element};
  g.rows = n.reshape(n.transpose(x, {0, 2, 3, 1}),
                     {batch * xShape[2] * xShape[3], channels});
  auto component = [&](int64_t c) {
    return n.cast(n.reshape(slice(n, grid, {0, 0, 0, c},
                                  {batch, gShape[1], gShape[2], c + 1},
                                  {1, 1, 1, 1}),
                            g.outShape),
                  element);
  };
  bool nearest = m == "nearest";
  Value px = g.coordinate(component(0), g.width, nearest);
  Value py = g.coordinate(component(1), g.height, nearest);
  if (nearest)
    return n.setOutput(0, g.fetch(py, px));
  Value x0 = g.floor(px), y0 = g.floor(py);
  Value tx = g.sub(px, x0), ty = g.sub(py, y0);
  SmallVector<Value> wx, wy;
  int64_t first = 0;
  if (m == "linear") {
    wx = {g.sub(g.scalar(1), tx), tx};
    wy = {g.sub(g.scalar(1), ty), ty};
  } else {
    wx = cubicTaps(g, tx);
    wy = cubicTaps(g, ty);
    first = -1;
  }
  Value sum;
  for (size_t a = 0; a < wy.size(); ++a)
    for (size_t b = 0; b < wx.size(); ++b) {
      Value v = g.fetch(g.add(y0, g.scalar(first + int64_t(a))),
                        g.add(x0, g.scalar(first + int64_t(b))));
      Value term = g.mul(v, g.weight(g.mul(wy[a], wx[b])));
      sum = sum ? g.add(sum, term) : term;
    }
  return n.setOutput(0, sum);
}

static LogicalResult importRoiAlign(NodeImporter &n) {
  Value x = n.input(0), rois = n.input(1), batchIndex = n.input(2);
  auto mode = n.stringAttr("mode", "avg");
  auto transform = n.stringAttr("coordinate_transformation_mode",
                                n.opset() >= 16 ? "half_pixel"
                                                : "output_half_pixel");
  auto outH = n.intAttr("output_height", 1), outW = n.intAttr("output_width", 1);
  auto ratio = n.intAttr("sampling_ratio", 0);
  auto scaleAttr = n.floatAttr("spatial_scale", 1.0);
  if (!x || !rois || !batchIndex || !mode || !transform || !outH || !outW ||
      !ratio || !scaleAttr)
    return failure();
  if (*mode != "avg" && *mode != "max")
    return n.unsupported("mode", "unknown value '" + *mode + "'");
  if (*transform != "half_pixel" && *transform != "output_half_pixel")
    return n.unsupported("coordinate_transformation_mode",
                         "unknown value '" + *transform + "'");
  if (*ratio <= 0)
    return n.unsupported("sampling_ratio",
                         "the adaptive grid (0) has a sample count that "
                         "depends on each region's size; give a positive one");
  auto xShape = shapeOf(x), rShape = shapeOf(rois);
  if (xShape.size() != 4 || rShape.size() != 2 || rShape[1] != 4)
    return n.error() << "RoiAlign needs X [N, C, H, W] and rois [R, 4]";
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  int64_t count = rShape[0], channels = xShape[1], height = xShape[2],
          width = xShape[3], grid = *ratio, ph = *outH, pw = *outW;
  bool halfPixel = *transform == "half_pixel";
  auto scalar = [&](double v) { return n.scalar(v, element); };
  auto add = [&](Value a, Value b) { return n.create<AddOp>({a, b}); };
  auto sub = [&](Value a, Value b) { return n.create<SubOp>({a, b}); };
  auto mul = [&](Value a, Value b) { return n.create<MulOp>({a, b}); };
  auto column = [&](int64_t c) {
    return n.reshape(slice(n, n.cast(rois, element), {0, c}, {count, c + 1},
                           {1, 1}),
                     {count, 1});
  };
  // Per region and axis: the sample positions [R, bins * grid] and whether
  // they are in the image (ONNX's reference drops samples beyond -1 or the
  // size), clamped and split into a low index and its weight.
  struct Axis {
    Value low, high, wLow, wHigh, valid;
  };
  auto axis = [&](int64_t startCol, int64_t endCol, int64_t bins,
                  int64_t size) {
    double offset = halfPixel ? 0.5 : 0.0;
    Value start = sub(mul(column(startCol), scalar(*scaleAttr)), scalar(offset));
    Value end = sub(mul(column(endCol), scalar(*scaleAttr)), scalar(offset));
    Value extent = sub(end, start);
    if (!halfPixel)
      extent = n.create<MaxOp>({extent, scalar(1)});
    Value bin = n.create<DivOp>({extent, scalar(bins)});
    Constant steps = Constant::empty(element, {1, bins * grid});
    for (int64_t b = 0; b < bins; ++b)
      for (int64_t i = 0; i < grid; ++i)
        steps.push(b + (i + 0.5) / grid);
    Value pos = add(start, mul(bin, n.constant(steps)));
    Axis a;
    a.valid = n.create<SelectOp>(
        {n.compare(ComparePredicate::lt, pos, scalar(-1)), n.scalar(0, n.i1()),
         n.compare(ComparePredicate::le, pos, scalar(size))});
    pos = n.create<MaxOp>({pos, scalar(0)});
    Value low = n.create<FloorOp>({pos});
    Value atEdge = n.compare(ComparePredicate::ge, low, scalar(size - 1));
    low = n.create<SelectOp>({atEdge, scalar(size - 1), low});
    pos = n.create<SelectOp>({atEdge, low, pos});
    Value high = n.create<SelectOp>({atEdge, low, add(low, scalar(1))});
    a.wHigh = sub(pos, low);
    a.wLow = sub(scalar(1), a.wHigh);
    a.low = n.cast(low, n.i64());
    a.high = n.cast(high, n.i64());
    return a;
  };
  Axis ys = axis(1, 3, ph, height), xs = axis(0, 2, pw, width);
  int64_t sy = ph * grid, sx = pw * grid;
  auto asRows = [&](Value v) { return n.reshape(v, {count, sy, 1}); };
  auto asCols = [&](Value v) { return n.reshape(v, {count, 1, sx}); };
  Value valid = n.create<SelectOp>({asRows(ys.valid), asCols(xs.valid),
                                    n.scalar(0, n.i1())});
  // X as rows [N * H * W, C]; each corner one gather of [R, sy, sx] rows.
  Value table = n.reshape(n.transpose(x, {0, 2, 3, 1}),
                          {xShape[0] * height * width, channels});
  Value base = n.reshape(
      n.create<MulOp>({n.cast(batchIndex, n.i64()),
                       n.scalar(height * width, n.i64())}),
      {count, 1, 1});
  SmallVector<Value> corners;
  for (auto [yi, wy] : {std::pair{ys.low, ys.wLow}, std::pair{ys.high, ys.wHigh}})
    for (auto [xi, wx] :
         {std::pair{xs.low, xs.wLow}, std::pair{xs.high, xs.wHigh}}) {
      Value flat = add(add(base, mul(asRows(yi), n.scalar(width, n.i64()))),
                       asCols(xi));
      Value v = n.create<GatherOp>({table, flat}, {n.i64("axis", 0)});
      Value w = n.create<SelectOp>({valid, mul(asRows(wy), asCols(wx)),
                                    scalar(0)});
      corners.push_back(
          mul(v, n.reshape(w, {count, sy, sx, 1})));
    }
  Value y;
  SmallVector<int64_t> binned{count, ph, grid, pw, grid, channels};
  if (*mode == "avg") {
    Value sum = add(add(corners[0], corners[1]), add(corners[2], corners[3]));
    y = n.create<ReduceSumOp>({n.reshape(sum, binned)},
                              {n.i64s("axes", {2, 4})});
    y = n.create<DivOp>({y, scalar(grid * grid)});
  } else {
    Value most = n.create<MaxOp>({n.create<MaxOp>({corners[0], corners[1]}),
                                  n.create<MaxOp>({corners[2], corners[3]})});
    y = n.create<ReduceMaxOp>({n.reshape(most, binned)},
                              {n.i64s("axes", {2, 4})});
  }
  return n.setOutput(0, n.transpose(y, {0, 3, 1, 2}));
}

void addResamplingOps(OpTable &t) {
  t["RoiAlign"] = {{"coordinate_transformation_mode", "mode", "output_height",
                    "output_width", "sampling_ratio", "spatial_scale"},
                   importRoiAlign};
  t["GridSample"] = {{"align_corners", "mode", "padding_mode"}, importGridSample};
  t["Resize"] = {{"antialias", "axes", "coordinate_transformation_mode",
                  "cubic_coeff_a", "exclude_outside", "extrapolation_value",
                  "keep_aspect_ratio_policy", "mode", "nearest_mode"},
                 importResize};
  t["Upsample"] = {{"mode", "scales"}, importUpsample};
}

} // namespace dlc::onnximport
