//===- Normalization.cpp - ONNX normalisation and softmax ops -------------===//
//
// BatchNormalization (inference) folds into one scale and one shift per
// channel, element-wise ops on its constant inputs. LayerNormalization maps
// to `dlc.layer_norm` (composed when its Mean/InvStdDev outputs are used);
// InstanceNormalization, GroupNormalization and MeanVarianceNormalization
// compose reductions.
// Softmax, LogSoftmax and Hardmax before opset 13 flatten to 2-D at `axis`.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

using namespace mlir;

namespace dlc::onnximport {

static Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// [C] -> [C, 1, ..., 1] to broadcast over the dimensions after the
/// channel of a tensor of rank `rank`.
static Value perChannel(NodeImporter &n, Value v, int64_t rank) {
  if (!v)
    return {};
  SmallVector<int64_t> shape{shapeOf(v)[0]};
  shape.append(rank - 2, 1);
  return n.reshape(v, shape);
}

/// Each of `vs` must be [C], C being X's dimension 1 (X of rank >= 2):
/// perChannel reads the first dimension (a scale of rank 0 made
/// InstanceNormalization read past its shape; found by the onnx fuzz target).
static LogicalResult
expectPerChannel(NodeImporter &n, Value x,
                 std::initializer_list<std::pair<const char *, Value>> vs) {
  int64_t channels = shapeOf(x)[1];
  for (auto [name, v] : vs) {
    auto shape = shapeOf(v);
    if (shape.size() == 1 && shape[0] == channels)
      continue;
    std::string got = "[";
    for (auto [k, d] : llvm::enumerate(shape))
      got += (k ? ", " : "") + std::to_string(d);
    return n.error() << name << " must be [" << channels
                     << "] (one value per channel of X), got " << got << "]";
  }
  return success();
}

static LogicalResult importBatchNorm(NodeImporter &n) {
  auto epsilon = n.floatAttr("epsilon", 1e-5);
  auto spatial = n.intAttr("spatial", 1);
  auto training = n.intAttr("training_mode", 0);
  if (!epsilon || !spatial || !training)
    return failure();
  if (!*spatial)
    return n.unsupported("spatial", "only spatial=1 is");
  if (!*training)
    for (size_t i = 1; i < n.numOutputs(); ++i)
      if (n.wantsOutput(i))
        return n.error() << "output " << i
                         << " (running statistics) exists only in training mode";
  Value x = n.input(0);
  Value scale = n.input(1), bias = n.input(2), mean = n.input(3),
        var = n.input(4);
  if (!x || !scale || !bias || !mean || !var)
    return failure();
  int64_t rank = shapeOf(x).size();
  if (rank < 2)
    return n.error() << "X needs rank at least 2";
  if (failed(expectPerChannel(n, x, {{"scale", scale}, {"B", bias},
                                     {"input_mean", mean}, {"input_var", var}})))
    return failure();
  if (*training) {
    // Training mode (opset 14): normalise with the batch's statistics
    // (biased variance) and output the running ones, updated by momentum.
    auto momentum = n.floatAttr("momentum", 0.9);
    if (!momentum)
      return failure();
    SmallVector<int64_t> axes{0};
    for (int64_t d = 2; d < rank; ++d)
      axes.push_back(d);
    Value batchMean = n.create<ReduceMeanOp>({x}, {n.i64s("axes", axes)});
    Value centred = n.create<SubOp>({x, perChannel(n, batchMean, rank)});
    Value batchVar = n.create<ReduceMeanOp>(
        {n.create<MulOp>({centred, centred})}, {n.i64s("axes", axes)});
    Value eps = n.scalar(*epsilon, elementOf(x));
    Value s = n.create<MulOp>(
        {scale, n.create<RsqrtOp>({n.create<AddOp>({batchVar, eps})})});
    Value y = n.create<AddOp>({n.create<MulOp>({centred, perChannel(n, s, rank)}),
                               perChannel(n, bias, rank)});
    auto running = [&](Value old, Value now) {
      Type t = elementOf(old);
      return n.create<AddOp>(
          {n.create<MulOp>({old, n.scalar(*momentum, t)}),
           n.create<MulOp>({n.cast(now, t), n.scalar(1 - *momentum, t)})});
    };
    if (failed(n.setOutput(0, y)))
      return failure();
    if (n.wantsOutput(1) && failed(n.setOutput(1, running(mean, batchMean))))
      return failure();
    if (n.wantsOutput(2) && failed(n.setOutput(2, running(var, batchVar))))
      return failure();
    return success();
  }
  // s = scale / sqrt(var + eps); t = bias - mean * s; y = x * s + t.
  Value eps = n.scalar(*epsilon, elementOf(var));
  Value s = n.create<MulOp>({scale, n.create<RsqrtOp>({n.create<AddOp>({var, eps})})});
  Value t = n.create<SubOp>({bias, n.create<MulOp>({mean, s})});
  Value y = n.create<AddOp>({n.create<MulOp>({x, perChannel(n, s, rank)}),
                             perChannel(n, t, rank)});
  return n.setOutput(0, y);
}

static LogicalResult importLayerNorm(NodeImporter &n) {
  auto axisAttr = n.intAttr("axis", -1);
  auto epsilon = n.floatAttr("epsilon", 1e-5);
  auto stash = n.intAttr("stash_type", 1);
  Value x = n.input(0), scale = n.input(1);
  if (!axisAttr || !epsilon || !stash || !x || !scale)
    return failure();
  auto shape = shapeOf(x);
  int64_t rank = shape.size();
  auto axis = normalizeAxisOrError(n, *axisAttr, rank);
  if (!axis)
    return failure();
  SmallVector<int64_t> normShape(shape.begin() + *axis, shape.end());
  scale = n.broadcastTo(scale, normShape);
  Value bias = n.hasInput(2) ? n.broadcastTo(n.input(2), normShape) : Value();
  if (!n.wantsOutput(1) && !n.wantsOutput(2)) {
    SmallVector<Value> operands{x, scale};
    if (bias)
      operands.push_back(bias);
    return n.setOutput(
        0, n.create<LayerNormOp>(operands,
                                 {n.i64("axis", *axis),
                                  n.named("epsilon",
                                          n.b.getF64FloatAttr(*epsilon))}));
  }
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d)
    axes.push_back(d);
  auto reduceMean = [&](Value v) {
    return n.create<ReduceMeanOp>(
        {v}, {n.i64s("axes", axes), n.named("keepdims", n.b.getBoolAttr(true))});
  };
  Value mean = reduceMean(x);
  Value centered = n.create<SubOp>({x, mean});
  Value var = reduceMean(n.create<MulOp>({centered, centered}));
  Value inv = n.create<RsqrtOp>(
      {n.create<AddOp>({var, n.scalar(*epsilon, elementOf(x))})});
  Value y = n.create<MulOp>({n.create<MulOp>({centered, inv}), scale});
  if (bias)
    y = n.create<AddOp>({y, bias});
  if (failed(n.setOutput(0, y)))
    return failure();
  if (n.wantsOutput(1) && failed(n.setOutput(1, mean)))
    return failure();
  if (n.wantsOutput(2) && failed(n.setOutput(2, inv)))
    return failure();
  return success();
}

/// (x - mean) / sqrt(var + epsilon) over `axes`, both kept as size 1.
static Value normalize(NodeImporter &n, Value x, ArrayRef<int64_t> axes,
                       double epsilon) {
  auto reduceMean = [&](Value v) {
    return n.create<ReduceMeanOp>(
        {v}, {n.i64s("axes", axes), n.named("keepdims", n.b.getBoolAttr(true))});
  };
  Value centered = n.create<SubOp>({x, reduceMean(x)});
  Value var = reduceMean(n.create<MulOp>({centered, centered}));
  return n.create<MulOp>(
      {centered, n.create<RsqrtOp>(
                     {n.create<AddOp>({var, n.scalar(epsilon, elementOf(x))})})});
}

static LogicalResult importInstanceNorm(NodeImporter &n) {
  auto epsilon = n.floatAttr("epsilon", 1e-5);
  Value x = n.input(0), scale = n.input(1), bias = n.input(2);
  if (!epsilon || !x || !scale || !bias)
    return failure();
  int64_t rank = shapeOf(x).size();
  if (rank < 2)
    return n.error() << "input needs rank at least 2";
  if (failed(expectPerChannel(n, x, {{"scale", scale}, {"B", bias}})))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  Value y = normalize(n, x, axes, *epsilon);
  y = n.create<AddOp>({n.create<MulOp>({y, perChannel(n, scale, rank)}),
                       perChannel(n, bias, rank)});
  return n.setOutput(0, y);
}

static LogicalResult importMeanVarianceNorm(NodeImporter &n) {
  auto axes = n.intsAttr("axes", {0, 2, 3});
  Value x = n.input(0);
  if (!axes || !x)
    return failure();
  for (int64_t &a : *axes) {
    auto axis = normalizeAxisOrError(n, a, shapeOf(x).size());
    if (!axis)
      return failure();
    a = *axis;
  }
  return n.setOutput(0, normalize(n, x, *axes, 1e-9));
}

/// GroupNormalization: statistics over each group of C / num_groups
/// channels; `scale` and `bias` hold one value per group before opset 21
/// and one per channel from 21.
static LogicalResult importGroupNorm(NodeImporter &n) {
  auto epsilon = n.floatAttr("epsilon", 1e-5);
  auto groups = n.intAttr("num_groups", 0);
  auto stash = n.intAttr("stash_type", 1);
  Value x = n.input(0), scale = n.input(1), bias = n.input(2);
  if (!epsilon || !groups || !stash || !x || !scale || !bias)
    return failure();
  if (!n.hasAttr("num_groups"))
    return n.error() << "attribute 'num_groups' is required";
  auto shape = shapeOf(x);
  int64_t rank = shape.size();
  if (rank < 2)
    return n.error() << "X needs rank at least 2";
  int64_t channels = shape[1], g = *groups;
  if (g < 1 || channels % g)
    return n.error() << "num_groups " << g << " does not divide the "
                     << channels << " channels";
  int64_t perGroup = 1;
  for (int64_t d = 1; d < rank; ++d)
    perGroup *= shape[d];
  perGroup /= g;
  Value y = normalize(n, n.reshape(x, {shape[0], g, perGroup}), {2}, *epsilon);
  y = n.reshape(y, shape);
  auto perChannelValues = [&](Value v) -> Value {
    if (!v)
      return {};
    bool perGroupValues = n.opset() < 21;
    int64_t expected = perGroupValues ? g : channels;
    if (shapeOf(v) != SmallVector<int64_t>{expected}) {
      n.error() << "scale and bias need " << expected << " values, one per "
                << (perGroupValues ? "group" : "channel") << " (opset "
                << n.opset() << ")";
      return {};
    }
    if (perGroupValues && g != channels)
      v = n.reshape(n.broadcastTo(n.reshape(v, {g, 1}), {g, channels / g}),
                    {channels});
    return perChannel(n, v, rank);
  };
  y = n.create<AddOp>({n.create<MulOp>({y, perChannelValues(scale)}),
                       perChannelValues(bias)});
  return n.setOutput(0, y);
}

/// Softmax, LogSoftmax, Hardmax: before opset 13 the input is seen as 2-D
/// [prod(shape[:axis]), prod(shape[axis:])] and the op runs on its rows.
static LogicalResult importSoftmaxFamily(NodeImporter &n) {
  bool legacy = n.opset() < 13;
  auto axisAttr = n.intAttr("axis", legacy ? 1 : -1);
  Value x = n.input(0);
  if (!axisAttr || !x)
    return failure();
  auto shape = shapeOf(x);
  auto axis = normalizeAxisOrError(n, *axisAttr, shape.size());
  if (!axis)
    return failure();
  Value in = x;
  int64_t along = *axis;
  if (legacy) {
    int64_t rows = 1, cols = 1;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      (d < *axis ? rows : cols) *= shape[d];
    in = n.reshape(x, {rows, cols});
    along = 1;
  }
  Value y;
  if (n.opType() == "Softmax") {
    y = n.create<SoftmaxOp>({in}, {n.i64("axis", along)});
  } else if (n.opType() == "LogSoftmax") {
    y = n.create<LogSoftmaxOp>({in}, {n.i64("axis", along)});
  } else {
    // Hardmax: 1 at the first maximum along the axis, 0 elsewhere.
    auto inShape = shapeOf(in);
    auto keep = n.named("keepdims", n.b.getBoolAttr(true));
    Value m = n.create<ReduceMaxOp>({in}, {n.i64s("axes", {along}), keep});
    Value index = n.iota(inShape, along);
    Value first = n.create<ReduceMinOp>(
        {n.create<SelectOp>({n.compare(ComparePredicate::eq, in, m), index,
                             n.scalar(inShape[along], n.i64())})},
        {n.i64s("axes", {along}), keep});
    y = n.cast(n.compare(ComparePredicate::eq, index, first), elementOf(x));
  }
  return n.setOutput(0, n.reshape(y, shape));
}

/// LRN: x / (bias + alpha / size * (sum of x^2 over `size` channels
/// around))^beta, the window sum as `size` shifted slices of the squares
/// padded along the channels.
static LogicalResult importLrn(NodeImporter &n) {
  Value x = n.input(0);
  auto alpha = n.floatAttr("alpha", 1e-4), beta = n.floatAttr("beta", 0.75);
  auto bias = n.floatAttr("bias", 1.0);
  auto size = n.intAttr("size", 0);
  if (!x || !alpha || !beta || !bias || !size)
    return failure();
  if (!n.hasAttr("size") || *size < 1)
    return n.error() << "attribute 'size' (at least 1) is required";
  auto shape = shapeOf(x);
  int64_t rank = shape.size();
  if (rank < 3)
    return n.error() << "X needs rank at least 3 ([N, C, ...])";
  Type element = elementOf(x);
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  low[1] = (*size - 1) / 2;
  high[1] = *size - 1 - low[1];
  Value squares = n.create<PadOp>(
      {n.create<MulOp>({x, x})},
      {n.i64s("low", low), n.i64s("high", high),
       n.named("value", n.b.getF64FloatAttr(0))});
  Value sum;
  SmallVector<int64_t> starts(rank, 0), limits(shape), strides(rank, 1);
  for (int64_t i = 0; i < *size; ++i) {
    starts[1] = i;
    limits[1] = i + shape[1];
    Value part = n.create<SliceOp>({squares}, {n.i64s("starts", starts),
                                               n.i64s("limits", limits),
                                               n.i64s("strides", strides)});
    sum = sum ? n.create<AddOp>({sum, part}) : part;
  }
  Value denom = n.create<AddOp>(
      {n.scalar(*bias, element),
       n.create<MulOp>({sum, n.scalar(*alpha / *size, element)})});
  denom = n.create<PowOp>({denom, n.scalar(*beta, element)});
  return n.setOutput(0, n.create<DivOp>({x, denom}));
}

void addNormalizationOps(OpTable &t) {
  t["LRN"] = {{"alpha", "beta", "bias", "size"}, importLrn};
  t["BatchNormalization"] = {{"epsilon", "momentum", "spatial", "training_mode"},
                             importBatchNorm};
  t["LayerNormalization"] = {{"axis", "epsilon", "stash_type"}, importLayerNorm};
  t["InstanceNormalization"] = {{"epsilon"}, importInstanceNorm};
  t["GroupNormalization"] = {{"epsilon", "num_groups", "stash_type"},
                             importGroupNorm};
  t["MeanVarianceNormalization"] = {{"axes"}, importMeanVarianceNorm};
  t["Softmax"] = {{"axis"}, importSoftmaxFamily};
  t["LogSoftmax"] = {{"axis"}, importSoftmaxFamily};
  t["Hardmax"] = {{"axis"}, importSoftmaxFamily};
}

} // namespace dlc::onnximport
