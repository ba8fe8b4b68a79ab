//===- Types.cpp - ONNX Cast, CastLike, Identity, Dropout -----------------===//
//
// Control of types: casts, and the ops that are the
// identity in an inference graph.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

using namespace mlir;

namespace dlc::onnximport {

/// Casts input 0 to `element` (a known value folds through the oracle).
static LogicalResult castTo(NodeImporter &n, Type element) {
  return n.setOutput(0, n.cast(n.input(0), element));
}

static LogicalResult importCast(NodeImporter &n) {
  auto to = n.intAttr("to", 0);
  if (!to)
    return failure();
  if (!n.hasAttr("to"))
    return n.error() << "attribute 'to' is required";
  auto element = n.graph.requireElementType(
      *to, n.loc, "node '" + n.name + "' (Cast): the target type");
  if (failed(element))
    return failure();
  return castTo(n, *element);
}

static LogicalResult importCastLike(NodeImporter &n) {
  RankedTensorType target = n.inputType(1);
  if (!target)
    return n.error() << "input 1 (target_type) is required";
  return castTo(n, target.getElementType());
}

static LogicalResult importIdentity(NodeImporter &n) {
  if (const Constant *c = n.foldable(0))
    return n.setConstant(0, *c);
  return n.setOutput(0, n.input(0));
}

static LogicalResult importDropout(NodeImporter &n) {
  // Opset 12 made ratio and training_mode inputs; dropout is random only in
  // training mode with a non-zero ratio.
  if (n.opset() >= 12 && n.hasInput(2)) {
    auto training = n.constantInput(2, "training_mode");
    if (!training)
      return failure();
    double ratio = 0.5;
    if (n.hasInput(1)) {
      auto r = n.constantInput(1, "ratio");
      if (!r)
        return failure();
      ratio = r->get(0);
    }
    if (training->getInt(0) && ratio != 0)
      return n.error() << "training-mode dropout is random; dlc imports "
                          "inference graphs";
  }
  Value x = n.input(0);
  if (failed(n.setOutput(0, x)))
    return failure();
  if (n.wantsOutput(1))
    return n.setOutput(1, n.broadcastTo(n.scalar(1, n.i1()), shapeOf(x)));
  return success();
}

void addTypeOps(OpTable &t) {
  // `saturate` (opset 19) concerns float8 targets only, which dlc has not.
  t["Cast"] = {{"saturate", "to"}, importCast};
  t["CastLike"] = {{"saturate"}, importCastLike};
  t["Identity"] = {{}, importIdentity};
  t["Dropout"] = {{"ratio", "seed"}, importDropout};
}

} // namespace dlc::onnximport
