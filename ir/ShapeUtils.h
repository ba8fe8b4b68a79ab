//===- ShapeUtils.h - shape rules shared by the dlc ops ---------*- C++ -*-===//
//
// Helpers for the ops' shape inference: broadcasting, axis normalisation,
// and the wording of shape errors. Types print in the `.dlg` notation
// (`f32[64, 784]`) because that is what users wrote.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_IR_SHAPEUTILS_H
#define DLC_IR_SHAPEUTILS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"

#include <initializer_list>
#include <optional>
#include <string>

namespace dlc {

/// "f32", "bf16", "i1", ...
std::string formatElementType(mlir::Type type);
/// `f32[64, 784]` for a ranked tensor; `f32[]` for a scalar tensor.
std::string formatType(mlir::Type type);
/// `[64, 784]`.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Why a tensor of `shape` cannot exist, as "has ...": a negative dimension
/// (a size computed past 2^63 wraps there) or more than 2^48 elements (more
/// than any device holds; the element count is computed without wrapping).
/// Empty when the shape is fine.
std::string shapeSizeProblem(llvm::ArrayRef<int64_t> shape);

/// The product of non-negative counts, and their sum, saturated at
/// INT64_MAX: a FLOP or byte count past 2^63 must not wrap to 0 or a
/// negative number.
int64_t saturatingProduct(std::initializer_list<int64_t> factors);
int64_t saturatingSum(int64_t a, int64_t b);

/// The NumPy broadcast of two shapes, or nullopt when they are incompatible.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// `axis` in [-rank, rank) mapped to [0, rank); nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// Emits "'<opName>' op <message...>" at `loc` (when inference runs with a
/// location, as in verification and in the frontends) and returns failure.
template <typename... Args>
mlir::LogicalResult opError(std::optional<mlir::Location> loc,
                            llvm::StringRef opName, Args &&...args) {
  return mlir::emitOptionalError(loc, "'", opName, "' op ",
                                 std::forward<Args>(args)...);
}

/// The shape rule of a unary element-wise op: the result has the operand's
/// type; `floatOnly` ops reject integer operands, and none takes i1.
mlir::LogicalResult inferUnaryType(std::optional<mlir::Location> loc,
                                   llvm::StringRef opName, mlir::Value x,
                                   bool floatOnly,
                                   llvm::SmallVectorImpl<mlir::Type> &types);

/// Fails with "'op' op needs attribute 'name'" for the first null attribute:
/// inference runs while parsing, before ODS checks that required attributes
/// are present.
mlir::LogicalResult
requireAttrs(std::optional<mlir::Location> loc, llvm::StringRef opName,
             std::initializer_list<std::pair<llvm::StringRef, mlir::Attribute>>
                 attrs);

/// The value of an optional integer or float attribute, or `fallback` when
/// it is absent: inference runs while parsing, before ODS fills in default
/// values, so default-valued attributes must be read through these.
int64_t axisOr(mlir::IntegerAttr attr, int64_t fallback);
double floatOr(mlir::FloatAttr attr, double fallback);
bool boolOr(mlir::BoolAttr attr, bool fallback);

/// The ranked tensor type of `value`, which every dlc operand has once the
/// ODS constraints hold; inference may run before they are checked.
mlir::RankedTensorType getRankedType(mlir::Value value);

} // namespace dlc

#endif // DLC_IR_SHAPEUTILS_H
