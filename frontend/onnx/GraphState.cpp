//===- GraphState.cpp - ONNX tensors as constants and parameters ----------===//
//
// The graph under construction's view of ONNX tensors: element types, the
// bytes of an initializer or tensor attribute (typed fields, raw data,
// external files through the path checks), read as a constant or
// materialised as a `dlc.param`.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

#include "frontend/onnx/OnnxImporter.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"

#include <cstring>
#include <fstream>

using namespace mlir;

namespace dlc::onnximport {

GraphState::GraphState(MLIRContext &context, std::string modelPath,
                       int64_t opset)
    : context(context), builder(&context), modelPath(std::move(modelPath)),
      opset(opset), fileOpset(opset) {
  size_t slash = this->modelPath.find_last_of('/');
  modelDir = slash == std::string::npos ? "." : this->modelPath.substr(0, slash);
  if (modelDir.empty())
    modelDir = "/";
}

Location GraphState::fileLoc() {
  return FileLineColLoc::get(&context, modelPath, 0, 0);
}

Type GraphState::elementType(int32_t onnxType) {
  using T = ::onnx::TensorProto;
  switch (onnxType) {
  case T::FLOAT: return builder.getF32Type();
  case T::DOUBLE: return builder.getF64Type();
  case T::FLOAT16: return builder.getF16Type();
  case T::BFLOAT16: return builder.getBF16Type();
  case T::INT64: return builder.getI64Type();
  case T::INT32: return builder.getI32Type();
  case T::BOOL: return builder.getI1Type();
  case T::INT8: return builder.getIntegerType(8);
  case T::UINT8: return builder.getIntegerType(8, /*isSigned=*/false);
  default: return Type();
  }
}

const char *onnxTypeName(int32_t onnxType) {
  using T = ::onnx::TensorProto;
  switch (onnxType) {
  case T::FLOAT: return "float";
  case T::UINT8: return "uint8";
  case T::INT8: return "int8";
  case T::UINT16: return "uint16";
  case T::INT16: return "int16";
  case T::INT32: return "int32";
  case T::INT64: return "int64";
  case T::STRING: return "string";
  case T::BOOL: return "bool";
  case T::FLOAT16: return "float16";
  case T::DOUBLE: return "double";
  case T::UINT32: return "uint32";
  case T::UINT64: return "uint64";
  case T::COMPLEX64: return "complex64";
  case T::COMPLEX128: return "complex128";
  case T::BFLOAT16: return "bfloat16";
  default: return "undefined";
  }
}

FailureOr<Type> GraphState::requireElementType(int32_t onnxType, Location loc,
                                               const Twine &what) {
  if (Type type = elementType(onnxType))
    return type;
  return emitError(loc) << what << " has element type "
                        << onnxTypeName(onnxType)
                        << ", which dlc does not support (supported: float, "
                           "double, float16, bfloat16, int64, int32, int8, uint8, bool)";
}

/// Bytes per element in ONNX's little-endian layout (bool: one byte).
static size_t elementBytes(int32_t onnxType) {
  using T = ::onnx::TensorProto;
  switch (onnxType) {
  case T::DOUBLE: case T::INT64: case T::UINT64: return 8;
  case T::FLOAT: case T::INT32: case T::UINT32: return 4;
  case T::FLOAT16: case T::BFLOAT16: case T::INT16: case T::UINT16: return 2;
  default: return 1;
  }
}

FailureOr<std::string> GraphState::tensorBytes(const ::onnx::TensorProto &t,
                                               Location loc) {
  using T = ::onnx::TensorProto;
  // The element count, checked: a negative dimension, or dimensions whose
  // product wraps past 2^63 (to 0 or a small number), would be read as a
  // tensor with no or too little data.
  int64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0)
      return emitError(loc) << "tensor '" << t.name() << "' has a negative dimension " << d;
    if (__builtin_mul_overflow(numel, d, &numel) || numel > (int64_t(1) << 48))
      return emitError(loc) << "tensor '" << t.name()
                            << "' has more than 2^48 elements (its dimensions multiply "
                               "past what dlc holds)";
  }
  size_t width = elementBytes(t.data_type());
  std::string bytes;
  if (t.data_location() == T::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    // offset and length are decimal integers; anything else is an error,
    // never read as 0.
    auto number = [&](const std::string &key, const std::string &text, int64_t &out) {
      long long v = 0;
      if (StringRef(text).getAsInteger(10, v) || v < 0) {
        emitError(loc) << "tensor '" << t.name() << "': external data " << key << " '" << text
                       << "' is not a non-negative integer";
        return false;
      }
      out = v;
      return true;
    };
    for (const auto &entry : t.external_data()) {
      if (entry.key() == "location")
        location = entry.value();
      else if (entry.key() == "offset" && !number("offset", entry.value(), offset))
        return failure();
      else if (entry.key() == "length" && !number("length", entry.value(), length))
        return failure();
    }
    std::string resolved, error;
    if (!resolveExternalDataPath(modelDir, location, resolved, error))
      return emitError(loc) << "tensor '" << t.name()
                            << "': external data " << error;
    std::ifstream file(resolved, std::ios::binary);
    if (!file)
      return emitError(loc) << "tensor '" << t.name()
                            << "': cannot open external data file '"
                            << location << "'";
    file.seekg(0, std::ios::end);
    int64_t size = file.tellg();
    if (length < 0)
      length = size - offset;
    if (offset < 0 || offset > size || length > size - offset)
      return emitError(loc) << "tensor '" << t.name() << "': external data '"
                            << location << "' has " << size
                            << " bytes, the tensor asks for " << length
                            << " at offset " << offset;
    bytes.resize(length);
    file.seekg(offset);
    file.read(bytes.data(), length);
    if (!file)
      return emitError(loc) << "tensor '" << t.name() << "': cannot read " << length
                            << " bytes at offset " << offset << " of external data '"
                            << location << "'";
  } else if (t.has_raw_data()) {
    bytes = t.raw_data();
  } else {
    auto append = [&](const void *p, size_t n) {
      bytes.append(static_cast<const char *>(p), n);
    };
    switch (t.data_type()) {
    case T::FLOAT:
      for (float v : t.float_data()) append(&v, 4);
      break;
    case T::DOUBLE:
      for (double v : t.double_data()) append(&v, 8);
      break;
    case T::INT64:
      for (int64_t v : t.int64_data()) append(&v, 8);
      break;
    case T::UINT32: case T::UINT64:
      for (uint64_t v : t.uint64_data()) append(&v, width);
      break;
    default:
      // int32_data holds every narrower type, one element per entry.
      for (int32_t v : t.int32_data()) append(&v, width);
      break;
    }
  }
  if (bytes.size() != static_cast<size_t>(numel) * width)
    return emitError(loc) << "tensor '" << t.name() << "' holds "
                          << bytes.size() << " bytes of data, but its type "
                          << onnxTypeName(t.data_type()) << " and shape need "
                          << numel * width;
  return bytes;
}

FailureOr<Constant> GraphState::readConstant(const ::onnx::TensorProto &t,
                                             Location loc) {
  auto element = requireElementType(t.data_type(), loc,
                                    "tensor '" + t.name() + "'");
  if (failed(element))
    return failure();
  auto bytes = tensorBytes(t, loc);
  if (failed(bytes))
    return failure();
  Constant c = Constant::empty(
      *element, std::vector<int64_t>(t.dims().begin(), t.dims().end()));
  size_t width = elementBytes(t.data_type());
  int64_t n = c.numel();
  const char *p = bytes->data();
  for (int64_t i = 0; i < n; ++i, p += width) {
    if (auto f = dyn_cast<FloatType>(*element)) {
      uint64_t word = 0;
      std::memcpy(&word, p, width);
      APFloat v(f.getFloatSemantics(), APInt(width * 8, word));
      c.floats.push_back(v.convertToDouble());
    } else if (element->isInteger(1)) {
      c.ints.push_back(*p != 0);
    } else if (width == 1) {
      // int8 and uint8, by the element type's signedness.
      uint8_t byte = static_cast<uint8_t>(*p);
      c.ints.push_back(element->isUnsignedInteger(8)
                           ? int64_t(byte)
                           : int64_t(static_cast<int8_t>(byte)));
    } else if (width == 4) {
      int32_t v;
      std::memcpy(&v, p, 4);
      c.ints.push_back(v);
    } else {
      int64_t v;
      std::memcpy(&v, p, 8);
      c.ints.push_back(v);
    }
  }
  return c;
}

/// A resource blob key from a tensor name: identifier characters only.
static std::string blobKey(const std::string &name) {
  std::string key;
  for (char c : name)
    key += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'
               ? c
               : '_';
  return key.empty() || std::isdigit(static_cast<unsigned char>(key[0]))
             ? "t_" + key
             : key;
}

FailureOr<Value> GraphState::materializeInitializer(const std::string &name,
                                                    TensorEntry &entry,
                                                    Location loc) {
  const ::onnx::TensorProto &t = *entry.initializer;
  auto element = requireElementType(t.data_type(), loc,
                                    "initializer '" + name + "'");
  if (failed(element))
    return failure();
  auto type = RankedTensorType::get(
      SmallVector<int64_t>(t.dims().begin(), t.dims().end()), *element);
  ElementsAttr value;
  // Small tensors print inline; large ones live in a resource blob so that
  // printed IR stays readable.
  constexpr int64_t kInlineElements = 16;
  if (type.getNumElements() <= kInlineElements || element->isInteger(1)) {
    auto c = readConstant(t, loc);
    if (failed(c))
      return failure();
    value = c->toAttr();
  } else {
    auto bytes = tensorBytes(t, loc);
    if (failed(bytes))
      return failure();
    size_t align = elementBytes(t.data_type());
    value = DenseResourceElementsAttr::get(
        type, blobKey(name),
        HeapAsmResourceBlob::allocateAndCopyWithAlign(
            ArrayRef<char>(bytes->data(), bytes->size()), align));
  }
  auto init = builder.getDictionaryAttr(
      {builder.getNamedAttr("kind", builder.getStringAttr("data")),
       builder.getNamedAttr("value", value)});
  auto op = builder.create<ParamOp>(loc, TypeRange(type),
                                    builder.getStringAttr(name), init);
  entry.value = op.getResult();
  return entry.value;
}

} // namespace dlc::onnximport
