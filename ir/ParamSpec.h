//===- ParamSpec.h - dlc.param initialisers as plain ParamSpecs --*- C++ -*-===//
//
// The MLIR side of parameter materialisation (support/ParamSpec.h): a
// dlc.param's `init` dictionary as a ParamSpec, elements attributes as host
// tensors, and the value of a parameter with its errors emitted at the op.
// The oracle, codegen and the driver all take parameter values from here,
// so they agree bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_IR_PARAMSPEC_H
#define DLC_IR_PARAMSPEC_H

#include "support/ParamSpec.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

namespace dlc {

class ParamOp;

/// The DType of a dlc element type (f64, f32, f16, bf16, i64, i32, i8, u8 or i1).
DType dtypeOf(mlir::Type elementType);

/// The elements of `attr` as a host tensor of its type: a DenseElementsAttr
/// through its values, a DenseResourceElementsAttr as its blob's bytes
/// (little-endian, i1 one byte each). Emits an error at `op` when the blob
/// is missing or has the wrong size.
mlir::FailureOr<HostTensor> hostTensorOf(mlir::ElementsAttr attr,
                                         mlir::Operation *op);

/// The op's initialiser; kind `data` carries its value's bytes.
mlir::FailureOr<ParamSpec> paramSpecOf(ParamOp op);
/// An initialiser dictionary (a dlc.param's `init`, or a state argument's
/// `dlc.init`); errors at `op`.
mlir::FailureOr<ParamSpec> paramSpecOf(mlir::DictionaryAttr init,
                                       mlir::Operation *op);

/// The parameter's value: its initialiser drawn, its weight file read and
/// checked against the declared type, or its data. Errors are emitted at
/// the op ("parameter 'w': ...").
mlir::FailureOr<HostTensor> paramValue(ParamOp op);
/// The value `init` gives a tensor of `type` named `name` (a parameter or a
/// state argument); errors at `op`.
mlir::FailureOr<HostTensor> initialValue(mlir::DictionaryAttr init,
                                         mlir::RankedTensorType type,
                                         llvm::StringRef name,
                                         mlir::Operation *op);

} // namespace dlc

#endif // DLC_IR_PARAMSPEC_H
