//===- DlcInterfaces.h - what passes ask of a dlc op ------------*- C++ -*-===//
//
// The C++ side of ir/DlcInterfaces.td: the enums its interfaces answer with,
// the traits that supply the answers, and the generated interfaces.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_IR_DLCINTERFACES_H
#define DLC_IR_DLCINTERFACES_H

#include "ir/ShardingRule.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace dlc {

class VjpBuilder; // ir/Vjp.h

/// The part an op plays in a kernel (KernelOpInterface).
enum class KernelRole {
  Source,       ///< names data: param, constant
  Elementwise,  ///< a scalar function per element (and iota)
  Layout,       ///< an index remap of one operand: reshape, transpose, broadcast_to
  DataMovement, ///< an index remap that selects: slice, pad, concat, gather, embedding
  Contraction,  ///< matmul
  Convolution,  ///< conv2d
  Pooling,      ///< max/avg pooling windows
  Row,          ///< reductions and normalisations over rows (RowOpInterface)
  Loss,         ///< a whole batch to a loss value
  Structure,    ///< fusion regions and their terminator
  Collective,   ///< communication between the ranks of a mesh (all_reduce, ...)
};

/// "elementwise", "data_movement", ... (also the `kind` of a one-op kernel).
llvm::StringRef stringifyKernelRole(KernelRole role);

/// Stages are computed whole (loop nests or library calls into scratch);
/// the other roles are elemental: inlined where their elements are read.
bool isStageRole(KernelRole role);

/// Roles whose ops compute values (and so count FLOPs).
bool computesValues(KernelRole role);

/// How the elements of a row combine (ReduceOpInterface).
enum class ReduceKind { Sum, Mean, Max, Min, Prod };

/// The role of any op: a dlc op's answer, Structure for other dialects'
/// ops (func.return, ...).
KernelRole kernelRoleOf(mlir::Operation *op);
/// The collective a top-level op of a planned function is (alone, or alone
/// in a fusion of kind "collective"), or null: the runtime executes it
/// between kernels; the cost model times it on the link.
mlir::Operation *collectiveInKernel(mlir::Operation *kernel);

/// Bytes of a ranked tensor type's elements (an i1 element takes one
/// byte), and their sum over several types.
int64_t tensorBytes(mlir::Type type);
int64_t tensorBytes(mlir::TypeRange types);
/// Elements of a ranked tensor value.
int64_t numElementsOf(mlir::Value value);

namespace OpTrait {

#define DLC_ROLE_TRAIT(NAME)                                                   \
  template <typename ConcreteType>                                             \
  class NAME##Role                                                             \
      : public mlir::OpTrait::TraitBase<ConcreteType, NAME##Role> {            \
  public:                                                                      \
    static KernelRole getKernelRole() { return KernelRole::NAME; }             \
  };
DLC_ROLE_TRAIT(Source)
DLC_ROLE_TRAIT(Elementwise)
DLC_ROLE_TRAIT(Layout)
DLC_ROLE_TRAIT(DataMovement)
DLC_ROLE_TRAIT(Contraction)
DLC_ROLE_TRAIT(Convolution)
DLC_ROLE_TRAIT(Pooling)
DLC_ROLE_TRAIT(Row)
DLC_ROLE_TRAIT(Loss)
DLC_ROLE_TRAIT(Structure)
DLC_ROLE_TRAIT(Collective)
#undef DLC_ROLE_TRAIT

/// `N` FLOPs per element of the first result.
template <int64_t N>
struct FlopsPerElement {
  template <typename ConcreteType>
  class Impl : public mlir::OpTrait::TraitBase<ConcreteType, Impl> {
  public:
    int64_t getFlops() { return N * numElementsOf(this->getOperation()->getResult(0)); }
  };
};

/// `N` FLOPs per element of the first operand.
template <int64_t N>
struct FlopsPerInputElement {
  template <typename ConcreteType>
  class Impl : public mlir::OpTrait::TraitBase<ConcreteType, Impl> {
  public:
    int64_t getFlops() { return N * numElementsOf(this->getOperation()->getOperand(0)); }
  };
};

template <typename ConcreteType>
class NoFlops : public mlir::OpTrait::TraitBase<ConcreteType, NoFlops> {
public:
  int64_t getFlops() { return 0; }
};

/// Gradients stop here: every operand gets none (Dlc_ZeroDerivative).
template <typename ConcreteType>
class ZeroDerivative
    : public mlir::OpTrait::TraitBase<ConcreteType, ZeroDerivative> {
public:
  mlir::LogicalResult buildVjp(VjpBuilder &, llvm::ArrayRef<mlir::Value>,
                               llvm::SmallVectorImpl<mlir::Value> &grads) {
    grads.assign(this->getOperation()->getNumOperands(), mlir::Value());
    return mlir::success();
  }
};

/// No derivative: reaching the op is an error (Dlc_NoDerivative).
template <typename ConcreteType>
class NoDerivative
    : public mlir::OpTrait::TraitBase<ConcreteType, NoDerivative> {
public:
  mlir::LogicalResult buildVjp(VjpBuilder &, llvm::ArrayRef<mlir::Value>,
                               llvm::SmallVectorImpl<mlir::Value> &) {
    return this->getOperation()->emitOpError(
        "has no derivative, but the loss depends on its result");
  }
};

/// Marker: the op defines `buildVjp` itself (Dlc_VjpRule).
template <typename ConcreteType>
class VjpRule : public mlir::OpTrait::TraitBase<ConcreteType, VjpRule> {};

/// Marker: the op defines `getFlops()` itself (Dlc_CustomFlops).
template <typename ConcreteType>
class CustomFlops : public mlir::OpTrait::TraitBase<ConcreteType, CustomFlops> {};

/// Marker: see Dlc_ElementAligned in DlcInterfaces.td.
template <typename ConcreteType>
class ElementAligned
    : public mlir::OpTrait::TraitBase<ConcreteType, ElementAligned> {};

/// Marker: see Dlc_ReducedPrecision in DlcInterfaces.td.
template <typename ConcreteType>
class ReducedPrecision
    : public mlir::OpTrait::TraitBase<ConcreteType, ReducedPrecision> {};

} // namespace OpTrait

/// True for ops whose result may take the buffer of an operand with as many
/// elements (Dlc_ElementAligned).
bool isElementAligned(mlir::Operation *op);

/// The precision a Dlc_ReducedPrecision op's products run at: "bf16" or
/// "f16" for operands of that type, "tf32" for f32 operands its `precision`
/// attribute lets round to TF32, "f32" for exact f32; empty for other ops
/// and dtypes. Tensor-core schedules and the cost model both read it.
llvm::StringRef productPrecision(mlir::Operation *op);

} // namespace dlc

#include "ir/DlcInterfaces.h.inc"

#endif // DLC_IR_DLCINTERFACES_H
