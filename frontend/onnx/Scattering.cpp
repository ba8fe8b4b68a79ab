//===- Scattering.cpp - ONNX ScatterElements, Scatter, ScatterND, MaxUnpool ===//
//
// Ops that write elements at given indices, as one-hot selections (the
// same form as GatherElements, OpBuilders.cpp): a mask of which index hits
// which output element, the updates summed (multiplied, maxed) through it,
// and a select between the result and the data where something hit. The
// mask is [indices, outputs] along the scattered dimension, so these suit
// the index counts of shape and cache updates, not scatters of millions.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ShapeHelpers.h"

using namespace mlir;

namespace dlc::onnximport {

namespace {
/// How colliding updates combine (ONNX's `reduction`).
enum class Reduction { None, Add, Mul, Max, Min };
} // namespace

static std::optional<Reduction> readReduction(NodeImporter &n) {
  auto r = n.stringAttr("reduction", "none");
  if (!r)
    return std::nullopt;
  if (*r == "none")
    return Reduction::None;
  if (*r == "add")
    return Reduction::Add;
  if (*r == "mul")
    return Reduction::Mul;
  if (*r == "max")
    return Reduction::Max;
  if (*r == "min")
    return Reduction::Min;
  (void)n.unsupported("reduction", "unknown value '" + *r + "'");
  return std::nullopt;
}

static Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// `idx` (integers) with negative entries counted from `size`, as i64.
static Value wrapIndex(NodeImporter &n, Value idx, Value size) {
  idx = n.cast(idx, n.i64());
  Value negative = n.compare(ComparePredicate::lt, idx, n.scalar(0, n.i64()));
  return n.create<SelectOp>({negative, n.create<AddOp>({idx, size}), idx});
}

/// The updates `upd` (with a tap axis `tapAxis` that `hot` selects along)
/// combined by `r`: where `hot` is false they do not count.
static Value combineTaps(NodeImporter &n, Reduction r, Value hot, Value upd,
                         int64_t tapAxis) {
  Type element = elementOf(upd);
  auto selectOr = [&](double neutral) {
    return n.create<SelectOp>({hot, upd, n.scalar(neutral, element)});
  };
  SmallVector<NamedAttribute> attrs{n.i64s("axes", {tapAxis})};
  double lowest = isa<FloatType>(element) ? -INFINITY
                  : element.isInteger(64) ? double(INT64_MIN)
                                          : double(INT32_MIN);
  switch (r) {
  case Reduction::None:
  case Reduction::Add:
    return n.create<ReduceSumOp>({selectOr(0)}, attrs);
  case Reduction::Mul:
    return n.create<ReduceProdOp>({selectOr(1)}, attrs);
  case Reduction::Max:
    return n.create<ReduceMaxOp>({selectOr(lowest)}, attrs);
  case Reduction::Min:
    return n.create<ReduceMinOp>({selectOr(-lowest)}, attrs);
  }
  return {};
}

/// The data where `hit`, combined with what was scattered there.
static Value applyScatter(NodeImporter &n, Reduction r, Value data, Value hit,
                          Value scattered) {
  Value merged = scattered;
  switch (r) {
  case Reduction::None:
    break;
  case Reduction::Add:
    merged = n.create<AddOp>({data, scattered});
    break;
  case Reduction::Mul:
    merged = n.create<MulOp>({data, scattered});
    break;
  case Reduction::Max:
    merged = n.create<MaxOp>({data, scattered});
    break;
  case Reduction::Min:
    merged = n.create<MinOp>({data, scattered});
    break;
  }
  return n.create<SelectOp>({hit, merged, data});
}

/// ScatterElements along `axis` (Scatter is the same without reduction).
static LogicalResult scatterElements(NodeImporter &n, Reduction r) {
  Value data = n.input(0), indices = n.input(1), updates = n.input(2);
  auto axisAttr = n.intAttr("axis", 0);
  if (!data || !indices || !updates || !axisAttr)
    return failure();
  auto dShape = shapeOf(data), iShape = shapeOf(indices);
  int64_t rank = dShape.size();
  auto axis = normalizeAxisOrError(n, *axisAttr, rank);
  if (!axis)
    return failure();
  if (static_cast<int64_t>(iShape.size()) != rank || shapeOf(updates) != iShape)
    return n.error() << "indices and updates must have the same shape, of "
                        "the data's rank";
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && iShape[d] > dShape[d])
      return n.error() << "indices dimension " << d << " (" << iShape[d]
                       << ") exceeds the data's (" << dShape[d] << ")";
  Type element = elementOf(data);
  bool isBool = element.isInteger(1);
  Type work = isBool ? n.b.getI32Type() : element;
  data = n.widened(n.cast(data, work));
  updates = n.widened(n.cast(updates, work));
  // The scattered axis moved last; the indices' positions along it become
  // a tap axis before it: hot[..., j, k] = (indices[..., j] == k).
  SmallVector<int64_t> perm, inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      perm.push_back(d);
  perm.push_back(*axis);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  int64_t size = dShape[*axis];
  Value idx = n.transpose(wrapIndex(n, indices, n.scalar(size, n.i64())), perm);
  Value upd = n.transpose(updates, perm);
  auto tShape = shapeOf(idx);
  SmallVector<int64_t> hotShape(tShape), tapShape(tShape);
  hotShape.push_back(size);
  tapShape.push_back(1);
  Value hot = n.compare(ComparePredicate::eq, n.reshape(idx, tapShape),
                        n.iota(hotShape, rank));
  Value scattered = combineTaps(n, r, hot, n.reshape(upd, tapShape), rank - 1);
  Value hit = n.create<ReduceMaxOp>({n.cast(hot, n.b.getI32Type())},
                                    {n.i64s("axes", {rank - 1})});
  // Dimensions the indices leave short: nothing hits there.
  SmallVector<int64_t> full;
  for (int64_t d : perm)
    full.push_back(dShape[d]);
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  bool short_ = false;
  for (int64_t d = 0; d + 1 < rank; ++d) {
    high[d] = full[d] - tShape[d];
    short_ |= high[d] != 0;
  }
  if (short_) {
    auto pad = [&](Value v) {
      return n.create<PadOp>({v}, {n.i64s("low", low), n.i64s("high", high),
                                   n.named("value", n.b.getF64FloatAttr(0))});
    };
    scattered = pad(scattered);
    hit = pad(hit);
  }
  hit = n.compare(ComparePredicate::gt, hit, n.scalar(0, n.b.getI32Type()));
  Value out = applyScatter(n, r, n.transpose(data, perm), hit, scattered);
  out = n.transpose(out, inverse);
  out = isBool ? n.cast(out, element) : n.narrowed(out, element);
  return n.setOutput(0, out);
}

static LogicalResult importScatterElements(NodeImporter &n) {
  auto r = readReduction(n);
  return r ? scatterElements(n, *r) : failure();
}

/// Scatters `updates` [N, R] into the rows `rows` [N] (i64, in range) of
/// `flat` [M, R].
static Value scatterRows(NodeImporter &n, Reduction r, Value flat, Value rows,
                         Value updates) {
  if (!flat || !rows || !updates)
    return {};
  int64_t m = shapeOf(flat)[0], count = shapeOf(rows)[0],
          width = shapeOf(flat)[1];
  Value hot = n.compare(ComparePredicate::eq, n.reshape(rows, {count, 1}),
                        n.iota({count, m}, 1));
  Value scattered =
      combineTaps(n, r, n.reshape(hot, {count, m, 1}),
                  n.reshape(updates, {count, 1, width}), 0);
  Value hit = n.create<ReduceMaxOp>({n.cast(hot, n.b.getI32Type())},
                                    {n.i64s("axes", {0})});
  hit = n.compare(ComparePredicate::gt, n.reshape(hit, {m, 1}),
                  n.scalar(0, n.b.getI32Type()));
  return applyScatter(n, r, flat, hit, scattered);
}

static LogicalResult importScatterND(NodeImporter &n) {
  auto r = readReduction(n);
  Value data = n.input(0), indices = n.input(1), updates = n.input(2);
  if (!r || !data || !indices || !updates)
    return failure();
  auto dShape = shapeOf(data), iShape = shapeOf(indices);
  if (iShape.empty())
    return n.error() << "indices must have rank at least 1";
  int64_t k = iShape.back(), rank = dShape.size();
  if (k < 1 || k > rank)
    return n.error() << "the index tuples have " << k
                     << " entries; the data has rank " << rank;
  int64_t count = product(ArrayRef<int64_t>(iShape).drop_back());
  int64_t m = product(ArrayRef<int64_t>(dShape).take_front(k));
  int64_t width = product(ArrayRef<int64_t>(dShape).drop_front(k));
  SmallVector<int64_t> uShape(iShape.begin(), iShape.end() - 1);
  uShape.append(dShape.begin() + k, dShape.end());
  if (ArrayRef<int64_t>(shapeOf(updates)) != ArrayRef<int64_t>(uShape))
    return n.error() << "updates must have shape indices.shape[:-1] + "
                        "data.shape[indices.shape[-1]:]";
  // Row-major row numbers of the index tuples, negative entries wrapped.
  Constant sizes = Constant::empty(n.i64(), {k}), strides = sizes;
  SmallVector<int64_t> leading(dShape.begin(), dShape.begin() + k);
  auto st = stridesOf(leading);
  for (int64_t d = 0; d < k; ++d) {
    sizes.pushInt(dShape[d]);
    strides.pushInt(st[d]);
  }
  Value idx = wrapIndex(n, n.reshape(indices, {count, k}), n.constant(sizes));
  Value rows = n.create<ReduceSumOp>(
      {n.create<MulOp>({idx, n.constant(strides)})}, {n.i64s("axes", {1})});
  Type element = elementOf(data);
  bool isBool = element.isInteger(1);
  Type work = isBool ? n.b.getI32Type() : element;
  Value flat = n.widened(n.cast(n.reshape(data, {m, width}), work));
  Value upd = n.widened(n.cast(n.reshape(updates, {count, width}), work));
  Value out = n.reshape(scatterRows(n, *r, flat, rows, upd), dShape);
  out = isBool ? n.cast(out, element) : n.narrowed(out, element);
  return n.setOutput(0, out);
}

/// MaxUnpool: X's elements at their flat indices I in an output of zeros.
static LogicalResult importMaxUnpool(NodeImporter &n) {
  Value x = n.input(0), indices = n.input(1);
  auto kernel = n.intsAttr("kernel_shape");
  if (!x || !indices || !kernel)
    return failure();
  auto xShape = shapeOf(x);
  // X is [N, C, spatial...] and the indices have its shape (a rank-1 X
  // made the spatial rank wrap around; found by the onnx fuzz target).
  if (xShape.size() < 3 || shapeOf(indices) != xShape)
    return n.error() << "X must be [N, C, spatial...] and I of X's shape, got X "
                     << formatShape(xShape) << " and I " << formatShape(shapeOf(indices));
  size_t rank = xShape.size() - 2;
  auto strides = n.intsAttr("strides", SmallVector<int64_t>(rank, 1));
  auto pads = n.intsAttr("pads", SmallVector<int64_t>(2 * rank, 0));
  if (!strides || !pads)
    return failure();
  if (kernel->size() != rank || strides->size() != rank ||
      pads->size() != 2 * rank)
    return n.error() << "kernel_shape, strides and pads must have one entry "
                        "per spatial dimension ("
                     << rank << "; pads 2 per dimension)";
  // The indices address the unpooled shape; a larger output_shape pads it
  // at the end (as ONNX's reference does).
  SmallVector<int64_t> outShape(xShape.begin(), xShape.begin() + 2);
  for (size_t d = 0; d < rank; ++d)
    outShape.push_back((xShape[2 + d] - 1) * (*strides)[d] - (*pads)[d] -
                       (*pads)[rank + d] + (*kernel)[d]);
  SmallVector<int64_t> padded(outShape);
  if (n.hasInput(2)) {
    auto given = n.intsInput(2, "output_shape");
    if (!given)
      return failure();
    padded.assign(given->begin(), given->end());
    if (padded.size() != xShape.size())
      return n.error() << "output_shape must have X's rank";
    for (size_t d = 0; d < padded.size(); ++d)
      if (padded[d] < outShape[d])
        return n.error() << "output_shape is smaller than the unpooled shape "
                            "along dimension "
                         << d;
  }
  int64_t count = product(xShape), m = product(outShape);
  Type element = elementOf(x);
  Value zeros = n.broadcastTo(n.scalar(0, element), {m, 1});
  Value rows = wrapIndex(n, n.reshape(indices, {count}),
                         n.scalar(m, n.i64()));
  Value out = scatterRows(n, Reduction::None, zeros, rows,
                          n.reshape(x, {count, 1}));
  out = n.reshape(out, outShape);
  if (padded != outShape) {
    SmallVector<int64_t> low(padded.size(), 0), high;
    for (size_t d = 0; d < padded.size(); ++d)
      high.push_back(padded[d] - outShape[d]);
    out = n.create<PadOp>({out}, {n.i64s("low", low), n.i64s("high", high),
                                  n.named("value", n.b.getF64FloatAttr(0))});
  }
  return n.setOutput(0, out);
}

void addScatteringOps(OpTable &t) {
  t["ScatterElements"] = {{"axis", "reduction"}, importScatterElements};
  t["Scatter"] = {{"axis"}, [](NodeImporter &n) {
                    return scatterElements(n, Reduction::None);
                  }};
  t["ScatterND"] = {{"reduction"}, importScatterND};
  t["MaxUnpool"] = {{"kernel_shape", "pads", "strides"}, importMaxUnpool};
}

} // namespace dlc::onnximport
