//===- Spectral.cpp - ONNX DFT, STFT and MelWeightMatrix ------------------===//
//
// A DFT over one axis is two matmuls of the real and imaginary parts with
// cos and sin tables of the transform length (computed at import time):
// O(n^2) per signal, exact to the accumulation order. STFT gathers its
// frames (an [frames, frame_length] index table), weights them by the
// window and takes their one-sided DFT. MelWeightMatrix is a constant.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ShapeHelpers.h"

#include <cmath>

using namespace mlir;

namespace dlc::onnximport {

/// The DFT along `axis` of `x` [..., n at axis, ..., 1 or 2] (real, or
/// real and imaginary in the last dimension), of length `length` (the
/// signal cut or zero-padded to it); `onesided` keeps bins 0..length/2.
static Value dft(NodeImporter &n, Value x, int64_t axis, int64_t length,
                 bool inverse, bool onesided) {
  if (!x)
    return {};
  auto shape = shapeOf(x);
  int64_t rank = shape.size();
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  // Real and imaginary parts with the signal axis last.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d + 1 < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  auto part = [&](int64_t c) {
    SmallVector<int64_t> starts(rank, 0), limits(shape), strides(rank, 1);
    starts[rank - 1] = c;
    limits[rank - 1] = c + 1;
    SmallVector<int64_t> squeezed(shape.begin(), shape.end() - 1);
    Value v = n.reshape(slice(n, x, starts, limits, strides), squeezed);
    v = n.transpose(v, perm);
    // Cut or pad the signal to the transform's length.
    auto vShape = shapeOf(v);
    int64_t last = vShape.size() - 1, size = vShape[last];
    if (size > length) {
      SmallVector<int64_t> s0(vShape.size(), 0), lim(vShape),
          st(vShape.size(), 1);
      lim[last] = length;
      v = slice(n, v, s0, lim, st);
    } else if (size < length) {
      SmallVector<int64_t> low(vShape.size(), 0), high(vShape.size(), 0);
      high[last] = length - size;
      v = n.create<PadOp>({v}, {n.i64s("low", low), n.i64s("high", high),
                                n.named("value", n.b.getF64FloatAttr(0))});
    }
    return v;
  };
  Value re = part(0), im = shape.back() == 2 ? part(1) : Value();
  int64_t bins = onesided ? length / 2 + 1 : length;
  Constant c = Constant::empty(element, {length, bins}), s = c;
  for (int64_t t = 0; t < length; ++t)
    for (int64_t k = 0; k < bins; ++k) {
      // t * k mod length keeps the angle small and the table exact.
      double angle = 2 * M_PI * double((t * k) % length) / double(length);
      c.push(std::cos(angle));
      s.push(std::sin(angle));
    }
  Value cv = n.constant(c), sv = n.constant(s);
  auto mm = [&](Value a, Value b) { return n.create<MatmulOp>({a, b}); };
  // e^{-i angle} forward, e^{+i angle} (over length) inverse.
  Value reSin = mm(re, sv);
  Value outRe = mm(re, cv), outIm = inverse ? reSin : n.create<NegOp>({reSin});
  if (im) {
    outRe = inverse ? n.create<SubOp>({outRe, mm(im, sv)})
                    : n.create<AddOp>({outRe, mm(im, sv)});
    outIm = n.create<AddOp>({outIm, mm(im, cv)});
  }
  if (inverse) {
    Value scale = n.scalar(1.0 / length, element);
    outRe = n.create<MulOp>({outRe, scale});
    outIm = n.create<MulOp>({outIm, scale});
  }
  // Back to [..., bins at axis, ..., 2].
  SmallVector<int64_t> inverseperm(rank - 1);
  for (int64_t d = 0; d + 1 < rank; ++d)
    inverseperm[perm[d]] = d;
  auto place = [&](Value v) {
    v = n.transpose(v, inverseperm);
    auto vs = shapeOf(v);
    vs.push_back(1);
    return n.reshape(v, vs);
  };
  return n.create<ConcatOp>({place(outRe), place(outIm)},
                            {n.i64("axis", rank - 1)});
}

static LogicalResult importDft(NodeImporter &n) {
  Value x = n.input(0);
  auto inverse = n.intAttr("inverse", 0), onesided = n.intAttr("onesided", 0);
  if (!x || !inverse || !onesided)
    return failure();
  // T1 is a float type; an integer signal made the transform's matmul fail
  // halfway, and the importer went on with the null value (found by the
  // onnx fuzz target).
  if (!isa<FloatType>(cast<RankedTensorType>(x.getType()).getElementType()))
    return n.error() << "input must be a float tensor";
  auto shape = shapeOf(x);
  int64_t rank = shape.size();
  if (rank < 2 || (shape.back() != 1 && shape.back() != 2))
    return n.error() << "input must be [..., signal, 1 or 2] (real, or real "
                        "and imaginary)";
  int64_t axisValue = 1;
  if (n.opset() >= 20) {
    if (n.hasInput(2)) {
      auto a = n.intsInput(2, "axis");
      if (!a)
        return failure();
      axisValue = (*a)[0];
    } else {
      axisValue = -2;
    }
  } else {
    auto a = n.intAttr("axis", 1);
    if (!a)
      return failure();
    axisValue = *a;
  }
  auto axis = normalizeAxisOrError(n, axisValue, rank);
  if (!axis)
    return failure();
  if (*axis == rank - 1)
    return n.error() << "axis must not be the last (real/imaginary) dimension";
  // Dimension 0 is the batch (the signal dimensions are 1 to rank - 2): a
  // [signal, 1] input with axis 0 made the transform's matmul fail halfway
  // (found by the onnx fuzz target).
  if (*axis == 0)
    return rank < 3 ? n.error() << "input must be [batch, signal..., 1 or 2]: the "
                                   "DFT's axis cannot be the batch dimension 0"
                    : n.error() << "axis must be a signal dimension (1 to " << rank - 2
                                << "), not the batch dimension 0";
  int64_t length = shape[*axis];
  if (n.hasInput(1)) {
    auto l = n.intsInput(1, "dft_length");
    if (!l)
      return failure();
    length = (*l)[0];
    if (length < 1)
      return n.error() << "dft_length must be at least 1";
  }
  if (*inverse && *onesided)
    return n.unsupported("onesided", "an inverse one-sided DFT is not");
  return n.setOutput(0, dft(n, x, *axis, length, *inverse, *onesided));
}

static LogicalResult importStft(NodeImporter &n) {
  Value x = n.input(0);
  auto onesided = n.intAttr("onesided", 1);
  auto step = n.intsInput(1, "frame_step");
  if (!x || !onesided || !step)
    return failure();
  if (!isa<FloatType>(cast<RankedTensorType>(x.getType()).getElementType()))
    return n.error() << "signal must be a float tensor";
  auto shape = shapeOf(x);
  if (shape.size() != 3 || (shape[2] != 1 && shape[2] != 2))
    return n.error() << "signal must be [batch, length, 1 or 2]";
  Value window = n.hasInput(2) ? n.input(2) : Value();
  int64_t frameLength = window ? shapeOf(window)[0] : shape[1];
  if (n.hasInput(3)) {
    auto l = n.intsInput(3, "frame_length");
    if (!l)
      return failure();
    frameLength = (*l)[0];
  }
  int64_t hop = (*step)[0], length = shape[1];
  if (hop < 1 || frameLength < 1 || frameLength > length)
    return n.error() << "frame_step must be at least 1 and frame_length in [1, "
                     << length << "]";
  int64_t frames = 1 + (length - frameLength) / hop;
  Constant at = Constant::empty(n.i64(), {frames, frameLength});
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t t = 0; t < frameLength; ++t)
      at.pushInt(f * hop + t);
  // [batch, frames, frame_length, 1|2], weighted by the window.
  Value framed = n.create<GatherOp>({x, n.constant(at)}, {n.i64("axis", 1)});
  if (window) {
    if (shapeOf(window) != SmallVector<int64_t>{frameLength})
      return n.error() << "window must have frame_length (" << frameLength
                       << ") elements";
    framed = n.create<MulOp>({framed, n.reshape(window, {1, 1, frameLength, 1})});
  }
  return n.setOutput(0, dft(n, framed, 2, frameLength, false, *onesided));
}

static LogicalResult importMelWeightMatrix(NodeImporter &n) {
  auto bins = n.constantInput(0, "num_mel_bins");
  auto dftLength = n.constantInput(1, "dft_length");
  auto rate = n.constantInput(2, "sample_rate");
  auto lower = n.constantInput(3, "lower_edge_hertz");
  auto upper = n.constantInput(4, "upper_edge_hertz");
  auto dtype = n.intAttr("output_datatype", ::onnx::TensorProto::FLOAT);
  if (!bins || !dftLength || !rate || !lower || !upper || !dtype)
    return failure();
  auto element = n.graph.requireElementType(
      *dtype, n.loc, "node '" + n.name + "' (MelWeightMatrix): the output");
  if (failed(element))
    return failure();
  int64_t mel = bins->getInt(0), length = dftLength->getInt(0);
  int64_t sampleRate = rate->getInt(0);
  if (mel < 1 || length < 1 || sampleRate < 1)
    return n.error() << "num_mel_bins, dft_length and sample_rate must be "
                        "positive";
  int64_t spectrogram = length / 2 + 1;
  // As ONNX's reference: mel-spaced edges, rounded down to DFT bins.
  auto toMel = [](double hz) { return 2595 * std::log1p(hz / 700) / std::log(10); };
  double low = toMel(lower->get(0)), high = toMel(upper->get(0));
  double step = (high - low) / (mel + 2);
  SmallVector<int64_t> edge;
  for (int64_t i = 0; i < mel + 2; ++i) {
    double hz = 700 * std::expm1((i * step + low) / 2595 * std::log(10));
    edge.push_back(static_cast<int64_t>(std::floor((length + 1) * hz / sampleRate)));
  }
  std::vector<double> w(spectrogram * mel, 0);
  auto set = [&](int64_t j, int64_t i, double v) {
    if (j >= 0 && j < spectrogram)
      w[j * mel + i] = v;
  };
  for (int64_t i = 0; i < mel; ++i) {
    int64_t left = edge[i], centre = edge[i + 1], right = edge[i + 2];
    if (centre == left)
      set(centre, i, 1);
    else
      for (int64_t j = left; j <= centre; ++j)
        set(j, i, double(j - left) / double(centre - left));
    if (right > centre)
      for (int64_t j = centre; j < right; ++j)
        set(j, i, double(right - j) / double(right - centre));
  }
  Constant out = Constant::empty(*element, {spectrogram, mel});
  for (double v : w)
    out.push(v);
  return n.setConstant(0, std::move(out));
}

void addSpectralOps(OpTable &t) {
  t["DFT"] = {{"axis", "inverse", "onesided"}, importDft};
  t["STFT"] = {{"onesided"}, importStft};
  t["MelWeightMatrix"] = {{"output_datatype"}, importMelWeightMatrix};
}

} // namespace dlc::onnximport
