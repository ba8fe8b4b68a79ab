//===- TensorConversion.h - oracle tensors to and from array files -*- C++ -*-===//
//
// Weight files and user inputs arrive as weights::Array (raw little-endian
// bytes of some file dtype); the oracle computes on Tensor (doubles).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_ORACLE_TENSORCONVERSION_H
#define DLC_ORACLE_TENSORCONVERSION_H

#include "frontend/weights/ArrayFile.h"
#include "oracle/kernels/Tensor.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

namespace dlc::oracle {

/// The file element type that stores `dtype` exactly (i1 as bool).
weights::ElementType fileTypeOf(DType dtype);
/// The dtype a file element type maps to, if dlc has one.
std::optional<DType> dtypeOfFile(weights::ElementType type);

/// `array` as a tensor of `dtype` and `shape`; emits an error at `where`
/// naming `what` when the file's dtype or shape differ.
mlir::FailureOr<Tensor> fromArray(const weights::Array &array, DType dtype,
                                  const std::vector<int64_t> &shape,
                                  const std::string &what,
                                  mlir::Operation *where);

/// `tensor` as an array of its own dtype.
weights::Array toArray(const Tensor &tensor);

} // namespace dlc::oracle

#endif // DLC_ORACLE_TENSORCONVERSION_H
