//===- DynamicRows.cpp - one module for a range of a dimension ------------===//
//
// See DynamicRows.h.
//
//===----------------------------------------------------------------------===//

#include "passes/analysis/DynamicRows.h"

#include "ir/DlcDialect.h"
#include "ir/ShardingRule.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace {

/// Both builds' ops in the same walk order, and the values of the build at
/// max that depend on N.
class Comparison {
public:
  Comparison(const dlc::DynamicDimRange &range, int64_t probe) : range(range), probe(probe) {}

  /// The start of every error: which option asked for what.
  std::string option() const {
    return "--dim " + range.name + "=" + std::to_string(range.min) + ".." +
           std::to_string(range.max);
  }

  /// Records `atMax` as depending on N when its type differs from
  /// `atProbe`'s; fails (at `where`) unless only the outermost dimension
  /// differs, in proportion to N.
  LogicalResult compare(Value atMax, Value atProbe, Operation *where, const Twine &what) {
    if (atMax.getType() == atProbe.getType())
      return success();
    auto a = dyn_cast<RankedTensorType>(atMax.getType());
    auto b = dyn_cast<RankedTensorType>(atProbe.getType());
    auto fail = [&](const Twine &why) {
      return where->emitError() << option() << ": " << what << " " << why
                                << "; one module cannot serve every " << range.name
                                << " (compile one per size)";
    };
    if (!a || !b || a.getRank() != b.getRank() || a.getElementType() != b.getElementType())
      return fail("changes its type with " + range.name);
    if (a.getRank() == 0)
      return fail("is a scalar that depends on " + range.name);
    // N's dimension: the first that differs; only dimensions of 1 may come
    // before it (they leave its rows the outermost in memory).
    int64_t axis = 0;
    while (axis < a.getRank() && a.getDimSize(axis) == b.getDimSize(axis))
      ++axis;
    for (int64_t d = 0; d < a.getRank(); ++d)
      if ((d < axis && a.getDimSize(d) != 1) || (d > axis && a.getDimSize(d) != b.getDimSize(d)))
        return fail("has " + range.name + " in dimension " + Twine(d < axis ? axis : d) +
                    ", not outermost");
    int64_t atTop = a.getDimSize(axis), atOther = b.getDimSize(axis);
    if (atTop % range.max != 0 || atTop / range.max * probe != atOther)
      return fail("has an outermost dimension of " + Twine(atTop) + " at " + range.name + "=" +
                  Twine(range.max) + " and " + Twine(atOther) + " at " + range.name + "=" +
                  Twine(probe) + ", not a multiple of " + range.name);
    dependent[atMax] = axis;
    return success();
  }

  /// Whether the op keeps the rows of N apart (DynamicRows.h).
  LogicalResult checkOp(Operation *op) {
    bool operandDepends =
        llvm::any_of(op->getOperands(), [&](Value v) { return dependent.contains(v); });
    bool resultDepends =
        llvm::any_of(op->getResults(), [&](Value v) { return dependent.contains(v); });
    if (!operandDepends && !resultDepends)
      return success();
    auto fail = [&](const Twine &why) {
      return op->emitError() << option() << ": '" << op->getName() << "' " << why
                             << "; one module cannot serve every " << range.name
                             << " (compile one per size)";
    };
    if (op->hasTrait<OpTrait::IsTerminator>())
      return success(); // the function's return: its operands are checked where defined
    if (isa<dlc::ParamOp, dlc::ConstantOp>(op))
      return fail("holds values whose shape depends on " + range.name);
    if (op->getNumRegions() != 0)
      return fail("has regions over " + range.name + " (not supported in a range yet)");
    if (operandDepends)
      for (auto [r, result] : llvm::enumerate(op->getResults()))
        if (!dependent.contains(result))
          return fail("combines the rows of " + range.name + " (result " + Twine(r) +
                      " does not depend on it)");
    auto ruled = dyn_cast<dlc::ShardingRuleOpInterface>(op);
    if (!ruled)
      return fail("states no sharding rule, so nothing says it keeps rows of " + range.name +
                  " apart");
    dlc::ShardingRule rule = ruled.getShardingRule();
    if (rule.operands.size() != op->getNumOperands() || rule.results.size() != op->getNumResults())
      return fail("has a sharding rule that does not match its operands");
    // The factor of the dependent results' dimension of N.
    int64_t factor = -1;
    for (auto [r, result] : llvm::enumerate(op->getResults())) {
      if (!dependent.contains(result))
        continue;
      size_t axis = dependent.lookup(result);
      int64_t f = axis < rule.results[r].size() ? rule.results[r][axis] : -1;
      if (f < 0 || (factor >= 0 && f != factor))
        return fail("computes each row of " + range.name + " from other rows (its outermost "
                    "result dimension cannot be split)");
      factor = f;
    }
    // Whether `factor` is in `dims` elsewhere than at `axis` (-1: anywhere).
    auto usesFactor = [&](ArrayRef<int64_t> dims, int64_t axis) {
      for (auto [d, f] : llvm::enumerate(dims))
        if (f == factor && static_cast<int64_t>(d) != axis)
          return true;
      return false;
    };
    auto axisOf = [&](Value v) -> int64_t {
      auto it = dependent.find(v);
      return it == dependent.end() ? -1 : it->second;
    };
    for (auto [r, result] : llvm::enumerate(op->getResults()))
      if (usesFactor(rule.results[r], axisOf(result)))
        return fail("moves " + range.name + " inward in a result");
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      ArrayRef<int64_t> dims = rule.operands[i];
      if (int64_t axis = axisOf(operand); axis >= 0) {
        if (axis >= static_cast<int64_t>(dims.size()) || dims[axis] != factor ||
            usesFactor(dims, axis))
          return fail("reads operand " + Twine(i) + " across rows of " + range.name);
      } else if (usesFactor(dims, -1)) {
        return fail("indexes operand " + Twine(i) + " by the rows of " + range.name);
      }
    }
    return success();
  }

  const dlc::DynamicDimRange &range;
  int64_t probe;
  /// The values that depend on N, and the dimension N is in (only
  /// dimensions of 1 before it).
  llvm::DenseMap<Value, int64_t> dependent;
};

SmallVector<Operation *> opsOf(func::FuncOp func) {
  SmallVector<Operation *> ops;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op != func.getOperation())
      ops.push_back(op);
  });
  return ops;
}

} // namespace

LogicalResult dlc::markDynamicRows(func::FuncOp atMax, func::FuncOp atProbe,
                                   const DynamicDimRange &range, int64_t probe) {
  Comparison c(range, probe);
  if (atMax.getNumArguments() != atProbe.getNumArguments() ||
      atMax.getNumResults() != atProbe.getNumResults())
    return atMax.emitError() << c.option() << ": the graph's inputs or outputs change with "
                             << range.name;
  for (auto [a, b] : llvm::zip(atMax.getArguments(), atProbe.getArguments()))
    if (failed(c.compare(a, b, atMax, "input " + Twine(a.getArgNumber()))))
      return failure();
  SmallVector<Operation *> opsAtMax = opsOf(atMax), opsAtProbe = opsOf(atProbe);
  for (size_t i = 0; i < opsAtMax.size(); ++i) {
    Operation *a = opsAtMax[i];
    Operation *b = i < opsAtProbe.size() ? opsAtProbe[i] : nullptr;
    if (!b || a->getName() != b->getName() || a->getNumOperands() != b->getNumOperands() ||
        a->getNumResults() != b->getNumResults() || a->getNumRegions() != b->getNumRegions())
      return a->emitError() << c.option() << ": the graph built at " << range.name << "="
                            << range.max << " differs here from the one at " << range.name
                            << "=" << probe << " (its ops depend on " << range.name
                            << "); one module cannot serve every " << range.name
                            << " (compile one per size)";
    for (auto [ra, rb] : llvm::zip(a->getRegions(), b->getRegions()))
      for (auto [ba, bb] : llvm::zip(ra, rb))
        for (auto [x, y] : llvm::zip(ba.getArguments(), bb.getArguments()))
          if (failed(c.compare(x, y, a, "a block argument")))
            return failure();
    for (auto [x, y] : llvm::zip(a->getResults(), b->getResults()))
      if (failed(c.compare(x, y, a, "its result")))
        return failure();
  }
  if (opsAtProbe.size() != opsAtMax.size())
    return atMax.emitError() << c.option() << ": the graph has more ops at " << range.name
                             << "=" << probe << " than at " << range.max;
  for (Operation *op : opsAtMax)
    if (failed(c.checkOp(op)))
      return failure();
  // The module's inputs and outputs carry N in dimension 0 (module.fbs
  // DynamicDim); inside, dimensions of 1 may come first.
  Operation *ret = atMax.getBody().front().getTerminator();
  for (BlockArgument arg : atMax.getArguments())
    if (c.dependent.lookup(arg) > 0)
      return atMax.emitError() << c.option() << ": input " << arg.getArgNumber() << " has "
                               << range.name << " in dimension " << c.dependent.lookup(arg)
                               << "; the inputs and outputs of a module for a range have it "
                                  "in dimension 0";
  for (auto [j, v] : llvm::enumerate(ret->getOperands()))
    if (c.dependent.lookup(v) > 0)
      return atMax.emitError() << c.option() << ": output " << j << " has " << range.name
                               << " in dimension " << c.dependent.lookup(v)
                               << "; the inputs and outputs of a module for a range have it "
                                  "in dimension 0";

  MLIRContext *context = atMax.getContext();
  Builder b(context);
  atMax->setAttr(kDynamicDimAttr,
                 b.getDictionaryAttr({b.getNamedAttr("name", b.getStringAttr(range.name)),
                                      b.getNamedAttr("min", b.getI64IntegerAttr(range.min)),
                                      b.getNamedAttr("max", b.getI64IntegerAttr(range.max))}));
  // Ops keep the mark through fusion: code generation lets a kernel run
  // its first rows only when every result it yields is a marked op's.
  for (Operation *op : opsAtMax)
    if (llvm::any_of(op->getResults(), [&](Value v) { return c.dependent.contains(v); }))
      op->setAttr(kDynamicRowsAttr, b.getUnitAttr());
  for (BlockArgument arg : atMax.getArguments())
    if (c.dependent.contains(arg))
      atMax.setArgAttr(arg.getArgNumber(), kDynamicRowsAttr, b.getUnitAttr());
  for (auto [j, v] : llvm::enumerate(ret->getOperands()))
    if (c.dependent.contains(v))
      atMax.setResultAttr(j, kDynamicRowsAttr, b.getUnitAttr());
  return success();
}

std::optional<dlc::DynamicDimRange> dlc::dynamicDimOf(func::FuncOp func) {
  auto dict = func->getAttrOfType<DictionaryAttr>(kDynamicDimAttr);
  if (!dict)
    return std::nullopt;
  auto name = dict.getAs<StringAttr>("name");
  auto min = dict.getAs<IntegerAttr>("min"), max = dict.getAs<IntegerAttr>("max");
  if (!name || !min || !max)
    return std::nullopt;
  return DynamicDimRange{name.str(), min.getInt(), max.getInt()};
}
