//===- DlcInterfaces.cpp - helpers of the op interfaces -------------------===//
//
// The generated interface definitions and the few functions every pass
// uses to read them. The per-op answers live with each op family.
//
//===----------------------------------------------------------------------===//

#include "ir/DlcDialect.h"

using namespace mlir;

namespace dlc {

#include "ir/DlcInterfaces.cpp.inc"

StringRef stringifyKernelRole(KernelRole role) {
  switch (role) {
  case KernelRole::Source: return "source";
  case KernelRole::Elementwise: return "elementwise";
  case KernelRole::Layout: return "layout";
  case KernelRole::DataMovement: return "data_movement";
  case KernelRole::Contraction: return "contraction";
  case KernelRole::Convolution: return "convolution";
  case KernelRole::Pooling: return "pooling";
  case KernelRole::Row: return "row";
  case KernelRole::Loss: return "loss";
  case KernelRole::Structure: return "structure";
  case KernelRole::Collective: return "collective";
  }
  llvm_unreachable("unknown kernel role");
}

bool isStageRole(KernelRole role) {
  switch (role) {
  case KernelRole::Contraction:
  case KernelRole::Convolution:
  case KernelRole::Pooling:
  case KernelRole::Row:
  case KernelRole::Loss:
    return true;
  default:
    return false;
  }
}

bool computesValues(KernelRole role) {
  return role == KernelRole::Elementwise || isStageRole(role);
}

KernelRole kernelRoleOf(Operation *op) {
  if (auto kernel = dyn_cast<KernelOpInterface>(op))
    return kernel.getKernelRole();
  return KernelRole::Structure;
}

int64_t tensorBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  unsigned bits = tensor.getElementTypeBitWidth();
  return tensor.getNumElements() * (bits < 8 ? 1 : bits / 8);
}

int64_t tensorBytes(TypeRange types) {
  int64_t bytes = 0;
  for (Type type : types)
    bytes += tensorBytes(type);
  return bytes;
}

int64_t numElementsOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getNumElements();
}

bool isElementAligned(Operation *op) {
  return op->hasTrait<OpTrait::ElementAligned>();
}

StringRef productPrecision(Operation *op) {
  if (!op->hasTrait<OpTrait::ReducedPrecision>() || op->getNumOperands() == 0)
    return "";
  Type element = cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
  if (element.isBF16())
    return "bf16";
  if (element.isF16())
    return "f16";
  if (!element.isF32())
    return "";
  auto allowed = op->getAttrOfType<ContractionPrecisionAttr>("precision");
  return allowed && allowed.getValue() == ContractionPrecision::tensorfloat32 ? "tf32" : "f32";
}

} // namespace dlc
