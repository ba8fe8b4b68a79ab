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
                     StringRef, StringRef mma, DenseI64ArrayAttr warpTile,
                     int64_t splitK) {
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
  if (splitK < 1 || (splitK > 1 && (strategy != KernelStrategy::matmul || !mma.empty())))
    return emitError() << "schedule split_k must be at least 1, and above 1 only for a SIMT "
                          "matmul";
  if (strategy != KernelStrategy::matmul)
    return success();
  if (failed(dims(tile, "tile", 3)))
    return failure();
  if (mma.empty())
    return dims(threadTile, "thread_tile", 2);
  // Tensor cores: m16n8k<K> instructions tile each warp's tile.
  int64_t k = mma.starts_with("m16n8k8.") ? 8 : mma.starts_with("m16n8k16.") ? 16 : 0;
  StringRef type = mma.substr(mma.find('.') + 1);
  if (!k || (type == "tf32") != (k == 8) ||
      (type != "tf32" && type != "bf16" && type != "f16"))
    return emitError() << "schedule mma '" << mma
                       << "' is not m16n8k8.tf32, m16n8k16.bf16 or m16n8k16.f16";
  if (failed(dims(warpTile, "warp_tile", 2)))
    return failure();
  ArrayRef<int64_t> t = tile.asArrayRef(), w = warpTile.asArrayRef();
  if (w[0] % 16 || w[1] % 8 || t[0] % w[0] || t[1] % w[1] || t[2] % k)
    return emitError() << "schedule warp_tile must be multiples of 16 x 8 dividing the "
                          "tile, and the tile's depth a multiple of "
                       << k;
  if (block.asArrayRef()[0] != (t[0] / w[0]) * (t[1] / w[1]) * 32)
    return emitError() << "schedule block must be 32 threads per warp tile";
  return success();
}
