//===- SlicingPadding.cpp - ONNX Concat, Split, Slice, Pad, Tile ----------===//
//
// Ops that join or cut tensors along axes. Concat and Slice fold on values
// known at import time; otherwise they map to the dialect's concat, slice
// and pad. Negative-step slices, reflect/edge padding and Tile are gathers
// with constant indices.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ShapeHelpers.h"

using namespace mlir;

namespace dlc::onnximport {

static LogicalResult importConcat(NodeImporter &n) {
  auto axisAttr = n.intAttr("axis", 0);
  RankedTensorType first = n.inputType(0);
  if (!axisAttr || !first)
    return failure();
  int64_t rank = first.getRank();
  auto axis = normalizeAxisOrError(n, *axisAttr, rank);
  if (!axis)
    return failure();
  // Fold when every input is known (shape vectors).
  std::vector<const Constant *> parts;
  for (size_t i = 0; i < n.numInputs(); ++i)
    if (const Constant *c = n.foldable(i))
      parts.push_back(c);
  if (parts.size() == n.numInputs() && rank == 1) {
    Constant out = Constant::empty(parts[0]->element, {0});
    for (const Constant *c : parts) {
      if (c->element != out.element || c->shape.size() != 1)
        return n.error() << "inputs differ in element type or rank";
      for (int64_t k = 0; k < c->numel(); ++k)
        c->isFloat() ? out.push(c->floats[k]) : out.pushInt(c->ints[k]);
      out.shape[0] += c->numel();
    }
    return n.setConstant(0, std::move(out));
  }
  SmallVector<Value> inputs;
  for (size_t i = 0; i < n.numInputs(); ++i)
    inputs.push_back(n.input(i));
  if (inputs.size() == 1)
    return n.setOutput(0, inputs[0]);
  return n.setOutput(0, n.create<ConcatOp>(inputs, {n.i64("axis", *axis)}));
}

static LogicalResult importSplit(NodeImporter &n) {
  Value x = n.input(0);
  auto axisAttr = n.intAttr("axis", 0);
  if (!x || !axisAttr)
    return failure();
  auto shape = shapeOf(x);
  auto axis = normalizeAxisOrError(n, *axisAttr, shape.size());
  if (!axis)
    return failure();
  std::optional<SmallVector<int64_t>> sizes;
  if (n.opset() < 13)
    sizes = n.intsAttr("split", {});
  else
    sizes = n.hasInput(1) ? n.intsInput(1, "split")
                          : std::optional<SmallVector<int64_t>>(
                                SmallVector<int64_t>{});
  if (!sizes)
    return failure();
  size_t parts = n.numOutputs();
  // Opset 18: `num_outputs` without `split` makes equal parts of
  // ceil(size / num_outputs), the last one smaller when it does not divide.
  if (n.hasAttr("num_outputs")) {
    auto count = n.intAttr("num_outputs", 0);
    if (!count)
      return failure();
    if (!sizes->empty())
      return n.error() << "num_outputs and split are both given";
    if (*count < 1)
      return n.error() << "num_outputs is " << *count;
    if (*count != static_cast<int64_t>(parts))
      return n.error() << "num_outputs is " << *count << " but the node has "
                       << parts << " outputs";
    int64_t chunk = (shape[*axis] + *count - 1) / *count;
    for (int64_t i = 0, left = shape[*axis]; i < *count; ++i) {
      sizes->push_back(std::min(chunk, left));
      left -= sizes->back();
    }
  }
  if (sizes->empty()) {
    if (shape[*axis] % parts)
      return n.error() << "dimension " << *axis << " of size " << shape[*axis]
                       << " does not split into " << parts << " equal parts";
    sizes->assign(parts, shape[*axis] / parts);
  }
  if (sizes->size() != parts)
    return n.error() << "split has " << sizes->size() << " sizes for "
                     << parts << " outputs";
  SmallVector<int64_t> starts(shape.size(), 0), limits(shape),
      strides(shape.size(), 1);
  int64_t offset = 0;
  for (size_t i = 0; i < parts; ++i) {
    starts[*axis] = offset;
    limits[*axis] = offset + (*sizes)[i];
    offset += (*sizes)[i];
    if (n.wantsOutput(i) &&
        failed(n.setOutput(i, slice(n, x, starts, limits, strides))))
      return failure();
  }
  if (offset != shape[*axis])
    return n.error() << "split sizes add up to " << offset << ", not "
                     << shape[*axis];
  return success();
}

/// `x` gathered along `axis` at constant `indices`.
static Value gatherAt(NodeImporter &n, Value x, int64_t axis,
                      ArrayRef<int64_t> indices) {
  Constant idx = Constant::empty(n.i64(), {static_cast<int64_t>(indices.size())});
  for (int64_t i : indices)
    idx.pushInt(i);
  return n.create<GatherOp>({x, n.constant(idx)}, {n.i64("axis", axis)});
}

static LogicalResult importSlice(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type)
    return failure();
  int64_t rank = type.getRank();
  std::optional<SmallVector<int64_t>> starts, ends, axes, steps;
  if (n.opset() < 10) {
    starts = n.intsAttr("starts", {});
    ends = n.intsAttr("ends", {});
    axes = n.intsAttr("axes", {});
    steps = SmallVector<int64_t>{};
  } else {
    starts = n.intsInput(1, "starts");
    ends = n.intsInput(2, "ends");
    axes = n.hasInput(3) ? n.intsInput(3, "axes")
                         : std::optional<SmallVector<int64_t>>(
                               SmallVector<int64_t>{});
    steps = n.hasInput(4) ? n.intsInput(4, "steps")
                          : std::optional<SmallVector<int64_t>>(
                                SmallVector<int64_t>{});
  }
  if (!starts || !ends || !axes || !steps)
    return failure();
  if (axes->empty())
    for (size_t i = 0; i < starts->size(); ++i)
      axes->push_back(i);
  if (steps->empty())
    steps->assign(starts->size(), 1);
  if (ends->size() != starts->size() || axes->size() != starts->size() ||
      steps->size() != starts->size())
    return n.error() << "starts, ends, axes and steps differ in length";
  SmallVector<int64_t> first(rank, 0), step(rank, 1), count(type.getShape());
  for (size_t i = 0; i < starts->size(); ++i) {
    auto axis = normalizeAxisOrError(n, (*axes)[i], rank);
    if (!axis)
      return failure();
    int64_t dim = type.getDimSize(*axis), st = (*steps)[i];
    if (st == 0)
      return n.error() << "a step is 0";
    int64_t s = (*starts)[i], e = (*ends)[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    // ceil(span / |step|) without adding the step (a huge one wraps).
    uint64_t magnitude = st > 0 ? uint64_t(st) : 0 - uint64_t(st);
    int64_t span = st > 0 ? e - s : s - e;
    int64_t c = span > 0 ? int64_t((uint64_t(span) - 1) / magnitude + 1) : 0;
    first[*axis] = s;
    step[*axis] = st;
    count[*axis] = std::max<int64_t>(0, c);
  }
  if (const Constant *c = n.foldable(0)) {
    auto strides = stridesOf(c->shape);
    return n.setConstant(0, remap(*c, count, [&](ArrayRef<int64_t> idx) {
                           int64_t flat = 0;
                           for (int64_t d = 0; d < rank; ++d)
                             flat += (first[d] + idx[d] * step[d]) * strides[d];
                           return flat;
                         }));
  }
  Value x = n.input(0);
  // Positive steps slice in one op; each negative step is a gather.
  SmallVector<int64_t> sliceStart(rank, 0), sliceLimit(type.getShape()),
      sliceStride(rank, 1);
  for (int64_t d = 0; d < rank; ++d)
    if (step[d] > 0) {
      sliceStart[d] = count[d] ? first[d] : 0;
      sliceLimit[d] = count[d] ? first[d] + (count[d] - 1) * step[d] + 1 : 0;
      sliceStride[d] = step[d];
    }
  if (sliceStart != SmallVector<int64_t>(rank, 0) ||
      sliceLimit != SmallVector<int64_t>(type.getShape()) ||
      sliceStride != SmallVector<int64_t>(rank, 1))
    x = slice(n, x, sliceStart, sliceLimit, sliceStride);
  for (int64_t d = 0; d < rank; ++d)
    if (step[d] < 0) {
      SmallVector<int64_t> indices;
      for (int64_t k = 0; k < count[d]; ++k)
        indices.push_back(first[d] + k * step[d]);
      x = gatherAt(n, x, d, indices);
    }
  return n.setOutput(0, x);
}

static LogicalResult importTile(NodeImporter &n) {
  Value x = n.input(0);
  auto repeats = n.intsInput(1, "repeats");
  if (!x || !repeats)
    return failure();
  auto shape = shapeOf(x);
  if (repeats->size() != shape.size())
    return n.error() << "repeats has " << repeats->size()
                     << " entries for rank " << shape.size();
  // Each repeated dimension d of size s: [..., s, ...] reshaped to
  // [..., 1, s, ...], broadcast to [..., r, s, ...], merged to
  // [..., r * s, ...]. (No index list: its size is the output's.)
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t r = (*repeats)[d], total;
    if (r < 0)
      return n.error() << "repeats[" << d << "] is negative (" << r << ")";
    if (__builtin_mul_overflow(shape[d], r, &total) ||
        total > (int64_t(1) << 48))
      return n.error() << "dimension " << d << " (" << shape[d]
                       << ") repeated " << r << " times is over 2^48";
    if (r == 1)
      continue;
    auto current = shapeOf(x);
    SmallVector<int64_t> split(current.begin(), current.end());
    split.insert(split.begin() + d, 1);
    SmallVector<int64_t> wide(split);
    wide[d] = r;
    current[d] = total;
    x = n.reshape(n.broadcastTo(n.reshape(x, split), wide), current);
    if (!x)
      return failure();
  }
  return n.setOutput(0, x);
}

static LogicalResult importPad(NodeImporter &n) {
  Value x = n.input(0);
  auto mode = n.stringAttr("mode", "constant");
  if (!x || !mode)
    return failure();
  auto shape = shapeOf(x);
  int64_t rank = shape.size();
  std::optional<SmallVector<int64_t>> pads;
  double value = 0;
  if (n.opset() < 11) {
    pads = n.intsAttr("pads", {});
    auto v = n.floatAttr("value", 0.0);
    if (!v)
      return failure();
    value = *v;
  } else {
    pads = n.intsInput(1, "pads");
    if (n.hasInput(2)) {
      auto c = n.constantInput(2, "constant_value");
      if (!c)
        return failure();
      value = c->numel() ? c->get(0) : 0;
    }
  }
  if (!pads)
    return failure();
  // Opset 18: `axes` (input 3) names the axes `pads` covers; the others
  // are not padded.
  if (n.opset() >= 18 && n.hasInput(3)) {
    auto axes = n.intsInput(3, "axes");
    if (!axes)
      return failure();
    if (pads->size() != 2 * axes->size())
      return n.error() << "pads has " << pads->size() << " entries for "
                       << axes->size() << " axes";
    SmallVector<int64_t> full(2 * rank, 0);
    for (auto [i, a] : llvm::enumerate(*axes)) {
      auto axis = normalizeAxisOrError(n, a, rank, "axes");
      if (!axis)
        return failure();
      full[*axis] = (*pads)[i];
      full[*axis + rank] = (*pads)[i + axes->size()];
    }
    pads = full;
  }
  if (pads->size() != static_cast<size_t>(2 * rank))
    return n.error() << "pads has " << pads->size() << " entries for rank "
                     << rank;
  SmallVector<int64_t> low(pads->begin(), pads->begin() + rank),
      high(pads->begin() + rank, pads->end());
  // Negative pads crop first.
  SmallVector<int64_t> starts(rank, 0), limits(shape), ones(rank, 1);
  bool crop = false;
  for (int64_t d = 0; d < rank; ++d) {
    if (low[d] < 0) { starts[d] = -low[d]; low[d] = 0; crop = true; }
    if (high[d] < 0) { limits[d] += high[d]; high[d] = 0; crop = true; }
  }
  if (crop) {
    x = slice(n, x, starts, limits, ones);
    if (!x)
      return failure();
    shape = shapeOf(x);
  }
  if (*mode == "constant")
    return n.setOutput(0, n.create<PadOp>({x}, {n.i64s("low", low),
                                                n.i64s("high", high),
                                                n.named("value",
                                                        n.b.getF64FloatAttr(value))}));
  if (*mode != "reflect" && *mode != "edge" && *mode != "wrap")
    return n.unsupported("mode", "unknown value '" + *mode + "'");
  for (int64_t d = 0; d < rank; ++d) {
    if (!low[d] && !high[d])
      continue;
    int64_t size = shape[d];
    if (*mode != "edge" && size == 0)
      return n.error() << *mode << " padding needs a non-empty dimension " << d;
    if (*mode == "reflect" && (low[d] >= size || high[d] >= size))
      return n.error() << "reflect padding of " << std::max(low[d], high[d])
                       << " needs a dimension larger than " << size;
    SmallVector<int64_t> indices;
    for (int64_t i = -low[d]; i < size + high[d]; ++i) {
      int64_t j = i;
      if (*mode == "edge")
        j = std::clamp<int64_t>(i, 0, size - 1);
      else if (*mode == "wrap")
        j = ((i % size) + size) % size;
      else if (i < 0)
        j = -i;
      else if (i >= size)
        j = 2 * (size - 1) - i;
      indices.push_back(j);
    }
    x = gatherAt(n, x, d, indices);
  }
  return n.setOutput(0, x);
}

void addSlicingPaddingOps(OpTable &t) {
  t["Concat"] = {{"axis"}, importConcat};
  t["Split"] = {{"axis", "num_outputs", "split"}, importSplit};
  t["Slice"] = {{"starts", "ends", "axes"}, importSlice};
  t["Tile"] = {{}, importTile};
  t["Pad"] = {{"mode", "pads", "value"}, importPad};
}

} // namespace dlc::onnximport
