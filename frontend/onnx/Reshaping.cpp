//===- Reshaping.cpp - ONNX Reshape, Squeeze, Transpose, Expand, ... ------===//
//
// Ops that change a tensor's shape or layout but not its elements: Reshape,
// Flatten, Squeeze and Unsqueeze (folded on values known at import time),
// Transpose, DepthToSpace and SpaceToDepth (reshape, transpose, reshape)
// and Expand (broadcast_to).
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ShapeHelpers.h"

#include "ir/ShapeUtils.h"

using namespace mlir;

namespace dlc::onnximport {

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
    } else if (__builtin_mul_overflow(known, d, &known)) {
      return n.error() << "shape " << formatShape(*target)
                       << " has sizes that multiply past 2^63";
    }
    shape.push_back(d);
  }
  // -1 is the element count divided by the other sizes: none when they
  // multiply to 0 (0 / 0; NumPy refuses it too).
  if (inferred >= 0 && known == 0)
    return n.error() << "shape " << formatShape(*target)
                     << " has a -1 but its other sizes multiply to 0, so no "
                        "size is inferred for it";
  if (inferred >= 0)
    shape[inferred] = type.getNumElements() / known;
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
    // A repeated axis would leave one input dimension too many to place
    // (read past the end of the input's shape).
    if (added[*axis])
      return n.error() << "axis " << a << " is listed twice";
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

void addReshapingOps(OpTable &t) {
  t["Reshape"] = {{"allowzero"}, importReshape};
  t["Flatten"] = {{"axis"}, importFlatten};
  t["Squeeze"] = {{"axes"}, importSqueeze};
  t["Unsqueeze"] = {{"axes"}, importUnsqueeze};
  t["Transpose"] = {{"perm"}, importTranspose};
  t["DepthToSpace"] = {{"blocksize", "mode"}, importDepthToSpace};
  t["SpaceToDepth"] = {{"blocksize"}, importSpaceToDepth};
  t["Expand"] = {{}, importExpand};
}

} // namespace dlc::onnximport
