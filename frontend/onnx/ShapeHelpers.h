//===- ShapeHelpers.h - helpers the data-movement ops share -----*- C++ -*-===//
//
// Internal to frontend/onnx. Host-side folding of values known at import
// time (element counts, row-major strides, elements remapped by index) and
// `dlc.slice` building, shared by the reshaping, slicing and indexing ops.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_ONNX_SHAPEHELPERS_H
#define DLC_FRONTEND_ONNX_SHAPEHELPERS_H

#include "frontend/onnx/NodeImporter.h"

#include <functional>

namespace dlc::onnximport {

/// The number of elements of `shape`.
int64_t product(llvm::ArrayRef<int64_t> shape);

/// A constant of `shape` whose element at each index is `in`'s element at
/// `source(index)` (a flat index into `in`).
Constant remap(const Constant &in, llvm::ArrayRef<int64_t> shape,
               const std::function<int64_t(llvm::ArrayRef<int64_t>)> &source);

/// The row-major strides of `shape`, in elements.
llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);

/// x[starts:limits:strides] (positive strides) as a dlc.slice.
mlir::Value slice(NodeImporter &n, mlir::Value x,
                  llvm::ArrayRef<int64_t> starts,
                  llvm::ArrayRef<int64_t> limits,
                  llvm::ArrayRef<int64_t> strides);

} // namespace dlc::onnximport

#endif // DLC_FRONTEND_ONNX_SHAPEHELPERS_H
