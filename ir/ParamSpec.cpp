//===- ParamSpec.cpp - dlc.param initialisers as plain ParamSpecs ---------===//

#include "ir/ParamSpec.h"

#include "ir/DlcDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringSwitch.h"

#include <cstring>

using namespace mlir;

namespace dlc {

DType dtypeOf(Type type) {
  if (type.isF64()) return DType::F64;
  if (type.isF32()) return DType::F32;
  if (type.isF16()) return DType::F16;
  if (type.isBF16()) return DType::BF16;
  if (type.isInteger(64)) return DType::I64;
  if (type.isInteger(32)) return DType::I32;
  if (type.isUnsignedInteger(8)) return DType::U8;
  if (type.isSignlessInteger(8)) return DType::I8;
  if (type.isInteger(1)) return DType::I1;
  llvm_unreachable("not a dlc element type");
}

/// The little-endian bytes of `attr`'s elements.
static FailureOr<std::vector<uint8_t>> elementBytes(ElementsAttr attr,
                                                    Operation *op) {
  auto type = cast<ShapedType>(attr.getType());
  Type element = type.getElementType();
  const size_t width = elementSize(dtypeOf(element));
  const size_t size = static_cast<size_t>(type.getNumElements()) * width;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    std::vector<uint8_t> bytes(size);
    uint8_t *p = bytes.data();
    auto put = [&](uint64_t word) {
      std::memcpy(p, &word, width); // the low bytes: little-endian host
      p += width;
    };
    if (isa<FloatType>(element)) {
      for (APFloat v : dense.getValues<APFloat>())
        put(v.bitcastToAPInt().getZExtValue());
    } else {
      bool isBool = element.isInteger(1);
      for (APInt v : dense.getValues<APInt>())
        put(isBool ? !v.isZero() : v.getZExtValue());
    }
    return bytes;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  AsmResourceBlob *blob = resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob)
    return op->emitError("parameter data is not a dense or resource elements "
                         "attribute with its blob present");
  ArrayRef<char> data = blob->getData();
  if (data.size() != size)
    return op->emitError("parameter data holds ")
           << data.size() << " bytes, " << size << " expected";
  return std::vector<uint8_t>(data.begin(), data.end());
}

FailureOr<HostTensor> hostTensorOf(ElementsAttr attr, Operation *op) {
  auto bytes = elementBytes(attr, op);
  if (failed(bytes))
    return failure();
  auto type = cast<ShapedType>(attr.getType());
  return HostTensor(dtypeOf(type.getElementType()),
                    {type.getShape().begin(), type.getShape().end()},
                    std::move(*bytes));
}

static double numberOr(DictionaryAttr dict, StringRef key, double fallback) {
  Attribute value = dict.get(key);
  if (auto f = dyn_cast_or_null<FloatAttr>(value))
    return f.getValueAsDouble();
  if (auto i = dyn_cast_or_null<IntegerAttr>(value))
    return static_cast<double>(i.getInt());
  return fallback;
}

FailureOr<ParamSpec> paramSpecOf(ParamOp op) {
  return paramSpecOf(op.getInit(), op);
}

FailureOr<ParamSpec> paramSpecOf(DictionaryAttr init, Operation *op) {
  StringRef kind = init.getAs<StringAttr>("kind").getValue();
  ParamSpec spec;
  if (kind == "data") {
    auto bytes = elementBytes(init.getAs<ElementsAttr>("value"), op);
    if (failed(bytes))
      return failure();
    spec.source = ParamSpec::Source::Data;
    spec.data = std::move(*bytes);
    return spec;
  }
  if (kind == "file") {
    spec.source = ParamSpec::Source::File;
    spec.path = init.getAs<StringAttr>("path").str();
    if (auto key = init.getAs<StringAttr>("key"))
      spec.key = key.str();
    return spec;
  }
  spec.init = llvm::StringSwitch<InitKind>(kind)
                  .Case("zeros", InitKind::Zeros)
                  .Case("ones", InitKind::Ones)
                  .Case("normal", InitKind::Normal)
                  .Case("uniform", InitKind::Uniform)
                  .Case("xavier", InitKind::Xavier)
                  .Default(InitKind::He);
  spec.options.mean = numberOr(init, "mean", 0.0);
  spec.options.std = numberOr(init, "std", 1.0);
  spec.options.low = numberOr(init, "low", 0.0);
  spec.options.high = numberOr(init, "high", 1.0);
  if (auto seed = init.getAs<IntegerAttr>("seed"))
    spec.options.seed = seed.getValue().getZExtValue();
  return spec;
}

FailureOr<HostTensor> paramValue(ParamOp op) {
  return initialValue(op.getInit(), op.getType(), op.getName(), op);
}

FailureOr<HostTensor> initialValue(DictionaryAttr init, RankedTensorType type,
                                   StringRef name, Operation *op) {
  auto spec = paramSpecOf(init, op);
  if (failed(spec))
    return failure();
  HostTensor value;
  std::string error;
  if (!materializeParam(*spec, dtypeOf(type.getElementType()),
                        {type.getShape().begin(), type.getShape().end()}, value,
                        error))
    return op->emitError("parameter '") << name << "': " << error;
  return value;
}

} // namespace dlc
