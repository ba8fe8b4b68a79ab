//===- Interpreter.cpp - the float64 oracle: evaluates dlc IR -------------===//
//
// One case per op: read the operands' tensors, normalise attributes (negative
// axes), call the kernel. Nothing here computes values itself.
//
//===----------------------------------------------------------------------===//

#include "oracle/Interpreter.h"

#include "ir/DlcDialect.h"
#include "ir/ParamSpec.h"
#include "oracle/kernels/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace dlc::oracle {

static std::vector<int64_t> shapeOf(Type type) {
  auto shape = llvm::cast<RankedTensorType>(type).getShape();
  return {shape.begin(), shape.end()};
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
          return Tensor::fromHost(found->second);
        auto value = paramValue(o);
        if (failed(value))
          return failure();
        return Tensor::fromHost(params.emplace(name, *value).first->second);
      })
      .Case([&](ConstantOp o) -> Result {
        auto value = hostTensorOf(llvm::cast<ElementsAttr>(o.getValue()), o);
        if (failed(value))
          return failure();
        return Tensor::fromHost(*value);
      })
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
        auto convolve = [&](const Tensor &x) {
          return conv2d(x, in(o.getW()), bias, toArray<2>(o.getStrides()),
                        toArray<4>(o.getPadding()), toArray<2>(o.getDilations()),
                        o.getGroups());
        };
        if (!o.getChannelsLast())
          return convolve(in(o.getX()));
        // [N, H, W, C]: the NCHW convolution of its transpose, transposed back.
        return transpose(convolve(transpose(in(o.getX()), {0, 3, 1, 2})), {0, 2, 3, 1});
      })
      // Channels-last pooling: the NCHW pooling of its transpose, transposed back.
      .Case([&](MaxPool2dOp o) -> Result {
        bool last = o.getChannelsLast();
        Tensor y = maxPool2d(last ? transpose(in(o.getX()), {0, 3, 1, 2}) : in(o.getX()),
                             toArray<2>(o.getKernel()), toArray<2>(o.getStrides()),
                             toArray<4>(o.getPadding()));
        return last ? transpose(y, {0, 2, 3, 1}) : y;
      })
      .Case([&](AvgPool2dOp o) -> Result {
        bool last = o.getChannelsLast();
        Tensor y = avgPool2d(last ? transpose(in(o.getX()), {0, 3, 1, 2}) : in(o.getX()),
                             toArray<2>(o.getKernel()), toArray<2>(o.getStrides()),
                             toArray<4>(o.getPadding()), o.getCountIncludePad());
        return last ? transpose(y, {0, 2, 3, 1}) : y;
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
                            dtypeOf(o.getType().getElementType()),
                            o.getLabelSmoothing().convertToDouble(),
                            static_cast<int64_t>(o.getIgnoreIndex()));
      })
      .Case([&](MseOp o) -> Result {
        return mse(in(o.getPred()), in(o.getTarget()),
                   reductionOf(o.getReduction()));
      })
      // Collectives: a group of one rank is the identity; a larger group
      // needs every rank's values (evaluateSpmd, oracle/Spmd.h).
      .Case<AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp, BroadcastOp,
            ShardOp>([&](auto o) -> Result {
        if (o.getGroupSize() == 1)
          return in(o.getX());
        return o->emitError("'")
               << o->getName() << "' runs on a group of " << o.getGroupSize()
               << " ranks: evaluate the program on its mesh (the oracle's "
                  "SPMD simulation, oracle::evaluateSpmd)";
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
