//===- NodeImporter.cpp - constants, tensors and checked node access ------===//
//
// Reading ONNX tensors (typed fields, raw data, external files) into
// constants and parameters; the accessors op importers use to read a node's
// inputs and attributes with checked kinds; and the small op-building
// helpers every family shares.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

#include "frontend/onnx/OnnxImporter.h"
#include "ir/ShapeUtils.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"

#include <cstring>
#include <fstream>

using namespace mlir;

namespace dlc::onnximport {

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

int64_t Constant::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

void Constant::push(double value) {
  if (isFloat()) {
    if (element.isF32())
      value = static_cast<float>(value);
    floats.push_back(value);
  } else if (element.isInteger(1)) {
    ints.push_back(value != 0);
  } else {
    int64_t v = std::isnan(value) ? 0
                : value >= 9.2233720368547758e18
                    ? INT64_MAX
                    : value <= -9.2233720368547758e18 ? INT64_MIN
                                                      : int64_t(value);
    pushInt(v);
  }
}

void Constant::pushInt(int64_t value) {
  if (isFloat())
    floats.push_back(static_cast<double>(value));
  else if (element.isInteger(1))
    ints.push_back(value != 0);
  else if (element.isInteger(32))
    ints.push_back(static_cast<int32_t>(value));
  else
    ints.push_back(value);
}

RankedTensorType Constant::type() const {
  return RankedTensorType::get(shape, element);
}

DenseElementsAttr Constant::toAttr() const {
  auto t = type();
  int64_t n = numel();
  bool splat = n > 0;
  for (int64_t i = 1; i < n && splat; ++i)
    splat = isFloat() ? (floats[i] == floats[0] &&
                         std::signbit(floats[i]) == std::signbit(floats[0]))
                      : ints[i] == ints[0];
  if (auto f = dyn_cast<FloatType>(element)) {
    auto toAP = [&](double v) {
      APFloat ap(v);
      bool lost;
      ap.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      return ap;
    };
    if (splat)
      return DenseElementsAttr::get(t, toAP(floats[0]));
    SmallVector<APFloat> values;
    for (double v : floats)
      values.push_back(toAP(v));
    return DenseElementsAttr::get(t, values);
  }
  if (element.isInteger(1)) {
    if (splat)
      return DenseElementsAttr::get(t, ints[0] != 0);
    SmallVector<bool> values;
    for (int64_t v : ints)
      values.push_back(v != 0);
    return DenseElementsAttr::get(t, values);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  if (splat)
    return DenseElementsAttr::get(t, APInt(width, ints[0], /*isSigned=*/true));
  SmallVector<APInt> values;
  for (int64_t v : ints)
    values.push_back(APInt(width, v, /*isSigned=*/true));
  return DenseElementsAttr::get(t, values);
}

Constant Constant::empty(Type element, std::vector<int64_t> shape) {
  Constant c;
  c.element = element;
  c.shape = std::move(shape);
  return c;
}

//===----------------------------------------------------------------------===//
// GraphState: tensors
//===----------------------------------------------------------------------===//

GraphState::GraphState(MLIRContext &context, std::string modelPath,
                       int64_t opset)
    : context(context), builder(&context), modelPath(std::move(modelPath)),
      opset(opset) {
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
                           "double, float16, bfloat16, int64, int32, bool)";
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
  int64_t numel = 1;
  for (int64_t d : t.dims())
    numel *= d;
  size_t width = elementBytes(t.data_type());
  std::string bytes;
  if (t.data_location() == T::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto &entry : t.external_data()) {
      if (entry.key() == "location")
        location = entry.value();
      else if (entry.key() == "offset")
        offset = std::strtoll(entry.value().c_str(), nullptr, 10);
      else if (entry.key() == "length")
        length = std::strtoll(entry.value().c_str(), nullptr, 10);
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
    } else if (width == 1) {
      c.ints.push_back(*p != 0);
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

//===----------------------------------------------------------------------===//
// NodeImporter: inputs, attributes, outputs
//===----------------------------------------------------------------------===//

NodeImporter::NodeImporter(GraphState &graph, const ::onnx::NodeProto &node,
                           Location loc, std::string displayName)
    : graph(graph), node(node), loc(loc), b(graph.builder),
      name(std::move(displayName)) {}

InFlightDiagnostic NodeImporter::error() {
  return emitError(loc) << "node '" << name << "' (" << node.op_type()
                        << "): ";
}

size_t NodeImporter::numInputs() const {
  size_t n = node.input_size();
  while (n > 0 && node.input(n - 1).empty())
    --n;
  return n;
}

bool NodeImporter::hasInput(size_t i) const {
  return i < static_cast<size_t>(node.input_size()) && !node.input(i).empty();
}

Value NodeImporter::input(size_t i) {
  if (!hasInput(i)) {
    error() << "input " << i << " is required";
    return {};
  }
  const std::string &tensor = node.input(i);
  auto found = graph.tensors.find(tensor);
  if (found == graph.tensors.end()) {
    error() << "input '" << tensor << "' is not defined before the node";
    return {};
  }
  TensorEntry &entry = found->second;
  if (entry.value)
    return entry.value;
  if (entry.constant) {
    entry.value = constant(*entry.constant);
    return entry.value;
  }
  if (entry.initializer) {
    auto value = graph.materializeInitializer(tensor, entry, loc);
    return succeeded(value) ? *value : Value();
  }
  error() << "input '" << tensor << "' has no value";
  return {};
}

RankedTensorType NodeImporter::inputType(size_t i) {
  if (!hasInput(i))
    return {};
  auto found = graph.tensors.find(node.input(i));
  if (found == graph.tensors.end())
    return {};
  TensorEntry &entry = found->second;
  if (entry.value)
    return llvm::cast<RankedTensorType>(entry.value.getType());
  if (entry.constant)
    return entry.constant->type();
  if (entry.initializer) {
    Type element = graph.elementType(entry.initializer->data_type());
    if (!element)
      return {};
    return RankedTensorType::get(
        SmallVector<int64_t>(entry.initializer->dims().begin(),
                             entry.initializer->dims().end()),
        element);
  }
  return {};
}

const Constant *NodeImporter::foldable(size_t i) {
  if (!hasInput(i))
    return nullptr;
  auto found = graph.tensors.find(node.input(i));
  if (found == graph.tensors.end())
    return nullptr;
  TensorEntry &entry = found->second;
  if (entry.constant)
    return &*entry.constant;
  // Small integer initializers are shape arithmetic (axes, shapes,
  // indices), not weights: they fold.
  const ::onnx::TensorProto *t = entry.initializer;
  if (t && !entry.value) {
    int64_t n = 1;
    for (int64_t d : t->dims())
      n *= d;
    Type element = graph.elementType(t->data_type());
    if (element && isa<IntegerType>(element) && n <= 64) {
      auto c = graph.readConstant(*t, loc);
      if (succeeded(c)) {
        entry.constant = std::move(*c);
        return &*entry.constant;
      }
    }
  }
  return nullptr;
}

std::optional<Constant> NodeImporter::constantInput(size_t i, StringRef what) {
  if (!hasInput(i)) {
    error() << "input " << i << " (" << what << ") is required";
    return std::nullopt;
  }
  if (const Constant *c = foldable(i))
    return *c;
  auto found = graph.tensors.find(node.input(i));
  if (found != graph.tensors.end() && found->second.initializer) {
    auto c = graph.readConstant(*found->second.initializer, loc);
    if (failed(c))
      return std::nullopt;
    return std::move(*c);
  }
  error() << "input '" << node.input(i) << "' (" << what
          << ") must be known at import time: dlc builds static shapes, but "
             "this value is computed from the graph's inputs";
  return std::nullopt;
}

std::optional<SmallVector<int64_t>> NodeImporter::intsInput(size_t i,
                                                            StringRef what) {
  auto c = constantInput(i, what);
  if (!c)
    return std::nullopt;
  SmallVector<int64_t> values;
  for (int64_t k = 0; k < c->numel(); ++k)
    values.push_back(c->getInt(k));
  return values;
}

const ::onnx::AttributeProto *NodeImporter::attr(StringRef attrName) const {
  for (const auto &a : node.attribute())
    if (a.name() == attrName)
      return &a;
  return nullptr;
}

std::optional<int64_t> NodeImporter::intAttr(StringRef attrName,
                                             int64_t fallback) {
  const auto *a = attr(attrName);
  if (!a)
    return fallback;
  if (a->type() != ::onnx::AttributeProto::INT) {
    error() << "attribute '" << attrName << "' must be an integer";
    return std::nullopt;
  }
  return a->i();
}

std::optional<double> NodeImporter::floatAttr(StringRef attrName,
                                              double fallback) {
  const auto *a = attr(attrName);
  if (!a)
    return fallback;
  if (a->type() != ::onnx::AttributeProto::FLOAT) {
    error() << "attribute '" << attrName << "' must be a float";
    return std::nullopt;
  }
  return a->f();
}

std::optional<SmallVector<int64_t>>
NodeImporter::intsAttr(StringRef attrName, SmallVector<int64_t> fallback) {
  const auto *a = attr(attrName);
  if (!a)
    return fallback;
  if (a->type() != ::onnx::AttributeProto::INTS) {
    error() << "attribute '" << attrName << "' must be a list of integers";
    return std::nullopt;
  }
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<std::string> NodeImporter::stringAttr(StringRef attrName,
                                                    StringRef fallback) {
  const auto *a = attr(attrName);
  if (!a)
    return fallback.str();
  if (a->type() != ::onnx::AttributeProto::STRING) {
    error() << "attribute '" << attrName << "' must be a string";
    return std::nullopt;
  }
  return a->s();
}

LogicalResult NodeImporter::unsupported(StringRef attrName, const Twine &why) {
  error() << "attribute '" << attrName << "' is not supported: " << why;
  return failure();
}

bool NodeImporter::wantsOutput(size_t i) const {
  return i < static_cast<size_t>(node.output_size()) &&
         !node.output(i).empty();
}

LogicalResult NodeImporter::setOutput(size_t i, Value value) {
  if (!value)
    return failure();
  if (wantsOutput(i))
    graph.tensors[node.output(i)].value = value;
  return success();
}

LogicalResult NodeImporter::setConstant(size_t i, Constant value) {
  if (wantsOutput(i)) {
    TensorEntry entry;
    entry.constant = std::move(value);
    graph.tensors[node.output(i)] = std::move(entry);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// NodeImporter: building
//===----------------------------------------------------------------------===//

Value NodeImporter::constant(const Constant &value) {
  return createTyped<ConstantOp>(value.type(), {},
                                 {named("value", value.toAttr())});
}

Value NodeImporter::scalar(double value, Type element) {
  Constant c = Constant::empty(element, {});
  c.push(value);
  return constant(c);
}

Value NodeImporter::reshape(Value x, ArrayRef<int64_t> shape) {
  if (!x)
    return {};
  auto type = llvm::cast<RankedTensorType>(x.getType());
  if (type.getShape() == shape)
    return x;
  return createTyped<ReshapeOp>(
      RankedTensorType::get(shape, type.getElementType()), {x});
}

Value NodeImporter::cast(Value x, Type element) {
  if (!x)
    return {};
  auto type = llvm::cast<RankedTensorType>(x.getType());
  if (type.getElementType() == element)
    return x;
  return createTyped<CastOp>(RankedTensorType::get(type.getShape(), element),
                             {x});
}

Value NodeImporter::broadcastTo(Value x, ArrayRef<int64_t> shape) {
  if (!x)
    return {};
  auto type = llvm::cast<RankedTensorType>(x.getType());
  if (type.getShape() == shape)
    return x;
  return createTyped<BroadcastToOp>(
      RankedTensorType::get(shape, type.getElementType()), {x});
}

Value NodeImporter::transpose(Value x, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= static_cast<int64_t>(i) == p;
  if (identity)
    return x;
  return create<TransposeOp>({x}, {i64s("perm", perm)});
}

Value NodeImporter::compare(ComparePredicate predicate, Value lhs, Value rhs) {
  return create<CompareOp>(
      {lhs, rhs},
      {named("predicate", ComparePredicateAttr::get(&graph.context, predicate))});
}

Value NodeImporter::iota(ArrayRef<int64_t> shape, int64_t axis) {
  return createTyped<IotaOp>(RankedTensorType::get(shape, i64()), {},
                             {i64("axis", axis)});
}

SmallVector<int64_t> shapeOf(Value value) {
  auto shape = llvm::cast<RankedTensorType>(value.getType()).getShape();
  return {shape.begin(), shape.end()};
}

Value NodeImporter::gatherElements(Value x, Value indices, int64_t axis) {
  if (!x || !indices)
    return {};
  auto xShape = shapeOf(x), iShape = shapeOf(indices);
  int64_t rank = xShape.size(), size = xShape[axis];
  Type element = llvm::cast<RankedTensorType>(x.getType()).getElementType();
  // Indices in [0, size): negative ones count from the end.
  Value idx = cast(indices, i64());
  Value zero = scalar(0, i64());
  Value wrapped = create<AddOp>({idx, scalar(size, i64())});
  idx = create<SelectOp>({compare(ComparePredicate::lt, idx, zero), wrapped, idx});
  // hot[..., k] = (indices[...] == k), with k along a new last axis.
  SmallVector<int64_t> hotShape(iShape);
  hotShape.push_back(size);
  SmallVector<int64_t> idxShape(iShape);
  idxShape.push_back(1);
  Value hot = compare(ComparePredicate::eq, reshape(idx, idxShape),
                      iota(hotShape, rank));
  // x with `axis` moved last, a 1 left in its place, the other dimensions
  // cut to the indices' sizes.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  Value moved = transpose(x, perm);
  SmallVector<int64_t> withOne(xShape);
  withOne[axis] = 1;
  withOne.push_back(size);
  moved = reshape(moved, withOne);
  SmallVector<int64_t> limits(withOne), zeros(rank + 1, 0), ones(rank + 1, 1);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      limits[d] = iShape[d];
  if (ArrayRef<int64_t>(limits) != ArrayRef<int64_t>(withOne))
    moved = create<SliceOp>({moved}, {i64s("starts", zeros),
                                      i64s("limits", limits),
                                      i64s("strides", ones)});
  bool isBool = element.isInteger(1);
  if (isBool)
    moved = cast(moved, b.getI32Type());
  Type work = isBool ? b.getI32Type() : element;
  Value picked = create<SelectOp>({hot, moved, scalar(0, work)});
  Value sum = create<ReduceSumOp>({picked}, {i64s("axes", {rank})});
  return isBool ? cast(sum, element) : sum;
}

std::optional<int64_t> normalizeAxisOrError(NodeImporter &node, int64_t axis,
                                            int64_t rank, StringRef what) {
  if (axis < -rank || axis >= rank) {
    node.error() << what << " " << axis << " is out of range for rank "
                 << rank;
    return std::nullopt;
  }
  return axis < 0 ? axis + rank : axis;
}

} // namespace dlc::onnximport
