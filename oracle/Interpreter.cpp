//===- Interpreter.cpp - the float64 oracle: evaluates dlc IR -------------===//
//
// One case per op: read the operands' tensors, normalise attributes (negative
// axes), call the kernel. Nothing here computes values itself.
//
//===----------------------------------------------------------------------===//

#include "oracle/Interpreter.h"

#include "frontend/weights/ArrayFile.h"
#include "ir/DlcDialect.h"
#include "oracle/TensorConversion.h"
#include "oracle/kernels/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstring>

using namespace mlir;

namespace dlc::oracle {

DType dtypeOf(Type type) {
  if (type.isF64()) return DType::F64;
  if (type.isF32()) return DType::F32;
  if (type.isF16()) return DType::F16;
  if (type.isBF16()) return DType::BF16;
  if (type.isInteger(64)) return DType::I64;
  if (type.isInteger(32)) return DType::I32;
  if (type.isInteger(1)) return DType::I1;
  llvm_unreachable("not a dlc element type");
}

static std::vector<int64_t> shapeOf(Type type) {
  auto shape = llvm::cast<RankedTensorType>(type).getShape();
  return {shape.begin(), shape.end()};
}

static double numberOr(DictionaryAttr dict, StringRef key, double fallback) {
  Attribute value = dict.get(key);
  if (auto f = dyn_cast_or_null<FloatAttr>(value))
    return f.getValueAsDouble();
  if (auto i = dyn_cast_or_null<IntegerAttr>(value))
    return static_cast<double>(i.getInt());
  return fallback;
}

/// The elements of `attr` as doubles: a DenseElementsAttr through its
/// values, a DenseResourceElementsAttr by reading its blob as the element
/// type's little-endian bytes (i1 as one byte each).
static FailureOr<std::vector<double>> elementValues(ElementsAttr attr,
                                                    Operation *op) {
  auto type = llvm::cast<ShapedType>(attr.getType());
  Type element = type.getElementType();
  std::vector<double> values;
  values.reserve(type.getNumElements());
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (isa<FloatType>(element)) {
      for (APFloat v : dense.getValues<APFloat>())
        values.push_back(v.convertToDouble() * 1.0);
    } else {
      bool isBool = element.isInteger(1);
      for (APInt v : dense.getValues<APInt>())
        values.push_back(isBool ? (v.isZero() ? 0.0 : 1.0)
                                : static_cast<double>(v.getSExtValue()));
    }
    return values;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob)
    return op->emitError("parameter data is not a dense or resource elements "
                         "attribute with its blob present");
  ArrayRef<char> bytes = blob->getData();
  int64_t n = type.getNumElements();
  unsigned bits = element.getIntOrFloatBitWidth();
  size_t width = bits == 1 ? 1 : bits / 8;
  if (bytes.size() != static_cast<size_t>(n) * width)
    return op->emitError("parameter data holds ")
           << bytes.size() << " bytes, " << n * width << " expected";
  for (int64_t i = 0; i < n; ++i) {
    const char *p = bytes.data() + i * width;
    if (auto f = dyn_cast<FloatType>(element)) {
      uint64_t word = 0;
      std::memcpy(&word, p, width);
      values.push_back(APFloat(f.getFloatSemantics(), APInt(bits, word))
                           .convertToDouble());
    } else if (bits == 1) {
      values.push_back(*p ? 1.0 : 0.0);
    } else if (bits == 32) {
      int32_t v;
      std::memcpy(&v, p, 4);
      values.push_back(v);
    } else {
      int64_t v;
      std::memcpy(&v, p, 8);
      values.push_back(static_cast<double>(v));
    }
  }
  return values;
}

FailureOr<Tensor> materializeParam(ParamOp op) {
  auto type = op.getType();
  DType dtype = dtypeOf(type.getElementType());
  DictionaryAttr init = op.getInit();
  StringRef kind = init.getAs<StringAttr>("kind").getValue();
  if (kind == "data") {
    auto values = elementValues(init.getAs<ElementsAttr>("value"), op);
    if (failed(values))
      return failure();
    return Tensor::fromValues(dtype, shapeOf(type), std::move(*values));
  }
  if (kind == "file") {
    std::string path = init.getAs<StringAttr>("path").str();
    std::string key;
    if (auto k = init.getAs<StringAttr>("key"))
      key = k.str();
    weights::Array array;
    std::string error;
    if (!weights::readArray(path, key, array, error))
      return op.emitError("parameter '") << op.getName() << "': " << error;
    return fromArray(array, dtype, shapeOf(type), op.getName().str(), op);
  }
  InitOptions options;
  options.mean = numberOr(init, "mean", 0.0);
  options.std = numberOr(init, "std", 1.0);
  options.low = numberOr(init, "low", 0.0);
  options.high = numberOr(init, "high", 1.0);
  if (auto seed = init.getAs<IntegerAttr>("seed"))
    options.seed = seed.getValue().getZExtValue();
  InitKind initKind = llvm::StringSwitch<InitKind>(kind)
                          .Case("zeros", InitKind::Zeros)
                          .Case("ones", InitKind::Ones)
                          .Case("normal", InitKind::Normal)
                          .Case("uniform", InitKind::Uniform)
                          .Case("xavier", InitKind::Xavier)
                          .Default(InitKind::He);
  return initParam(initKind, options, dtype, shapeOf(type));
}

/// Elements of a constant, converted to the oracle's representation.
static Tensor constantTensor(ConstantOp op) {
  auto type = op.getType();
  DType dtype = dtypeOf(type.getElementType());
  std::vector<double> values;
  auto elements = llvm::cast<ElementsAttr>(op.getValue());
  if (isa<FloatType>(type.getElementType())) {
    for (APFloat v : elements.getValues<APFloat>())
      values.push_back(v.convertToDouble() * 1.0);
  } else {
    bool isBool = type.getElementType().isInteger(1);
    for (APInt v : elements.getValues<APInt>())
      values.push_back(isBool ? (v.isZero() ? 0.0 : 1.0)
                              : static_cast<double>(v.getSExtValue()));
  }
  return Tensor::fromValues(dtype, shapeOf(type), std::move(values));
}

/// `axes` in [-rank, rank) mapped to sorted non-negative axes.
static std::vector<int64_t> normalizedAxes(ArrayRef<int64_t> axes,
                                           int64_t rank) {
  std::vector<int64_t> result;
  for (int64_t a : axes)
    result.push_back(a < 0 ? a + rank : a);
  std::sort(result.begin(), result.end());
  return result;
}

static int64_t normalizedAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

template <size_t N>
static std::array<int64_t, N> toArray(ArrayRef<int64_t> values) {
  std::array<int64_t, N> result{};
  std::copy_n(values.begin(), N, result.begin());
  return result;
}

static Reduction reductionOf(LossReduction r) {
  switch (r) {
  case LossReduction::none: return Reduction::None;
  case LossReduction::mean: return Reduction::Mean;
  case LossReduction::sum: return Reduction::Sum;
  }
  llvm_unreachable("unknown reduction");
}

namespace {
/// Evaluates one op given its operands' values. Returns nullopt for ops the
/// oracle does not know (reported by the caller).
class OpEvaluator {
public:
  OpEvaluator(llvm::DenseMap<Value, Tensor> &values, ParamStore &params)
      : values(values), params(params) {}

  FailureOr<Tensor> eval(Operation *op);

private:
  const Tensor &in(Value v) { return values.find(v)->second; }

  llvm::DenseMap<Value, Tensor> &values;
  ParamStore &params;
};
} // namespace

FailureOr<Tensor> OpEvaluator::eval(Operation *op) {
  using Result = FailureOr<Tensor>;
  auto reduceOp = [&](auto o, ReduceOp kind) -> Result {
    const Tensor &x = in(o.getX());
    return reduce(kind, x, normalizedAxes(o.getAxes(), x.rank()),
                  o.getKeepdims());
  };
  if (auto elementwise = dyn_cast<ElementwiseOpInterface>(op);
      elementwise && !isa<CastOp>(op)) {
    std::vector<const Tensor *> operands;
    for (Value v : op->getOperands())
      operands.push_back(&in(v));
    return oracle::elementwise(elementwise.getScalarFunction(), operands);
  }
  return llvm::TypeSwitch<Operation *, Result>(op)
      // Sources.
      .Case([&](ParamOp o) -> Result {
        std::string name = o.getName().str();
        auto found = params.find(name);
        if (found != params.end())
          return found->second;
        auto value = materializeParam(o);
        if (succeeded(value))
          params.emplace(name, *value);
        return value;
      })
      .Case([&](ConstantOp o) -> Result { return constantTensor(o); })
      .Case([&](IotaOp o) -> Result {
        auto type = o.getType();
        return iota(shapeOf(type), normalizedAxis(o.getAxis(), type.getRank()),
                    dtypeOf(type.getElementType()));
      })
      // Element-wise: the op's scalar function (cast converts dtypes).
      .Case([&](CastOp o) -> Result {
        return cast(in(o.getX()), dtypeOf(o.getType().getElementType()));
      })
      // Contraction, convolution, pooling.
      .Case([&](MatmulOp o) -> Result {
        return matmul(in(o.getLhs()), in(o.getRhs()), o.getTransposeA(),
                      o.getTransposeB());
      })
      .Case([&](Conv2dOp o) -> Result {
        const Tensor *bias = o.getBias() ? &in(o.getBias()) : nullptr;
        return conv2d(in(o.getX()), in(o.getW()), bias,
                      toArray<2>(o.getStrides()), toArray<4>(o.getPadding()),
                      toArray<2>(o.getDilations()), o.getGroups());
      })
      .Case([&](MaxPool2dOp o) -> Result {
        return maxPool2d(in(o.getX()), toArray<2>(o.getKernel()),
                         toArray<2>(o.getStrides()), toArray<4>(o.getPadding()));
      })
      .Case([&](AvgPool2dOp o) -> Result {
        return avgPool2d(in(o.getX()), toArray<2>(o.getKernel()),
                         toArray<2>(o.getStrides()), toArray<4>(o.getPadding()),
                         o.getCountIncludePad());
      })
      // Reductions and normalisation.
      .Case([&](ReduceSumOp o) { return reduceOp(o, ReduceOp::Sum); })
      .Case([&](ReduceMeanOp o) { return reduceOp(o, ReduceOp::Mean); })
      .Case([&](ReduceMaxOp o) { return reduceOp(o, ReduceOp::Max); })
      .Case([&](ReduceMinOp o) { return reduceOp(o, ReduceOp::Min); })
      .Case([&](ReduceProdOp o) { return reduceOp(o, ReduceOp::Prod); })
      .Case([&](SoftmaxOp o) -> Result {
        const Tensor &x = in(o.getX());
        return softmax(x, normalizedAxis(o.getAxis(), x.rank()));
      })
      .Case([&](LogSoftmaxOp o) -> Result {
        const Tensor &x = in(o.getX());
        return logSoftmax(x, normalizedAxis(o.getAxis(), x.rank()));
      })
      .Case([&](LayerNormOp o) -> Result {
        const Tensor &x = in(o.getX());
        const Tensor *bias = o.getBias() ? &in(o.getBias()) : nullptr;
        return layerNorm(x, in(o.getScale()), bias,
                         normalizedAxis(o.getAxis(), x.rank()),
                         o.getEpsilon().convertToDouble());
      })
      .Case([&](RmsNormOp o) -> Result {
        const Tensor &x = in(o.getX());
        return rmsNorm(x, in(o.getScale()),
                       normalizedAxis(o.getAxis(), x.rank()),
                       o.getEpsilon().convertToDouble());
      })
      // Data movement.
      .Case([&](ReshapeOp o) -> Result {
        return reshape(in(o.getX()), shapeOf(o.getType()));
      })
      .Case([&](BroadcastToOp o) -> Result {
        return broadcastTo(in(o.getX()), shapeOf(o.getType()));
      })
      .Case([&](TransposeOp o) -> Result {
        auto perm = o.getPerm();
        return transpose(in(o.getX()), {perm.begin(), perm.end()});
      })
      .Case([&](ConcatOp o) -> Result {
        std::vector<const Tensor *> inputs;
        for (Value v : o.getInputs())
          inputs.push_back(&in(v));
        return concat(inputs, normalizedAxis(o.getAxis(), inputs[0]->rank()));
      })
      .Case([&](SliceOp o) -> Result {
        auto s = o.getStarts(), l = o.getLimits(), st = o.getStrides();
        return slice(in(o.getX()), {s.begin(), s.end()}, {l.begin(), l.end()},
                     {st.begin(), st.end()});
      })
      .Case([&](GatherOp o) -> Result {
        const Tensor &x = in(o.getX());
        return gather(x, in(o.getIndices()),
                      normalizedAxis(o.getAxis(), x.rank()));
      })
      .Case([&](EmbeddingOp o) -> Result {
        return embedding(in(o.getTable()), in(o.getIds()));
      })
      .Case([&](PadOp o) -> Result {
        auto low = o.getLow(), high = o.getHigh();
        return pad(in(o.getX()), {low.begin(), low.end()},
                   {high.begin(), high.end()}, o.getValue().convertToDouble());
      })
      // Losses.
      .Case([&](CrossEntropyOp o) -> Result {
        return crossEntropy(in(o.getLogits()), in(o.getLabels()),
                            reductionOf(o.getReduction()),
                            dtypeOf(o.getType().getElementType()));
      })
      .Case([&](MseOp o) -> Result {
        return mse(in(o.getPred()), in(o.getTarget()),
                   reductionOf(o.getReduction()));
      })
      .Default([&](Operation *o) -> Result {
        return o->emitError("the oracle cannot evaluate '")
               << o->getName() << "'";
      });
}

FailureOr<Tensor> evaluateOp(Operation *op, const std::vector<Tensor> &operands,
                             ParamStore &params) {
  llvm::DenseMap<Value, Tensor> values;
  for (auto [value, tensor] : llvm::zip(op->getOperands(), operands))
    values[value] = tensor;
  OpEvaluator evaluator(values, params);
  try {
    return evaluator.eval(op);
  } catch (const EvalError &error) {
    return op->emitError(error.what());
  }
}

/// Evaluates the ops of `body` in order with its arguments bound to `args`,
/// up to its terminator (`func.return` or `dlc.yield`), whose operands'
/// values are returned. A fusion region is evaluated the same way, op by
/// op: fusing changes where values live, never what they are.
static FailureOr<std::vector<Tensor>>
evaluateBlock(Block &body, const std::vector<Tensor> &args, ParamStore &params) {
  llvm::DenseMap<Value, Tensor> values;
  for (auto [arg, tensor] : llvm::zip(body.getArguments(), args))
    values[arg] = tensor;
  OpEvaluator evaluator(values, params);
  for (Operation &op : body) {
    if (op.hasTrait<mlir::OpTrait::IsTerminator>()) {
      std::vector<Tensor> results;
      for (Value v : op.getOperands())
        results.push_back(values.find(v)->second);
      return results;
    }
    if (auto fusion = dyn_cast<FusionOp>(op)) {
      std::vector<Tensor> inputs;
      for (Value v : fusion.getInputs())
        inputs.push_back(values.find(v)->second);
      auto results = evaluateBlock(fusion.getBody().front(), inputs, params);
      if (failed(results))
        return failure();
      for (auto [result, tensor] : llvm::zip(fusion.getResults(), *results))
        values[result] = std::move(tensor);
      continue;
    }
    FailureOr<Tensor> result = failure();
    try {
      result = evaluator.eval(&op);
    } catch (const EvalError &error) {
      return op.emitError(error.what());
    }
    if (failed(result))
      return failure();
    values[op.getResult(0)] = std::move(*result);
  }
  return mlir::emitError(body.getParent()->getLoc(), "block has no terminator");
}

FailureOr<std::vector<Tensor>> evaluate(func::FuncOp func,
                                        const std::vector<Tensor> &inputs,
                                        ParamStore &params) {
  Block &body = func.getBody().front();
  if (inputs.size() != body.getNumArguments())
    return func.emitError("the graph takes ")
           << body.getNumArguments() << " inputs, " << inputs.size()
           << " were given";
  for (auto [arg, tensor] : llvm::zip(body.getArguments(), inputs)) {
    auto type = llvm::cast<RankedTensorType>(arg.getType());
    if (tensor.dtype != dtypeOf(type.getElementType()) ||
        tensor.shape != shapeOf(type))
      return func.emitError("input ")
             << arg.getArgNumber() << " is " << dtypeName(tensor.dtype)
             << formatShape(tensor.shape) << ", the graph expects "
             << dtypeName(dtypeOf(type.getElementType()))
             << formatShape(shapeOf(type));
  }
  return evaluateBlock(body, inputs, params);
}

} // namespace dlc::oracle
