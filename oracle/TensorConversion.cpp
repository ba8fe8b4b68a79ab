//===- TensorConversion.cpp - oracle tensors to and from array files ------===//

#include "oracle/TensorConversion.h"

#include "mlir/IR/Diagnostics.h"

namespace dlc::oracle {

weights::ElementType fileTypeOf(DType dtype) {
  switch (dtype) {
  case DType::F64: return weights::ElementType::F64;
  case DType::F32: return weights::ElementType::F32;
  case DType::F16: return weights::ElementType::F16;
  case DType::BF16: return weights::ElementType::BF16;
  case DType::I64: return weights::ElementType::I64;
  case DType::I32: return weights::ElementType::I32;
  case DType::I1: return weights::ElementType::Bool;
  }
  return weights::ElementType::F32;
}

std::optional<DType> dtypeOfFile(weights::ElementType type) {
  switch (type) {
  case weights::ElementType::F64: return DType::F64;
  case weights::ElementType::F32: return DType::F32;
  case weights::ElementType::F16: return DType::F16;
  case weights::ElementType::BF16: return DType::BF16;
  case weights::ElementType::I64: return DType::I64;
  case weights::ElementType::I32: return DType::I32;
  case weights::ElementType::Bool: return DType::I1;
  default: return std::nullopt;
  }
}

mlir::FailureOr<Tensor> fromArray(const weights::Array &array, DType dtype,
                                  const std::vector<int64_t> &shape,
                                  const std::string &what,
                                  mlir::Operation *where) {
  std::optional<DType> fileDtype = dtypeOfFile(array.type);
  if (fileDtype != dtype || array.shape != shape)
    return where->emitError()
           << what << ": the file holds " << weights::elementTypeName(array.type)
           << formatShape(array.shape) << ", expected " << dtypeName(dtype)
           << formatShape(shape);
  return Tensor::fromValues(dtype, shape, array.toDoubles());
}

weights::Array toArray(const Tensor &tensor) {
  return weights::Array::fromDoubles(fileTypeOf(tensor.dtype), tensor.shape,
                                     tensor.data);
}

} // namespace dlc::oracle
