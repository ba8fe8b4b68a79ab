//===- ShapeArithmetic.cpp - ONNX ops with values known at import time ----===//
//
// Shape, Size, Constant, ConstantOfShape, Range, EyeLike and the window
// functions yield constants, so that the shape computations PyTorch exports
// fold away on static shapes; the data-movement ops fold on their values.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

#include <cmath>

using namespace mlir;

namespace dlc::onnximport {

constexpr int64_t kFoldLimit = 4096;

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
  // The count in double (a huge or wrapping range must not be cast from a
  // double past 2^63, nor materialised element by element).
  double steps = std::ceil((l - s) / d);
  if (!(steps <= double(kFoldLimit * 1024)) && steps > 0)
    return n.error() << "a range of " << steps << " elements (start " << s
                     << ", limit " << l << ", delta " << d
                     << ") is over the " << kFoldLimit * 1024
                     << " dlc builds at import time";
  if (std::isnan(steps))
    return n.error() << "start, limit or delta is not a number";
  int64_t count = std::max<int64_t>(0, static_cast<int64_t>(steps));
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

void addShapeArithmeticOps(OpTable &t) {
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
}

} // namespace dlc::onnximport
