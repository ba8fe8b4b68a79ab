//===- Elemental.cpp - values at a multi-index, as C expressions ----------===//

#include "codegen/common/Elemental.h"
#include "codegen/common/ScalarFunctions.h"

#include "ir/DlcDialect.h"
#include "ir/ParamSpec.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

std::vector<int64_t> dlc::codegen::shapeOf(Value v) {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  return {shape.begin(), shape.end()};
}
/// An axis attribute (ODS hands I64Attr out as uint64_t) in [0, rank).
static int64_t normalize(uint64_t axis, size_t rank) {
  int64_t a = (int64_t)axis;
  return a < 0 ? a + (int64_t)rank : a;
}

DType dlc::codegen::elementDType(Value tensor) {
  return dtypeOf(cast<RankedTensorType>(tensor.getType()).getElementType());
}

std::string dlc::codegen::shapeText(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

static std::string locationText(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return llvm::formatv("{0}:{1}:{2}",
                         llvm::sys::path::filename(file.getFilename().getValue()),
                         file.getLine(), file.getColumn())
        .str();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      return locationText(fused.getLocations().front());
  return "";
}

std::string dlc::codegen::describeOp(Operation *op) {
  std::string where = locationText(op->getLoc());
  std::string name = op->getName().getStringRef().str();
  return where.empty() ? name : name + " at " + where;
}

std::string dlc::codegen::flatIndex(const std::vector<int64_t> &shape,
                                    const Index &index) {
  std::string flat;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (flat.empty() || flat == "0")
      flat = index[d];
    else if (shape[d] == 1)
      continue;
    else
      flat = "(" + flat + ") * " + std::to_string(shape[d]) + " + " + index[d];
  }
  return flat.empty() ? "0" : flat;
}

std::string dlc::codegen::elementAt(const Buffer &buffer,
                                    const std::string &flat) {
  if (buffer.base.empty())
    return buffer.ptr + "[" + flat + "]";
  return buffer.ptr + "[" + flat + " - " + buffer.base + "]";
}

std::string ElementalEmitter::comment(Operation *op) {
  return op ? "  // " + describeOp(op) : "";
}

std::string ElementalEmitter::define(DType dtype, const std::string &expr,
                                     Operation *op) {
  std::string name = out.fresh("v");
  out.line("const " + target.computeType(dtype) + " " + name + " = " + expr +
           ";" + comment(op));
  return name;
}

std::string ElementalEmitter::defineIndex(const std::string &expr) {
  std::string name = out.fresh("j");
  out.line("const int64_t " + name + " = " + expr + ";");
  return name;
}

std::string ElementalEmitter::emit(Value value, const Index &index) {
  std::pair<void *, std::string> key{value.getAsOpaquePointer(),
                                     llvm::join(index, ",")};
  for (auto scope = memo.rbegin(); scope != memo.rend(); ++scope) {
    auto found = scope->find(key);
    if (found != scope->end())
      return found->second;
  }
  std::string result = compute(value, index);
  memo.back()[key] = result;
  return result;
}

/// `operand` of an op with result `result` broadcast to `index` (NumPy rules).
std::string ElementalEmitter::operandAt(Value operand, Value result,
                                        const Index &index) {
  std::vector<int64_t> in = shapeOf(operand), out = shapeOf(result);
  Index mapped;
  size_t skip = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    mapped.push_back(in[d] == 1 && out[d + skip] != 1 ? "0" : index[d + skip]);
  return emit(operand, mapped);
}

std::string ElementalEmitter::cast(const std::string &x, DType from,
                                   DType to) {
  if (to == DType::I1)
    return "(" + x + " != 0)";
  if (from == DType::F64 && to == DType::F16)
    return target.load(to, target.store(to, x)); // rounded once, from double
  if (isFloat(from) && !isFloat(to))
    return "dlc_float_to_int((double)" + x + ")"; // NaN 0, truncate, saturate
  return "(" + target.computeType(to) + ")" + x;
}

std::string ElementalEmitter::compute(Value value, const Index &index) {
  auto found = buffers.find(value);
  if (found != buffers.end()) {
    const Buffer &buffer = found->second;
    return define(buffer.dtype,
                  target.load(buffer.dtype,
                              elementAt(buffer, flatIndex(buffer.shape, index))),
                  nullptr);
  }
  Operation *op = value.getDefiningOp();
  if (!op)
    llvm::report_fatal_error("codegen: a block argument without a buffer");
  DType dtype = elementDType(value);
  std::vector<int64_t> shape = shapeOf(value);

  // Element-wise: the op's scalar function (cast converts between dtypes).
  auto elementwise = dyn_cast<ElementwiseOpInterface>(op);
  if (elementwise && !isa<CastOp>(op)) {
    std::vector<std::string> args;
    for (Value operand : op->getOperands())
      args.push_back(operandAt(operand, value, index));
    // The dtype the function computes in: its operands' (a select's
    // branches'; its condition is i1).
    DType operandDType = elementDType(op->getOperand(op->getNumOperands() == 3));
    llvm::StringRef function = elementwise.getScalarFunction();
    std::string check;
    if (fb::CheckKind kind = scalarCheck(function, operandDType);
        kind != fb::CheckKind::invalid)
      check = checks.add(kind, op) + ", " + flatIndex(shape, index);
    std::optional<std::string> expr =
        scalarExpression(target, function, args, operandDType, check);
    if (!expr)
      llvm::report_fatal_error(llvm::Twine("codegen: no scalar function '") +
                               elementwise.getScalarFunction() + "'");
    return define(dtype, target.round(dtype, *expr), op);
  }
  if (auto castOp = dyn_cast<CastOp>(op)) {
    DType from = elementDType(castOp.getX());
    auto stored = buffers.find(castOp.getX());
    if (stored != buffers.end() && isInteger(from) && from != DType::I64 &&
        from != DType::I1 &&
        isFloat(dtype) && dtype != DType::F16 && dtype != DType::BF16) {
      // A narrow integer straight from memory converts from its storage
      // type: the same value as through int64_t, and the loop vectorises
      // (u8 -> i64 -> f32 does not).
      const Buffer &buffer = stored->second;
      return define(dtype,
                    "(" + target.computeType(dtype) + ")" +
                        elementAt(buffer, flatIndex(buffer.shape, index)),
                    op);
    }
    std::string x = emit(castOp.getX(), index);
    return define(dtype,
                  target.round(dtype, cast(x, elementDType(castOp.getX()), dtype)), op);
  }
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense)
      llvm::report_fatal_error("codegen: a constant that is not dense");
    auto asDouble = [&](int64_t i) -> double {
      if (isFloat(dtype))
        return (*(dense.getValues<APFloat>().begin() + i)).convertToDouble();
      APInt v = *(dense.getValues<APInt>().begin() + i);
      if (dtype == DType::I1)
        return v.getBoolValue();
      return dtype == DType::U8 ? (double)v.getZExtValue()
                                : (double)v.getSExtValue();
    };
    if (dense.isSplat())
      return target.literal(dtype, asDouble(0));
    std::string name = out.fresh("c");
    std::string list;
    for (int64_t i = 0; i < dense.getNumElements(); ++i)
      list += (i ? ", " : "") + target.literal(dtype, asDouble(i));
    statics += "  static const " + target.computeType(dtype) + " " + name +
               "[] = {" + list + "};" + comment(op) + "\n";
    return define(dtype, name + "[" + flatIndex(shape, index) + "]", op);
  }
  if (auto iota = dyn_cast<IotaOp>(op)) {
    int64_t axis = normalize(iota.getAxis(), shape.size());
    return define(dtype, "(" + target.computeType(dtype) + ")" + index[axis], op);
  }

  // Layout: remap the index.
  if (auto broadcast = dyn_cast<BroadcastToOp>(op))
    return operandAt(broadcast.getX(), value, index);
  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    Index in(index.size());
    for (auto [i, p] : llvm::enumerate(transpose.getPerm()))
      in[p] = index[i];
    return emit(transpose.getX(), in);
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    // Row-major data keeps its order through a reshape: a buffer's element
    // is at the result's flat index, with no division or remainder that
    // would keep the loop scalar.
    auto stored = buffers.find(reshape.getX());
    if (stored != buffers.end()) {
      const Buffer &buffer = stored->second;
      return define(buffer.dtype,
                    target.load(buffer.dtype, elementAt(buffer, flatIndex(shape, index))),
                    nullptr);
    }
    std::vector<int64_t> inShape = shapeOf(reshape.getX());
    // Leading dimensions both shapes share pass through; the rest goes
    // through the flat index of the remaining dimensions.
    size_t same = 0;
    while (same < inShape.size() && same < shape.size() &&
           inShape[same] == shape[same])
      ++same;
    Index in(index.begin(), index.begin() + same);
    std::vector<int64_t> restOut(shape.begin() + same, shape.end());
    Index restIndex(index.begin() + same, index.end());
    std::string flat = restOut.empty() ? "0" : flatIndex(restOut, restIndex);
    if (same < inShape.size() && flat != "0" &&
        llvm::any_of(restIndex, [](auto &) { return true; }) &&
        inShape.size() - same > 1)
      flat = defineIndex(flat);
    int64_t stride = 1;
    std::vector<std::string> tail;
    for (size_t d = inShape.size(); d-- > same;) {
      std::string e = stride == 1 ? flat : "(" + flat + ") / " + std::to_string(stride);
      if (d != same)
        e = "(" + e + ") % " + std::to_string(inShape[d]);
      tail.push_back(inShape[d] == 1 ? "0" : e);
      stride *= inShape[d];
    }
    in.insert(in.end(), tail.rbegin(), tail.rend());
    return emit(reshape.getX(), in);
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    Index in;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t start = slice.getStarts()[d], step = slice.getStrides()[d];
      std::string e = index[d];
      if (step != 1)
        e = e + " * " + std::to_string(step);
      if (start != 0)
        e = e + " + " + std::to_string(start);
      in.push_back(e);
    }
    return emit(slice.getX(), in);
  }

  // Data-dependent or conditional: nested scopes.
  if (auto pad = dyn_cast<PadOp>(op)) {
    std::vector<int64_t> inShape = shapeOf(pad.getX());
    Index in;
    std::string inside;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t low = pad.getLow()[d];
      std::string e = low ? "(" + index[d] + " - " + std::to_string(low) + ")"
                          : index[d];
      in.push_back(e);
      if (low)
        inside += (inside.empty() ? "" : " && ") + e + " >= 0";
      if (low || pad.getHigh()[d])
        inside += (inside.empty() ? "" : " && ") + e + " < " +
                  std::to_string(inShape[d]);
    }
    std::string name = out.fresh("v");
    // The oracle rounds the padding value to the dtype.
    out.line(target.computeType(dtype) + " " + name + " = " +
             target.round(dtype, target.literal(dtype, pad.getValue().convertToDouble())) +
             ";" + comment(op));
    out.open("if (" + (inside.empty() ? std::string("true") : inside) + ")");
    pushScope();
    out.line(name + " = " + emit(pad.getX(), in) + ";");
    popScope();
    out.close();
    return name;
  }
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    int64_t axis = normalize(concat.getAxis(), shape.size());
    std::string name = out.fresh("v");
    out.line(target.computeType(dtype) + " " + name + ";" + comment(op));
    int64_t start = 0;
    auto inputs = concat.getInputs();
    for (auto [i, input] : llvm::enumerate(inputs)) {
      int64_t size = shapeOf(input)[axis];
      Index in = index;
      if (start)
        in[axis] = "(" + index[axis] + " - " + std::to_string(start) + ")";
      bool last = i + 1 == inputs.size();
      std::string head = last ? "else"
                              : (i ? "else if (" : "if (") + index[axis] + " < " +
                                    std::to_string(start + size) + ")";
      if (last && i == 0) {
        out.line(name + " = " + emit(input, in) + ";");
        break;
      }
      if (i == 0)
        out.open(head);
      else
        out.reopen(head);
      pushScope();
      out.line(name + " = " + emit(input, in) + ";");
      popScope();
      if (last)
        out.close();
      start += size;
    }
    return name;
  }
  if (auto gather = dyn_cast<GatherOp>(op)) {
    std::vector<int64_t> xShape = shapeOf(gather.getX());
    int64_t axis = normalize(gather.getAxis(), xShape.size());
    std::vector<int64_t> idxShape = shapeOf(gather.getIndices());
    size_t idxRank = idxShape.size();
    Index at(index.begin() + axis, index.begin() + axis + idxRank);
    std::string raw = emit(gather.getIndices(), at);
    // Negative indices count from the end; one out of range fails its
    // check (and reads row 0).
    std::string j = defineIndex(
        "dlc_check_index(" + raw + ", " + std::to_string(xShape[axis]) + ", " +
        checks.add(fb::CheckKind::gather_index, op, xShape[axis], axis) + ", " +
        flatIndex(idxShape, at) + ")");
    Index in(index.begin(), index.begin() + axis);
    in.push_back(j);
    in.insert(in.end(), index.begin() + axis + idxRank, index.end());
    return emit(gather.getX(), in);
  }
  if (auto embedding = dyn_cast<EmbeddingOp>(op)) {
    std::vector<int64_t> table = shapeOf(embedding.getTable());
    Index at(index.begin(), index.end() - 1);
    std::string id = emit(embedding.getIds(), at);
    // An id out of range fails its check (and reads row 0).
    std::string row = defineIndex(
        "dlc_check_id(" + id + ", " + std::to_string(table[0]) + ", " +
        checks.add(fb::CheckKind::embedding_id, op, table[0]) + ", " +
        flatIndex(shapeOf(embedding.getIds()), at) + ")");
    return emit(embedding.getTable(), {row, index.back()});
  }
  llvm::report_fatal_error(llvm::Twine("codegen: '") +
                           op->getName().getStringRef() +
                           "' is not elemental and has no buffer");
}
