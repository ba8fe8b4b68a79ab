//===- FoldConstants.cpp - evaluate parameter-free subgraphs --------------===//
//
// Replaces every op whose operands are all compile-time constants by a
// dlc.constant holding its value, computed by the oracle's kernels (the same
// float64 kernels, rounded once to the declared dtype, that evaluate the
// graph, so folding never changes a result). Expects a graph: top-level dlc
// ops on static shapes; fusion regions are left alone.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "oracle/Interpreter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <cstring>

namespace dlc {
#define GEN_PASS_DEF_DLCFOLDCONSTANTS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

/// True for the ops whose value is known at compile time without folding
/// anything: dense constants, and iota (which is a function of its type). An
/// iota is only materialised as a constant when an op that reads it folds.
static bool isConstantSource(Operation *op) {
  if (auto constant = dyn_cast<ConstantOp>(op))
    return isa<DenseElementsAttr>(constant.getValue());
  return isa<IotaOp>(op);
}

/// True for ops this pass may evaluate: dlc ops that compute one result
/// from operands, without regions (sources have no operands; params are
/// never folded: their values belong to the user, not the compiler).
static bool isFoldable(Operation *op) {
  return isa<DlcDialect>(op->getDialect()) && op->getNumResults() == 1 &&
         op->getNumRegions() == 0 && op->getNumOperands() > 0;
}

/// `tensor` as the elements attribute of `type`. The oracle's values are
/// already rounded to the dtype, so each converts exactly: floats through
/// APFloat into the type's semantics (f16, bf16 included), integers as
/// two's-complement APInts of the type's width, i1 as bool. All-equal
/// values become a splat.
static DenseElementsAttr toAttribute(const oracle::Tensor &tensor,
                                     RankedTensorType type) {
  Type element = type.getElementType();
  const std::vector<double> &data = tensor.data;
  bool splat =
      !data.empty() && std::all_of(data.begin(), data.end(), [&](double v) {
        return std::memcmp(&v, &data[0], sizeof(double)) == 0;
      });
  ArrayRef<double> values(data.data(), splat ? 1 : data.size());
  if (element.isInteger(1)) {
    SmallVector<bool> bits;
    for (double v : values)
      bits.push_back(v != 0);
    return DenseElementsAttr::get(type, bits);
  }
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> floats;
    for (double v : values) {
      APFloat f(v);
      bool losesInfo = false;
      f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &losesInfo);
      floats.push_back(f);
    }
    return DenseElementsAttr::get(type, floats);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  SmallVector<APInt> ints;
  for (double v : values)
    ints.push_back(APInt(width, static_cast<uint64_t>(toInt64(v)),
                         /*isSigned=*/true));
  return DenseElementsAttr::get(type, ints);
}

namespace {

struct DlcFoldConstantsPass
    : dlc::impl::DlcFoldConstantsBase<DlcFoldConstantsPass> {
  using DlcFoldConstantsBase::DlcFoldConstantsBase;

  /// 1. Walk the top-level ops in program order (a topological order), so
  ///    an op sees its operands already folded.
  /// 2. An op all of whose operands are constant sources, and whose result
  ///    has at most `max-elements` elements, is evaluated by the oracle; a
  ///    failure (an op the oracle does not know, an index out of range) is
  ///    not an error here: the op stays, and the run reports it.
  /// 3. The op is replaced by a dlc.constant; sources left without users
  ///    are erased.
  void runOnOperation() override {
    Block &body = getOperation().getBody().front();
    // Diagnostics of evaluations that fail are dropped (step 2): those at
    // the op being evaluated; anything else goes on to the next handler.
    std::optional<Location> evaluating;
    ScopedDiagnosticHandler quiet(&getContext(), [&](Diagnostic &diag) {
      return success(evaluating && diag.getLocation() == *evaluating);
    });
    ParamStore noParams;
    auto evaluate = [&](Operation *op, const std::vector<oracle::Tensor> &in) {
      evaluating = op->getLoc();
      auto value = oracle::evaluateOp(op, in, noParams);
      evaluating.reset();
      return value;
    };
    llvm::DenseMap<Value, oracle::Tensor> known;
    auto valueOf = [&](Value v) -> FailureOr<oracle::Tensor> {
      auto found = known.find(v);
      if (found != known.end())
        return found->second;
      auto value = evaluate(v.getDefiningOp(), {});
      if (succeeded(value))
        known.try_emplace(v, *value);
      return value;
    };

    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (!isFoldable(&op))
        continue;
      auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType());
      if (!type || !type.hasStaticShape() ||
          type.getNumElements() > maxElements)
        continue;
      if (!llvm::all_of(op.getOperands(), [](Value v) {
            Operation *def = v.getDefiningOp();
            return def && isConstantSource(def);
          }))
        continue;
      std::vector<oracle::Tensor> operands;
      for (Value v : op.getOperands()) {
        auto value = valueOf(v);
        if (failed(value))
          break;
        operands.push_back(std::move(*value));
      }
      if (operands.size() != op.getNumOperands())
        continue;
      auto result = evaluate(&op, operands);
      if (failed(result))
        continue;

      OpBuilder builder(&op);
      auto constant = builder.create<ConstantOp>(op.getLoc(), type,
                                                 toAttribute(*result, type));
      known.try_emplace(constant.getResult(), std::move(*result));
      llvm::SetVector<Operation *> sources;
      for (Value v : op.getOperands())
        sources.insert(v.getDefiningOp());
      op.getResult(0).replaceAllUsesWith(constant.getResult());
      op.erase();
      for (Operation *source : sources)
        if (source->use_empty()) {
          known.erase(source->getResult(0));
          source->erase();
        }
    }
  }
};

} // namespace
