//===- Vjp.h - what a derivative rule builds with ---------------*- C++ -*-===//
//
// The builder the ops' vector-Jacobian products (DifferentiableOpInterface)
// write their gradient ops with: each op created with its result type from
// its own shape rule, at one location (the op being differentiated), and the
// shape arithmetic every rule needs (summing a broadcast gradient back to an
// operand's shape). A rule that would build an ill-typed op is a bug in the
// rule: the builder reports it at the location and the pass fails.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_IR_VJP_H
#define DLC_IR_VJP_H

#include "ir/DlcDialect.h"

#include "mlir/IR/Builders.h"

namespace dlc {

class VjpBuilder {
public:
  VjpBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : b(builder), loc(loc) {}

  mlir::OpBuilder &builder() { return b; }
  mlir::Location location() const { return loc; }
  void setLocation(mlir::Location l) { loc = l; }
  /// True once a rule built an op its shape rule rejected.
  bool failed() const { return hadError; }

  /// An op whose result type its shape inference computes; null (and the
  /// builder failed) when it rejects the operands.
  template <typename OpTy>
  mlir::Value create(mlir::ValueRange operands,
                     llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    return create(OpTy::getOperationName(), operands, attrs);
  }
  mlir::Value create(llvm::StringRef opName, mlir::ValueRange operands,
                     llvm::ArrayRef<mlir::NamedAttribute> attrs = {});
  /// An op with a given result type (reshape, broadcast_to, cast).
  mlir::Value createTyped(llvm::StringRef opName, mlir::Type type,
                          mlir::ValueRange operands,
                          llvm::ArrayRef<mlir::NamedAttribute> attrs = {});

  /// A rank-0 constant of `elementType`; `like(x, v)` takes x's.
  mlir::Value scalar(double value, mlir::Type elementType);
  mlir::Value like(mlir::Value x, double value);

  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Value a, mlir::Value b);
  mlir::Value neg(mlir::Value a);
  mlir::Value exp(mlir::Value a);
  /// `compare` with one of eq, ne, lt, le, gt, ge.
  mlir::Value compare(ComparePredicate predicate, mlir::Value a, mlir::Value b);
  mlir::Value select(mlir::Value cond, mlir::Value onTrue, mlir::Value onFalse);
  mlir::Value cast(mlir::Value x, mlir::Type elementType);

  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value broadcastTo(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm);
  mlir::Value matmul(mlir::Value a, mlir::Value b, bool transposeA,
                     bool transposeB);
  mlir::Value reduceSum(mlir::Value x, llvm::ArrayRef<int64_t> axes,
                        bool keepdims);
  mlir::Value reduceMean(mlir::Value x, llvm::ArrayRef<int64_t> axes,
                         bool keepdims);

  mlir::Value slice(mlir::Value x, llvm::ArrayRef<int64_t> starts,
                    llvm::ArrayRef<int64_t> limits,
                    llvm::ArrayRef<int64_t> strides);
  mlir::Value pad(mlir::Value x, llvm::ArrayRef<int64_t> low,
                  llvm::ArrayRef<int64_t> high, double value = 0);
  mlir::Value concat(mlir::ValueRange inputs, int64_t axis);
  mlir::Value gather(mlir::Value x, mlir::Value indices, int64_t axis);
  /// An iota of `shape` along `axis`, of `elementType`.
  mlir::Value iota(llvm::ArrayRef<int64_t> shape, int64_t axis,
                   mlir::Type elementType);
  /// A constant i64 vector.
  mlir::Value indices(llvm::ArrayRef<int64_t> values);
  /// The i1 constant `value` as a rank-0 tensor.
  mlir::Value boolean(bool value);

  /// The gradient of a strided slice: `grad` (the slice's shape) placed at
  /// `starts + i * strides` in a zero tensor of `full` shape.
  mlir::Value unslice(mlir::Value grad, llvm::ArrayRef<int64_t> full,
                      llvm::ArrayRef<int64_t> starts,
                      llvm::ArrayRef<int64_t> strides);

  /// `grad` (of the broadcast shape of an op) summed over the dimensions
  /// NumPy broadcasting stretched, back to `type`'s shape.
  mlir::Value sumToShape(mlir::Value grad, mlir::Type type);
  /// `x` of a reduced shape (its `axes` of `full` kept as 1 or dropped)
  /// broadcast back to `full`.
  mlir::Value unreduce(mlir::Value x, llvm::ArrayRef<int64_t> full,
                       llvm::ArrayRef<int64_t> axes);

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
  bool hadError = false;
};

/// The shape of a ranked tensor value.
llvm::ArrayRef<int64_t> shapeOfValue(mlir::Value v);

} // namespace dlc

#endif // DLC_IR_VJP_H
