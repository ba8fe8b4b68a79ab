//===- Precision.cpp - contractions in tf32, bf16 or f16 ------------------===//
//
// `dlc-precision`: the IR half of `--precision` (the kernels' half is the
// tensor-core GEMM dlc-tile schedules for it, codegen/cuda/MmaMatmul.cpp).
// The policy is a fact of each op (Dlc_ReducedPrecision: matmul and conv2d),
// not a list here: those ops' products run in the requested precision with
// f32 accumulation; everything else stays f32, as PyTorch's autocast and
// XLA's default precision do. Casts around a bf16/f16 op are ordinary
// element-wise ops, so fusion folds them into the kernels that read them
// and autodiff (before this pass) never sees them: a train step's
// parameters, gradients and optimizer state stay f32.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace dlc {
#define GEN_PASS_DEF_DLCPRECISION
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

namespace {

struct PrecisionPass : public dlc::impl::DlcPrecisionBase<PrecisionPass> {
  using DlcPrecisionBase::DlcPrecisionBase;
  void runOnOperation() override;
};

} // namespace

StringRef dlc::modulePrecision(Operation *op) {
  auto module = isa<ModuleOp>(op) ? cast<ModuleOp>(op) : op->getParentOfType<ModuleOp>();
  if (auto mode = module ? module->getAttrOfType<StringAttr>("dlc.precision") : nullptr)
    return mode.getValue();
  return "f32";
}

/// The mode asked for: the pass option, else the module's `dlc.precision`.
static std::string requestedMode(func::FuncOp func, StringRef option) {
  return option.empty() ? modulePrecision(func).str() : option.str();
}

static bool allF32(TypeRange types) {
  return llvm::all_of(types, [](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    return tensor && tensor.getElementType().isF32();
  });
}

static Value castTo(OpBuilder &b, Location loc, Value v, Type element) {
  auto type = cast<RankedTensorType>(v.getType());
  return b.create<CastOp>(loc, type.clone(element), v);
}

void PrecisionPass::runOnOperation() {
  func::FuncOp func = getOperation();
  std::string mode = requestedMode(func, this->mode);
  if (mode == "f32")
    return;
  OpBuilder b(&getContext());
  Type low = mode == "bf16"   ? Type(b.getBF16Type())
             : mode == "f16"  ? Type(b.getF16Type())
                              : Type();
  if (mode != "tf32" && !low) {
    func.emitError("dlc-precision: mode must be f32, tf32, bf16 or f16, not '") << mode << "'";
    return signalPassFailure();
  }
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    // Fused kernels are past the point where a dtype may change.
    if (op->getParentOfType<FusionOp>())
      return;
    if (op->hasTrait<::dlc::OpTrait::ReducedPrecision>() && allF32(op->getOperandTypes()) &&
        allF32(op->getResultTypes()))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    if (!low) {
      op->setAttr("precision", ContractionPrecisionAttr::get(&getContext(),
                                                             ContractionPrecision::tensorfloat32));
      continue;
    }
    b.setInsertionPoint(op);
    for (OpOperand &operand : op->getOpOperands())
      operand.set(castTo(b, op->getLoc(), operand.get(), low));
    b.setInsertionPointAfter(op);
    for (Value result : op->getResults()) {
      auto type = cast<RankedTensorType>(result.getType());
      result.setType(type.clone(low));
      Value back = castTo(b, op->getLoc(), result, type.getElementType());
      result.replaceAllUsesExcept(back, back.getDefiningOp());
    }
  }
}
