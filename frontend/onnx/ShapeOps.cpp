//===- ShapeOps.cpp - ONNX shape arithmetic and data movement -------------===//
//
// Two kinds of op live here. Shape arithmetic (Shape, Size, Constant,
// ConstantOfShape, Range, EyeLike, the window functions) yields values known at import time, and
// the data-movement ops (Reshape, Concat, Gather, Slice, Squeeze,
// Unsqueeze, Flatten) fold on such values, so the shape computations
// PyTorch exports disappear on static shapes. Otherwise data movement maps
// to the dialect's reshape, transpose, concat, slice, gather, pad and
// broadcast_to; reflect/edge padding, Tile and negative-step slices are
// gathers with constant indices; Trilu and OneHot compare iotas.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

#include "ir/ShapeUtils.h"

#include <cmath>
#include <functional>

using namespace mlir;

namespace dlc::onnximport {

constexpr int64_t kFoldLimit = 4096;

//===----------------------------------------------------------------------===//
// Host-side helpers for folding
//===----------------------------------------------------------------------===//

static int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// A constant of `shape` whose element at each index is `in`'s element at
/// `source(index)` (a flat index into `in`).
static Constant remap(const Constant &in, ArrayRef<int64_t> shape,
                      const std::function<int64_t(ArrayRef<int64_t>)> &source) {
  Constant out = Constant::empty(in.element, {shape.begin(), shape.end()});
  SmallVector<int64_t> index(shape.size(), 0);
  int64_t n = product(shape);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t from = source(index);
    if (in.isFloat())
      out.floats.push_back(in.floats[from]);
    else
      out.ints.push_back(in.ints[from]);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Output `i` is `x` with a new shape: folded when `x` is known.
static LogicalResult setReshaped(NodeImporter &n, size_t input,
                                 ArrayRef<int64_t> shape) {
  if (const Constant *c = n.foldable(input)) {
    Constant out = *c;
    out.shape.assign(shape.begin(), shape.end());
    return n.setConstant(0, std::move(out));
  }
  return n.setOutput(0, n.reshape(n.input(input), shape));
}

//===----------------------------------------------------------------------===//
// Shape arithmetic
//===----------------------------------------------------------------------===//

static LogicalResult importShape(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  auto start = n.intAttr("start", 0);
  auto end = n.intAttr("end", type ? type.getRank() : 0);
  if (!type || !start || !end)
    return failure();
  int64_t rank = type.getRank();
  auto clampDim = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t s = clampDim(*start), e = clampDim(*end);
  Constant out = Constant::empty(n.i64(), {std::max<int64_t>(0, e - s)});
  for (int64_t d = s; d < e; ++d)
    out.pushInt(type.getDimSize(d));
  return n.setConstant(0, std::move(out));
}

static LogicalResult importSize(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type)
    return n.error() << "input 0 is required";
  Constant out = Constant::empty(n.i64(), {});
  out.pushInt(type.getNumElements());
  return n.setConstant(0, std::move(out));
}

/// The value of a Constant node's attribute.
static std::optional<Constant> constantAttr(NodeImporter &n) {
  for (const char *name : {"sparse_value", "value_string", "value_strings"})
    if (n.hasAttr(name)) {
      (void)n.unsupported(name, "dlc has no sparse or string tensors");
      return std::nullopt;
    }
  if (const auto *a = n.attr("value")) {
    auto c = n.graph.readConstant(a->t(), n.loc);
    if (failed(c))
      return std::nullopt;
    return std::move(*c);
  }
  if (const auto *a = n.attr("value_float")) {
    Constant c = Constant::empty(n.b.getF32Type(), {});
    c.push(a->f());
    return c;
  }
  if (const auto *a = n.attr("value_floats")) {
    Constant c = Constant::empty(n.b.getF32Type(), {a->floats_size()});
    for (float v : a->floats())
      c.push(v);
    return c;
  }
  if (const auto *a = n.attr("value_int")) {
    Constant c = Constant::empty(n.i64(), {});
    c.pushInt(a->i());
    return c;
  }
  if (const auto *a = n.attr("value_ints")) {
    Constant c = Constant::empty(n.i64(), {a->ints_size()});
    for (int64_t v : a->ints())
      c.pushInt(v);
    return c;
  }
  n.error() << "a Constant needs one of the attributes value, value_float, "
               "value_floats, value_int, value_ints";
  return std::nullopt;
}

static LogicalResult importConstant(NodeImporter &n) {
  auto c = constantAttr(n);
  if (!c)
    return failure();
  return n.setConstant(0, std::move(*c));
}

static LogicalResult importConstantOfShape(NodeImporter &n) {
  auto shape = n.intsInput(0, "shape");
  if (!shape)
    return failure();
  Constant fill = Constant::empty(n.b.getF32Type(), {});
  fill.push(0);
  if (const auto *a = n.attr("value")) {
    auto c = n.graph.readConstant(a->t(), n.loc);
    if (failed(c))
      return failure();
    if (c->numel() != 1)
      return n.error() << "attribute 'value' must hold one element";
    fill = *c;
  }
  Constant out = Constant::empty(fill.element, {shape->begin(), shape->end()});
  if (out.numel() > kFoldLimit) {
    fill.shape.clear();
    return n.setOutput(0, n.broadcastTo(n.constant(fill), *shape));
  }
  for (int64_t i = 0; i < out.numel(); ++i)
    fill.isFloat() ? out.push(fill.floats[0]) : out.pushInt(fill.ints[0]);
  return n.setConstant(0, std::move(out));
}

static LogicalResult importRange(NodeImporter &n) {
  auto start = n.constantInput(0, "start"), limit = n.constantInput(1, "limit"),
       delta = n.constantInput(2, "delta");
  if (!start || !limit || !delta)
    return failure();
  double s = start->get(0), l = limit->get(0), d = delta->get(0);
  if (d == 0)
    return n.error() << "delta is 0";
  int64_t count = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((l - s) / d)));
  Constant out = Constant::empty(start->element, {count});
  for (int64_t i = 0; i < count; ++i) {
    if (start->isFloat())
      out.push(s + i * d);
    else
      out.pushInt(start->getInt(0) + i * delta->getInt(0));
  }
  return n.setConstant(0, std::move(out));
}

static LogicalResult importEyeLike(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  auto k = n.intAttr("k", 0);
  std::optional<int64_t> dtype = n.intAttr("dtype", 0);
  if (!type || !k || !dtype)
    return failure();
  if (type.getRank() != 2)
    return n.error() << "EyeLike needs a 2-D input";
  Type element = type.getElementType();
  if (n.hasAttr("dtype")) {
    auto e = n.graph.requireElementType(*dtype, n.loc, "attribute 'dtype'");
    if (failed(e))
      return failure();
    element = *e;
  }
  Constant out = Constant::empty(element, {type.getShape().begin(),
                                           type.getShape().end()});
  for (int64_t i = 0; i < type.getDimSize(0); ++i)
    for (int64_t j = 0; j < type.getDimSize(1); ++j)
      out.pushInt(j - i == *k);
  return n.setConstant(0, std::move(out));
}

/// HannWindow, HammingWindow, BlackmanWindow (opset 17): generalised
/// cosine windows of `size` elements, known at import time.
static LogicalResult importWindow(NodeImporter &n) {
  auto size = n.constantInput(0, "size");
  auto periodic = n.intAttr("periodic", 1);
  auto dtype = n.intAttr("output_datatype", ::onnx::TensorProto::FLOAT);
  if (!size || !periodic || !dtype)
    return failure();
  auto element = n.graph.requireElementType(*dtype, n.loc,
                                            "attribute 'output_datatype'");
  if (failed(element))
    return failure();
  double a0 = 0.5, a1 = 0.5, a2 = 0;
  if (n.opType() == "HammingWindow")
    a0 = 25.0 / 46, a1 = 21.0 / 46;
  else if (n.opType() == "BlackmanWindow")
    a0 = 0.42, a1 = 0.5, a2 = 0.08;
  int64_t count = size->getInt(0);
  if (count < 0)
    return n.error() << "size " << count << " is negative";
  double denominator = *periodic ? count : count - 1;
  const double tau = 6.283185307179586;
  Constant out = Constant::empty(*element, {count});
  for (int64_t i = 0; i < count; ++i) {
    double angle = denominator > 0 ? tau * i / denominator : 0;
    out.push(a0 - a1 * std::cos(angle) + a2 * std::cos(2 * angle));
  }
  return n.setConstant(0, std::move(out));
}

//===----------------------------------------------------------------------===//
// Reshaping
//===----------------------------------------------------------------------===//

static LogicalResult importReshape(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  auto target = n.intsInput(1, "shape");
  auto allowZero = n.intAttr("allowzero", 0);
  if (!type || !target || !allowZero)
    return failure();
  SmallVector<int64_t> shape;
  int64_t inferred = -1, known = 1;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == 0 && !*allowZero) {
      if (i >= static_cast<size_t>(type.getRank()))
        return n.error() << "shape entry " << i
                         << " is 0 (copy), but the input has rank "
                         << type.getRank();
      d = type.getDimSize(i);
    }
    if (d == -1) {
      if (inferred >= 0)
        return n.error() << "shape " << formatShape(*target)
                         << " has more than one -1";
      inferred = i;
    } else if (d < -1) {
      return n.error() << "shape " << formatShape(*target)
                       << " has a negative size";
    } else {
      known *= d;
    }
    shape.push_back(d);
  }
  if (inferred >= 0)
    shape[inferred] = known ? type.getNumElements() / known : 0;
  if (product(shape) != type.getNumElements())
    return n.error() << "cannot reshape " << formatType(type) << " to "
                     << formatShape(*target);
  return setReshaped(n, 0, shape);
}

static LogicalResult importFlatten(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  auto axisAttr = n.intAttr("axis", 1);
  if (!type || !axisAttr)
    return failure();
  int64_t rank = type.getRank();
  int64_t axis = *axisAttr < 0 ? *axisAttr + rank : *axisAttr;
  if (axis < 0 || axis > rank)
    return n.error() << "axis " << *axisAttr << " is out of range for rank "
                     << rank;
  auto shape = type.getShape();
  return setReshaped(n, 0,
                     {product(shape.take_front(axis)),
                      product(shape.drop_front(axis))});
}

/// Axes of Squeeze/Unsqueeze: an attribute before opset 13, an input after.
static std::optional<SmallVector<int64_t>> squeezeAxes(NodeImporter &n,
                                                       bool required) {
  if (n.opset() < 13)
    return n.intsAttr("axes", {});
  if (!n.hasInput(1)) {
    if (required)
      n.error() << "input 'axes' is required";
    return required ? std::nullopt
                    : std::optional<SmallVector<int64_t>>(SmallVector<int64_t>{});
  }
  return n.intsInput(1, "axes");
}

static LogicalResult importSqueeze(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  auto axes = squeezeAxes(n, false);
  if (!type || !axes)
    return failure();
  int64_t rank = type.getRank();
  SmallVector<bool> drop(rank, false);
  for (int64_t a : *axes) {
    auto axis = normalizeAxisOrError(n, a, rank);
    if (!axis)
      return failure();
    if (type.getDimSize(*axis) != 1)
      return n.error() << "cannot squeeze dimension " << a << " of "
                       << formatType(type) << ": its size is not 1";
    drop[*axis] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!(axes->empty() ? type.getDimSize(d) == 1 : drop[d]))
      shape.push_back(type.getDimSize(d));
  return setReshaped(n, 0, shape);
}

static LogicalResult importUnsqueeze(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  auto axes = squeezeAxes(n, true);
  if (!type || !axes)
    return failure();
  int64_t rank = type.getRank() + axes->size();
  SmallVector<bool> added(rank, false);
  for (int64_t a : *axes) {
    auto axis = normalizeAxisOrError(n, a, rank);
    if (!axis)
      return failure();
    added[*axis] = true;
  }
  SmallVector<int64_t> shape;
  auto in = type.getShape().begin();
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(added[d] ? 1 : *in++);
  return setReshaped(n, 0, shape);
}

static LogicalResult importTranspose(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type)
    return failure();
  SmallVector<int64_t> reversed;
  for (int64_t d = type.getRank() - 1; d >= 0; --d)
    reversed.push_back(d);
  auto perm = n.intsAttr("perm", reversed);
  if (!perm)
    return failure();
  return n.setOutput(0, n.create<TransposeOp>({n.input(0)},
                                              {n.i64s("perm", *perm)}));
}

static LogicalResult importDepthToSpace(NodeImporter &n) {
  Value x = n.input(0);
  auto block = n.intAttr("blocksize", 0);
  auto mode = n.stringAttr("mode", "DCR");
  if (!x || !block || !mode)
    return failure();
  auto s = shapeOf(x);
  int64_t b = *block;
  if (s.size() != 4 || b <= 0 || s[1] % (b * b))
    return n.error() << "needs [N, C, H, W] with C divisible by blocksize^2";
  int64_t c = s[1] / (b * b);
  Value y;
  if (*mode == "DCR")
    y = n.transpose(n.reshape(x, {s[0], b, b, c, s[2], s[3]}),
                    {0, 3, 4, 1, 5, 2});
  else if (*mode == "CRD")
    y = n.transpose(n.reshape(x, {s[0], c, b, b, s[2], s[3]}),
                    {0, 1, 4, 2, 5, 3});
  else
    return n.unsupported("mode", "unknown value '" + *mode + "'");
  return n.setOutput(0, n.reshape(y, {s[0], c, s[2] * b, s[3] * b}));
}

static LogicalResult importSpaceToDepth(NodeImporter &n) {
  Value x = n.input(0);
  auto block = n.intAttr("blocksize", 0);
  if (!x || !block)
    return failure();
  auto s = shapeOf(x);
  int64_t b = *block;
  if (s.size() != 4 || b <= 0 || s[2] % b || s[3] % b)
    return n.error() << "needs [N, C, H, W] with H and W divisible by "
                        "blocksize";
  Value y = n.transpose(n.reshape(x, {s[0], s[1], s[2] / b, b, s[3] / b, b}),
                        {0, 3, 5, 1, 2, 4});
  return n.setOutput(0, n.reshape(y, {s[0], s[1] * b * b, s[2] / b, s[3] / b}));
}

//===----------------------------------------------------------------------===//
// Joining, splitting, slicing, gathering
//===----------------------------------------------------------------------===//

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

/// x[starts:limits:strides] (positive strides) as a dlc.slice.
static Value slice(NodeImporter &n, Value x, ArrayRef<int64_t> starts,
                   ArrayRef<int64_t> limits, ArrayRef<int64_t> strides) {
  return n.create<SliceOp>({x}, {n.i64s("starts", starts),
                                 n.i64s("limits", limits),
                                 n.i64s("strides", strides)});
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
    int64_t c = st > 0 ? (e - s + st - 1) / st : (s - e + (-st) - 1) / (-st);
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

static LogicalResult importGather(NodeImporter &n) {
  RankedTensorType type = n.inputType(0), itype = n.inputType(1);
  auto axisAttr = n.intAttr("axis", 0);
  if (!type || !itype || !axisAttr)
    return failure();
  auto axis = normalizeAxisOrError(n, *axisAttr, type.getRank());
  if (!axis)
    return failure();
  const Constant *data = n.foldable(0), *indices = n.foldable(1);
  if (data && indices) {
    SmallVector<int64_t> shape(data->shape.begin(), data->shape.begin() + *axis);
    shape.append(indices->shape.begin(), indices->shape.end());
    shape.append(data->shape.begin() + *axis + 1, data->shape.end());
    auto strides = stridesOf(data->shape);
    int64_t irank = indices->shape.size(), dim = data->shape[*axis];
    auto istrides = stridesOf(indices->shape);
    bool inRange = true;
    Constant out = remap(*data, shape, [&](ArrayRef<int64_t> idx) {
      int64_t flatIndex = 0;
      for (int64_t k = 0; k < irank; ++k)
        flatIndex += idx[*axis + k] * istrides[k];
      int64_t at = indices->getInt(flatIndex);
      if (at < 0)
        at += dim;
      if (at < 0 || at >= dim) {
        inRange = false;
        at = 0;
      }
      int64_t flat = at * strides[*axis];
      for (int64_t d = 0; d < *axis; ++d)
        flat += idx[d] * strides[d];
      for (int64_t d = *axis + 1; d < type.getRank(); ++d)
        flat += idx[d - 1 + irank] * strides[d];
      return flat;
    });
    if (!inRange)
      return n.error() << "an index is out of range for dimension " << *axis
                       << " of size " << dim;
    return n.setConstant(0, std::move(out));
  }
  return n.setOutput(0, n.create<GatherOp>({n.input(0), n.input(1)},
                                           {n.i64("axis", *axis)}));
}

static LogicalResult importGatherElements(NodeImporter &n) {
  Value x = n.input(0), indices = n.input(1);
  auto axisAttr = n.intAttr("axis", 0);
  if (!x || !indices || !axisAttr)
    return failure();
  auto axis = normalizeAxisOrError(n, *axisAttr, shapeOf(x).size());
  if (!axis)
    return failure();
  if (shapeOf(indices).size() != shapeOf(x).size())
    return n.error() << "data and indices differ in rank";
  return n.setOutput(0, n.gatherElements(x, indices, *axis));
}

static LogicalResult importExpand(NodeImporter &n) {
  Value x = n.input(0);
  auto target = n.intsInput(1, "shape");
  if (!x || !target)
    return failure();
  auto shape = broadcastShapes(shapeOf(x), *target);
  if (!shape)
    return n.error() << "cannot expand " << formatType(x.getType()) << " to "
                     << formatShape(*target);
  return n.setOutput(0, n.broadcastTo(x, *shape));
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
  for (size_t d = 0; d < shape.size(); ++d) {
    if ((*repeats)[d] == 1)
      continue;
    SmallVector<int64_t> indices;
    for (int64_t i = 0; i < shape[d] * (*repeats)[d]; ++i)
      indices.push_back(i % shape[d]);
    x = gatherAt(n, x, d, indices);
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
  if (*mode != "reflect" && *mode != "edge")
    return n.unsupported("mode", "unknown value '" + *mode + "'");
  for (int64_t d = 0; d < rank; ++d) {
    if (!low[d] && !high[d])
      continue;
    int64_t size = shape[d];
    if (*mode == "reflect" && (low[d] >= size || high[d] >= size))
      return n.error() << "reflect padding of " << std::max(low[d], high[d])
                       << " needs a dimension larger than " << size;
    SmallVector<int64_t> indices;
    for (int64_t i = -low[d]; i < size + high[d]; ++i) {
      int64_t j = i;
      if (*mode == "edge")
        j = std::clamp<int64_t>(i, 0, size - 1);
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

//===----------------------------------------------------------------------===//
// Masks from iotas
//===----------------------------------------------------------------------===//

static LogicalResult importTrilu(NodeImporter &n) {
  Value x = n.input(0);
  auto upper = n.intAttr("upper", 1);
  if (!x || !upper)
    return failure();
  auto shape = shapeOf(x);
  if (shape.size() < 2)
    return n.error() << "Trilu needs rank at least 2";
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  Value k = n.hasInput(1) ? n.reshape(n.cast(n.input(1), n.i64()), {})
                          : n.scalar(0, n.i64());
  Value diff = n.create<SubOp>({n.iota({rows, cols}, 1), n.iota({rows, cols}, 0)});
  Value keep = n.compare(*upper ? ComparePredicate::ge : ComparePredicate::le,
                         diff, k);
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  return n.setOutput(0, n.create<SelectOp>({keep, x, n.scalar(0, element)}));
}

static LogicalResult importOneHot(NodeImporter &n) {
  Value indices = n.input(0), values = n.input(2);
  auto depthValue = n.constantInput(1, "depth");
  auto axisAttr = n.intAttr("axis", -1);
  if (!indices || !values || !depthValue || !axisAttr)
    return failure();
  int64_t depth = static_cast<int64_t>(depthValue->get(0));
  auto ishape = shapeOf(indices);
  int64_t rank = ishape.size() + 1;
  auto axis = normalizeAxisOrError(n, *axisAttr, rank);
  if (!axis)
    return failure();
  SmallVector<int64_t> shape(ishape), withOne(ishape);
  shape.insert(shape.begin() + *axis, depth);
  withOne.insert(withOne.begin() + *axis, 1);
  Value idx = n.cast(indices, n.i64());
  Value negative = n.compare(ComparePredicate::lt, idx, n.scalar(0, n.i64()));
  idx = n.create<SelectOp>(
      {negative, n.create<AddOp>({idx, n.scalar(depth, n.i64())}), idx});
  Value hot = n.compare(ComparePredicate::eq, n.reshape(idx, withOne),
                        n.iota(shape, *axis));
  Value off = n.reshape(slice(n, values, {0}, {1}, {1}), {});
  Value on = n.reshape(slice(n, values, {1}, {2}, {1}), {});
  return n.setOutput(0, n.create<SelectOp>({hot, on, off}));
}

void addShapeOps(OpTable &t) {
  t["Shape"] = {{"start", "end"}, importShape};
  t["Size"] = {{}, importSize};
  t["Constant"] = {{"value", "value_float", "value_floats", "value_int",
                    "value_ints", "sparse_value", "value_string",
                    "value_strings"},
                   importConstant};
  t["ConstantOfShape"] = {{"value"}, importConstantOfShape};
  t["Range"] = {{}, importRange};
  t["EyeLike"] = {{"dtype", "k"}, importEyeLike};
  for (const char *window : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    t[window] = {{"output_datatype", "periodic"}, importWindow};
  t["Reshape"] = {{"allowzero"}, importReshape};
  t["Flatten"] = {{"axis"}, importFlatten};
  t["Squeeze"] = {{"axes"}, importSqueeze};
  t["Unsqueeze"] = {{"axes"}, importUnsqueeze};
  t["Transpose"] = {{"perm"}, importTranspose};
  t["DepthToSpace"] = {{"blocksize", "mode"}, importDepthToSpace};
  t["SpaceToDepth"] = {{"blocksize"}, importSpaceToDepth};
  t["Concat"] = {{"axis"}, importConcat};
  t["Split"] = {{"axis", "split"}, importSplit};
  t["Slice"] = {{"starts", "ends", "axes"}, importSlice};
  t["Gather"] = {{"axis"}, importGather};
  t["GatherElements"] = {{"axis"}, importGatherElements};
  t["Expand"] = {{}, importExpand};
  t["Tile"] = {{}, importTile};
  t["Pad"] = {{"mode", "pads", "value"}, importPad};
  t["Trilu"] = {{"upper"}, importTrilu};
  t["OneHot"] = {{"axis"}, importOneHot};
}

} // namespace dlc::onnximport
