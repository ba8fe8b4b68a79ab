//===- Contraction.cpp - ONNX MatMul and Gemm -----------------------------===//
//
// MatMul follows NumPy (1-D operands gain and then lose a unit dimension);
// Gemm is `alpha * op(A) op(B) + beta * C` with the transposes folded into
// `dlc.matmul`'s flags.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

using namespace mlir;

namespace dlc::onnximport {

static LogicalResult importMatMul(NodeImporter &n) {
  Value a = n.input(0), b = n.input(1);
  if (!a || !b)
    return failure();
  auto aShape = shapeOf(a), bShape = shapeOf(b);
  if (aShape.empty() || bShape.empty())
    return n.error() << "MatMul needs operands of rank at least 1";
  bool aVector = aShape.size() == 1, bVector = bShape.size() == 1;
  if (aVector)
    a = n.reshape(a, {1, aShape[0]});
  if (bVector)
    b = n.reshape(b, {bShape[0], 1});
  Value y = n.create<MatmulOp>({a, b});
  if (!y)
    return failure();
  SmallVector<int64_t> shape = shapeOf(y);
  if (bVector)
    shape.erase(shape.end() - 1);
  if (aVector)
    shape.erase(shape.end() - (bVector ? 1 : 2));
  return n.setOutput(0, n.reshape(y, shape));
}

static LogicalResult importGemm(NodeImporter &n) {
  auto alpha = n.floatAttr("alpha", 1.0), beta = n.floatAttr("beta", 1.0);
  auto transA = n.intAttr("transA", 0), transB = n.intAttr("transB", 0);
  if (!alpha || !beta || !transA || !transB)
    return failure();
  Value a = n.input(0), b = n.input(1);
  if (!a || !b)
    return failure();
  Type element = cast<RankedTensorType>(a.getType()).getElementType();
  Value y = n.create<MatmulOp>(
      {a, b}, {n.named("transpose_a", n.b.getBoolAttr(*transA != 0)),
               n.named("transpose_b", n.b.getBoolAttr(*transB != 0))});
  if (*alpha != 1.0)
    y = n.create<MulOp>({y, n.scalar(*alpha, element)});
  if (n.hasInput(2)) {
    Value c = n.input(2);
    if (*beta != 1.0)
      c = n.create<MulOp>({c, n.scalar(*beta, element)});
    y = n.create<AddOp>({y, c});
  }
  return n.setOutput(0, y);
}

void addContractionOps(OpTable &t) {
  t["MatMul"] = {{}, importMatMul};
  t["Gemm"] = {{"alpha", "beta", "transA", "transB"}, importGemm};
}

} // namespace dlc::onnximport
