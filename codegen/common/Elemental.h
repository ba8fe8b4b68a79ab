//===- Elemental.h - values at a multi-index, as C expressions --*- C++ -*-===//
//
// XLA's elemental emitter for C-like source: given a value of a kernel and
// the C expressions of a multi-index into it, emit the statements that
// compute that element from elements of the values it reads, down to
// buffers (kernel arguments and stage results). Element-wise ops, layout
// ops (reshape, transpose, broadcast), slice, pad, concat, gather,
// embedding, iota and constants are elemental; reading any other value
// requires it to be in a buffer.
//
// Each computed element becomes a `const` local named vN, computed once per
// (value, index) in the current scope; pad and concat open nested scopes so
// that no element is loaded outside its tensor.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_COMMON_ELEMENTAL_H
#define DLC_CODEGEN_COMMON_ELEMENTAL_H

#include "codegen/common/CTarget.h"
#include "codegen/common/CodeWriter.h"
#include "codegen/common/DataChecks.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <string>
#include <vector>

namespace dlc::codegen {

/// A value that lives in memory, row-major and contiguous.
struct Buffer {
  std::string ptr; ///< a C pointer of the storage type
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// For a buffer holding only this call's rows: the flat index (a C
  /// expression) of its first element. Empty for a whole tensor.
  std::string base;
};

using Index = std::vector<std::string>;

/// The C expression of the flat row-major index of `index` in `shape`.
std::string flatIndex(const std::vector<int64_t> &shape, const Index &index);
/// The C expression of element `flat` of `buffer` (base subtracted).
std::string elementAt(const Buffer &buffer, const std::string &flat);

class ElementalEmitter {
public:
  /// Gathers, embeddings and integer div and pow check what they read
  /// (DataChecks.h) and register their checks in `checks`.
  ElementalEmitter(const CTarget &target, CodeWriter &out,
                   const llvm::DenseMap<mlir::Value, Buffer> &buffers,
                   std::string &statics, DataChecks &checks)
      : target(target), out(out), buffers(buffers), statics(statics),
        checks(checks) {}

  /// Emits what computes `value` at `index`; returns a C expression of its
  /// compute type (a local or a literal).
  std::string emit(mlir::Value value, const Index &index);

  /// Values computed inside a scope are forgotten when it closes.
  void pushScope() { memo.emplace_back(); }
  void popScope() { memo.pop_back(); }

private:
  std::string compute(mlir::Value value, const Index &index);
  std::string operandAt(mlir::Value operand, mlir::Value result,
                        const Index &index);
  std::string cast(const std::string &x, DType from, DType to);
  std::string define(DType dtype, const std::string &expr,
                     mlir::Operation *op);
  std::string defineIndex(const std::string &expr);
  std::string comment(mlir::Operation *op);

  const CTarget &target;
  CodeWriter &out;
  const llvm::DenseMap<mlir::Value, Buffer> &buffers;
  std::string &statics;
  DataChecks &checks;
  std::vector<std::map<std::pair<void *, std::string>, std::string>> memo{1};
};

/// The dtype of a tensor value's elements.
DType elementDType(mlir::Value tensor);
/// A ranked tensor value's shape.
std::vector<int64_t> shapeOf(mlir::Value tensor);
/// `shape` as "[2, 3]".
std::string shapeText(llvm::ArrayRef<int64_t> shape);
/// "dlc.add at model.dlg:7:12" for comments.
std::string describeOp(mlir::Operation *op);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_COMMON_ELEMENTAL_H
