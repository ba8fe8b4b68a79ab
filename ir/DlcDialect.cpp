//===- DlcDialect.cpp - the dlc dialect's registration --------------------===//

#include "ir/DlcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dlc;

#include "ir/DlcDialect.cpp.inc"
#include "ir/DlcEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/DlcAttrs.cpp.inc"

void DlcDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ir/DlcAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "ir/DlcOps.cpp.inc"
      >();
}

Operation *DlcDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}

/// What the CUDA code generator relies on: three launch dimensions of at
/// least 1 and, for a matmul, its two tiles.
LogicalResult
ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     StringRef arch, KernelStrategy strategy, KernelImpl,
                     DenseI64ArrayAttr block, DenseI64ArrayAttr grid,
                     int64_t vector, int64_t, int64_t, int64_t, int64_t,
                     int64_t, StringRef, int64_t, StringRef,
                     DenseI64ArrayAttr tile, DenseI64ArrayAttr threadTile,
                     StringRef) {
  auto dims = [&](DenseI64ArrayAttr attr, StringRef name,
                  size_t size) -> LogicalResult {
    if (!attr || attr.size() != static_cast<int64_t>(size) ||
        llvm::any_of(attr.asArrayRef(), [](int64_t d) { return d < 1; }))
      return emitError() << "schedule " << name << " needs " << size
                         << " values of at least 1";
    return success();
  };
  if (!arch.starts_with("sm_"))
    return emitError() << "schedule arch '" << arch << "' is not sm_XY";
  if (failed(dims(block, "block", 3)) || failed(dims(grid, "grid", 3)))
    return failure();
  if (vector < 1)
    return emitError() << "schedule vector must be at least 1";
  if (strategy == KernelStrategy::matmul &&
      (failed(dims(tile, "tile", 3)) ||
       failed(dims(threadTile, "thread_tile", 2))))
    return failure();
  return success();
}
