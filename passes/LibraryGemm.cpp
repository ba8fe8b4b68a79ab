//===- LibraryGemm.cpp - kernels a vendor GEMM library computes -----------===//

#include "passes/LibraryGemm.h"

#include "ir/DlcDialect.h"
#include "ir/DlcInterfaces.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace dlc;

std::string LibraryGemm::epilogue() const {
  std::string text;
  auto add = [&](const char *part) { text += text.empty() ? part : std::string(" + ") + part; };
  if (bias >= 0)
    add("bias");
  if (c >= 0)
    add("residual");
  if (activation == Activation::relu)
    add("ReLU");
  if (activation == Activation::geluTanh)
    add("GELU");
  return text.empty() ? "no epilogue" : text;
}

static bool isLibraryFloat(Type t) { return t.isF32() || t.isBF16() || t.isF16(); }

static RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }

std::optional<LibraryGemm> dlc::matchLibraryGemm(Operation *kernel) {
  // The kernel's arguments as its body sees them, its ops, its result.
  SmallVector<Value> args;
  SmallVector<Operation *> body;
  Value yielded;
  if (kernel->getNumResults() != 1)
    return std::nullopt;
  if (auto fusion = dyn_cast<FusionOp>(kernel)) {
    Block &block = fusion.getBody().front();
    args.assign(block.args_begin(), block.args_end());
    for (Operation &op : block.without_terminator())
      body.push_back(&op);
    yielded = block.getTerminator()->getOperand(0);
  } else {
    args.assign(kernel->operand_begin(), kernel->operand_end());
    body.push_back(kernel);
    yielded = kernel->getResult(0);
  }
  auto argIndex = [&](Value v) -> int {
    auto it = llvm::find(args, v);
    return it == args.end() ? -1 : static_cast<int>(it - args.begin());
  };

  MatmulOp mm;
  for (Operation *op : body)
    if (auto m = dyn_cast<MatmulOp>(op)) {
      if (mm)
        return std::nullopt;
      mm = m;
    }
  if (!mm)
    return std::nullopt;
  LibraryGemm g;
  int a = argIndex(mm.getLhs()), b = argIndex(mm.getRhs());
  Type element = tensorOf(mm.getLhs()).getElementType();
  if (a < 0 || b < 0 || element != tensorOf(mm.getRhs()).getElementType() ||
      !isLibraryFloat(element))
    return std::nullopt;
  g.a = a, g.b = b;
  g.operandType = element;
  g.transposeA = mm.getTransposeA(), g.transposeB = mm.getTransposeB();
  g.tf32 = productPrecision(mm) == "tf32";

  // Batches: equal on both sides (strided), or folded into m (a 2-D rhs,
  // an untransposed lhs: its rows are contiguous).
  ArrayRef<int64_t> lhs = tensorOf(mm.getLhs()).getShape(),
                    rhs = tensorOf(mm.getRhs()).getShape(),
                    out = tensorOf(mm.getResult()).getShape();
  if (lhs.size() < 2 || rhs.size() < 2 || out.size() < 2)
    return std::nullopt;
  g.n = out.back();
  g.k = g.transposeA ? lhs[lhs.size() - 2] : lhs.back();
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < out.size(); ++i)
    rows *= out[i];
  if (rhs.size() == 2) {
    if (lhs.size() > 2 && g.transposeA)
      return std::nullopt;
    g.m = rows;
  } else {
    if (lhs.size() != rhs.size() || lhs.drop_back(2) != rhs.drop_back(2) ||
        out.drop_back(2) != lhs.drop_back(2))
      return std::nullopt;
    g.m = out[out.size() - 2];
    g.batch = rows / g.m;
    g.strideA = g.m * g.k;
    g.strideB = g.k * g.n;
  }

  // The epilogue: a single-use chain from the product to the yield, in the
  // order cuBLASLt applies it: act(x + bias + C), casts anywhere.
  Value current = mm.getResult();
  SmallVector<Type> chainTypes;
  bool activated = false;
  while (current != yielded) {
    chainTypes.push_back(tensorOf(current).getElementType());
    if (!current.hasOneUse())
      return std::nullopt;
    Operation *user = *current.getUsers().begin();
    if (user->getNumResults() != 1 || tensorOf(user->getResult(0)).getShape() != out)
      return std::nullopt;
    if (auto cast = dyn_cast<CastOp>(user)) {
      if (!isLibraryFloat(tensorOf(cast.getResult()).getElementType()))
        return std::nullopt;
    } else if (auto add = dyn_cast<AddOp>(user)) {
      Value other = add.getLhs() == current ? add.getRhs() : add.getLhs();
      int index = argIndex(other);
      if (activated || other == current || index < 0)
        return std::nullopt;
      ArrayRef<int64_t> shape = tensorOf(other).getShape();
      if (shape.size() == 1 && shape[0] == g.n && g.bias < 0 && out.size() > 1) {
        g.bias = index;
        g.biasType = tensorOf(other).getElementType();
      } else if (shape == out && g.c < 0) {
        g.c = index;
      } else {
        return std::nullopt;
      }
    } else if (isa<ReluOp>(user) && !activated) {
      g.activation = LibraryGemm::Activation::relu;
      activated = true;
    } else if (auto gelu = dyn_cast<GeluOp>(user);
               gelu && !activated && gelu.getApproximation() == GeluApproximation::tanh) {
      g.activation = LibraryGemm::Activation::geluTanh;
      activated = true;
    } else {
      return std::nullopt;
    }
    current = user->getResult(0);
  }
  g.resultType = tensorOf(current).getElementType();
  if (!isLibraryFloat(g.resultType))
    return std::nullopt;
  // cuBLASLt rounds once, to the result's type. A graph that rounds the
  // product (or a sum) to a narrower type on the way asks for that
  // rounding — unless --precision made the narrow product (dlc-precision
  // marks the module): its contract is f32 accumulation, which this keeps.
  auto module = kernel->getParentOfType<ModuleOp>();
  bool precisionMode = module && module->hasAttr("dlc.precision");
  for (Type t : chainTypes)
    if (t != g.resultType && !t.isF32() && !precisionMode)
      return std::nullopt;
  // cuBLASLt's C and bias have D's type: an f32 bias on a bf16 result is
  // refused (CUBLAS_STATUS_INVALID_VALUE from its heuristic, on an H200).
  if (g.c >= 0 && tensorOf(args[g.c]).getElementType() != g.resultType)
    return std::nullopt;
  if (g.bias >= 0 && g.biasType != g.resultType)
    return std::nullopt;
  // The result may take only the residual's buffer (dlc.inplace).
  if (auto inplace = kernel->getAttrOfType<DenseI64ArrayAttr>("dlc.inplace"))
    for (int64_t operand : inplace.asArrayRef())
      if (operand >= 0 && operand != g.c)
        return std::nullopt;
  g.d = static_cast<unsigned>(kernel->getNumOperands());
  return g;
}
