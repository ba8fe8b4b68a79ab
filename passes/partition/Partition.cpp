//===- Partition.cpp - one SPMD program per mesh from a graph -------------===//
//
// One walk over the graph in order. Each op's factors take a mesh axis from
// an operand that already has it on a dimension of that factor (first
// operand first; an axis serves one factor per op; a factor the axis size
// does not divide stays whole); the presets add the splits no operand has
// yet. Operands are then resharded to what the factors say, and the
// results get their shardings and local types.
//
//===----------------------------------------------------------------------===//

#include "passes/partition/Partition.h"

#include "ir/DlcDialect.h"
#include "ir/Vjp.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;

namespace dlc {

namespace {

/// How a value is split: per dimension a mesh axis index or -1, and the
/// axes over which it is a pending reduction.
struct Sharding {
  SmallVector<int64_t, 4> dims;
  SmallVector<std::pair<int64_t, PartialKind>, 2> partial;

  static Sharding whole(Value v) {
    Sharding s;
    s.dims.assign(shapeOfValue(v).size(), -1);
    return s;
  }
};

CollectiveReduction collectiveOf(PartialKind kind) {
  switch (kind) {
  case PartialKind::Max: return CollectiveReduction::max;
  case PartialKind::Min: return CollectiveReduction::min;
  case PartialKind::Avg: return CollectiveReduction::avg;
  default: return CollectiveReduction::sum;
  }
}

class Partitioner {
public:
  Partitioner(func::FuncOp func, const PartitionOptions &options)
      : func(func), options(options), mesh(options.mesh), builder(func.getContext()) {}

  LogicalResult run();

private:
  int64_t axisSize(int64_t axis) const { return mesh.axes()[axis].second; }
  std::string axisName(int64_t axis) const { return mesh.axes()[axis].first; }
  int64_t axisIndex(const std::string &name) const { return mesh.axisIndex(name); }

  Sharding &shardingOf(Value v) {
    auto found = shardings.find(v);
    if (found == shardings.end())
      found = shardings.try_emplace(v, Sharding::whole(v)).first;
    return found->second;
  }

  /// The local type of `v` (by its global type) split by `dims`.
  Type localType(Value v, ArrayRef<int64_t> dims) const {
    auto ranked = cast<RankedTensorType>(globalTypes.lookup(v));
    SmallVector<int64_t> shape(ranked.getShape());
    for (auto [d, axis] : llvm::enumerate(dims))
      if (axis >= 0)
        shape[d] /= axisSize(axis);
    return RankedTensorType::get(shape, ranked.getElementType());
  }

  /// `v` (placed before `user`) as `wanted`: partial sums resolved, split
  /// dims gathered, then split as wanted. Returns the new value.
  Value reshard(Value v, ArrayRef<int64_t> wanted, Operation *user);

  /// Builds one collective before `user`.
  Value collective(StringRef name, Value x, Type type, int64_t axis,
                   ArrayRef<NamedAttribute> extra, Operation *user);

  LogicalResult partitionOp(Operation *op);
  /// Backward propagation: from the results that must leave split (ZeRO's
  /// moments), each op's operands are hinted the splits its rule maps the
  /// hinted result dims to; the forward walk takes a hint, after what the
  /// operands already have, for an op that resolves a partial sum.
  void propagateHints();
  /// Moves each collective right after what computes its operand (the
  /// walk placed it before its first user): a gradient's all-reduce then
  /// starts as soon as the backward pass has it, and the executor, which
  /// waits for a collective only before the first step touching its
  /// buffers, overlaps it with the rest of the backward pass.
  void hoistCollectives();
  LogicalResult shardArguments();
  /// Whether state `name` is a parameter's optimizer moment: `P.m` where
  /// `P` names another state argument (Differentiate's naming).
  bool isOptimizerMoment(StringRef name);
  /// A dlc.param, or a train step's state argument that is a parameter
  /// (not an optimizer moment).
  bool isParameter(Value v);
  LogicalResult shardParameters();
  /// `axes` (mesh axis names, "" whole) as axis indices; an error at `at`
  /// naming `what` for an unknown axis or a count that is not the rank.
  FailureOr<SmallVector<int64_t, 4>> axesOf(ArrayRef<std::string> axes, Value v,
                                            Operation *at, const std::string &what);

  func::FuncOp func;
  const PartitionOptions &options;
  const Mesh &mesh;
  OpBuilder builder;
  llvm::DenseMap<Value, Sharding> shardings;
  /// Every value's unpartitioned type (the IR holds local ones as the walk
  /// goes), and each op's rule, taken on the unpartitioned graph.
  llvm::DenseMap<Value, Type> globalTypes;
  llvm::DenseMap<Operation *, ShardingRule> rules;
  /// Per value: the mesh axis per dimension its users would like split.
  llvm::DenseMap<Value, SmallVector<int64_t, 4>> hints;
  /// Per state name: how it arrives and leaves (ZeRO's split moments).
  std::map<std::string, SmallVector<int64_t, 4>> splitState;
  /// A value already resharded for an earlier user (which it dominates).
  std::map<std::pair<void *, std::vector<int64_t>>, Value> resharded;
};

Value Partitioner::collective(StringRef name, Value x, Type type, int64_t axis,
                              ArrayRef<NamedAttribute> extra, Operation *user) {
  builder.setInsertionPoint(user);
  SmallVector<NamedAttribute> attrs(extra);
  attrs.push_back(builder.getNamedAttr(
      "mesh_axes", builder.getStrArrayAttr({StringRef(axisName(axis))})));
  attrs.push_back(builder.getNamedAttr("group_size",
                                       builder.getI64IntegerAttr(axisSize(axis))));
  OperationState state(user->getLoc(), name);
  state.addOperands(x);
  state.addTypes(type);
  state.addAttributes(attrs);
  return builder.create(state)->getResult(0);
}

Value Partitioner::reshard(Value v, ArrayRef<int64_t> wanted, Operation *user) {
  Sharding current = shardingOf(v);
  if (current.partial.empty() && ArrayRef<int64_t>(current.dims) == wanted)
    return v;
  std::pair<void *, std::vector<int64_t>> key{v.getAsOpaquePointer(),
                                               std::vector<int64_t>(wanted.begin(), wanted.end())};
  if (auto found = resharded.find(key); found != resharded.end())
    return found->second;
  Value value = v;
  // 1. Partial values become complete: reduce-scattered onto the dim the
  // user wants split over the same axis (each rank reduces only its
  // block: half an all-reduce's traffic), else all-reduced.
  SmallVector<int64_t, 4> dims = current.dims;
  for (auto [axis, kind] : current.partial) {
    Value from = value;
    auto kindAttr = builder.getNamedAttr(
        "kind", CollectiveReductionAttr::get(builder.getContext(), collectiveOf(kind)));
    auto scatterDim = llvm::find_if(llvm::seq<size_t>(0, dims.size()), [&](size_t d) {
      return wanted[d] == axis && dims[d] < 0;
    });
    if (scatterDim != llvm::seq<size_t>(0, dims.size()).end()) {
      dims[*scatterDim] = axis;
      value = collective(
          ReduceScatterOp::getOperationName(), value, localType(v, dims), axis,
          {kindAttr, builder.getNamedAttr("axis", builder.getI64IntegerAttr(*scatterDim))},
          user);
    } else {
      value = collective(AllReduceOp::getOperationName(), value, value.getType(), axis,
                         {kindAttr}, user);
    }
    globalTypes[value] = globalTypes.lookup(from);
  }
  current.partial.clear();
  // 2. Split dims that must be whole or split otherwise are gathered.
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 0 || dims[d] == wanted[d])
      continue;
    int64_t axis = dims[d];
    dims[d] = -1;
    value = collective(AllGatherOp::getOperationName(), value, localType(v, dims), axis,
                       {builder.getNamedAttr("axis", builder.getI64IntegerAttr(d))}, user);
    globalTypes[value] = globalTypes.lookup(v);
  }
  // 3. Whole dims that must be split keep this rank's block.
  for (size_t d = 0; d < dims.size(); ++d) {
    if (wanted[d] < 0 || dims[d] == wanted[d])
      continue;
    dims[d] = wanted[d];
    value = collective(ShardOp::getOperationName(), value, localType(v, dims), wanted[d],
                       {builder.getNamedAttr("axis", builder.getI64IntegerAttr(d))}, user);
    globalTypes[value] = globalTypes.lookup(v);
  }
  Sharding s;
  s.dims = dims;
  shardings[value] = s;
  resharded[key] = value;
  return value;
}

LogicalResult Partitioner::partitionOp(Operation *op) {
  if (!rules.count(op))
    return op->emitError("'") << op->getName()
                              << "' has no sharding rule: it cannot be partitioned";
  const ShardingRule &rule = rules[op];
  int64_t factors = rule.numFactors();
  SmallVector<int64_t> factorAxis(factors, -1);
  SmallVector<bool> axisUsed(mesh.axes().size(), false);
  auto take = [&](int64_t f, int64_t axis) {
    if (f < 0 || axis < 0 || factorAxis[f] >= 0 || axisUsed[axis] ||
        rule.factorSizes[f] % axisSize(axis) != 0)
      return;
    bool inResult = llvm::any_of(rule.results, [&](auto &dims) {
      return llvm::is_contained(dims, f);
    });
    if (!inResult && rule.reductions[f] == PartialKind::None)
      return;
    factorAxis[f] = axis;
    axisUsed[axis] = true;
  };
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    const Sharding &s = shardingOf(operand);
    for (auto [d, f] : llvm::enumerate(rule.operands[i]))
      take(f, s.dims[d]);
  }
  // Megatron: a matmul on a parameter splits the columns (N) when nothing
  // split K. In a train step the parameters are state arguments, kept
  // whole on every rank: each rank multiplies by its own columns.
  if (options.preset.tensor && isa<MatmulOp>(op) && isParameter(op->getOperand(1))) {
    int64_t model = axisIndex("model");
    auto matmul = cast<MatmulOp>(op);
    int64_t rb = rule.operands[1].size();
    int64_t k = rule.operands[1][matmul.getTransposeB() ? rb - 1 : rb - 2];
    int64_t n = rule.operands[1][matmul.getTransposeB() ? rb - 2 : rb - 1];
    if (model >= 0 && factorAxis[k] < 0)
      take(n, model);
  }
  // Then, where an operand is a pending reduction, what the users want
  // (hints, lower priority than the operands): the reduction becomes a
  // reduce-scatter instead of an all-reduce.
  bool reducesPartial = llvm::any_of(op->getOperands(), [&](Value v) {
    return !shardingOf(v).partial.empty();
  });
  for (auto [r, result] : llvm::enumerate(op->getResults())) {
    auto hint = hints.find(result);
    if (!reducesPartial || hint == hints.end())
      continue;
    for (auto [d, f] : llvm::enumerate(rule.results[r]))
      take(f, hint->second[d]);
  }
  // Operands as the factors say.
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    SmallVector<int64_t, 4> wanted;
    for (int64_t f : rule.operands[i])
      wanted.push_back(f >= 0 ? factorAxis[f] : -1);
    Value v = reshard(operand, wanted, op);
    if (v != operand)
      op->setOperand(i, v);
  }
  // Results: their split dims, and partial over the split reductions.
  for (auto [r, result] : llvm::enumerate(op->getResults())) {
    Sharding s;
    for (int64_t f : rule.results[r])
      s.dims.push_back(f >= 0 ? factorAxis[f] : -1);
    for (int64_t f = 0; f < factors; ++f) {
      bool inResult = llvm::any_of(rule.results, [&](auto &dims) {
        return llvm::is_contained(dims, f);
      });
      if (!inResult && factorAxis[f] >= 0)
        s.partial.push_back({factorAxis[f], rule.reductions[f]});
    }
    result.setType(localType(result, s.dims));
    shardings[result] = s;
  }
  // A slice's limits are sizes: on a dimension it takes whole (the only
  // ones its rule lets split), the local size.
  if (auto slice = dyn_cast<SliceOp>(op)) {
    SmallVector<int64_t> limits(slice.getLimits());
    ArrayRef<int64_t> local = cast<RankedTensorType>(slice.getX().getType()).getShape();
    for (auto [d, axis] : llvm::enumerate(shardings[slice.getResult()].dims))
      if (axis >= 0)
        limits[d] = local[d];
    slice.setLimits(limits);
  }
  return success();
}

FailureOr<SmallVector<int64_t, 4>>
Partitioner::axesOf(ArrayRef<std::string> axes, Value v, Operation *at,
                    const std::string &what) {
  SmallVector<int64_t, 4> wanted(shapeOfValue(v).size(), -1);
  if (axes.size() != wanted.size())
    return at->emitError("the sharding of ")
           << what << " names " << axes.size() << " dimensions, it has "
           << wanted.size();
  SmallVector<bool> used(mesh.axes().size(), false);
  for (auto [d, axis] : llvm::enumerate(axes)) {
    if (axis.empty())
      continue;
    wanted[d] = axisIndex(axis);
    if (wanted[d] < 0)
      return at->emitError("the sharding of ")
             << what << " names mesh axis '" << axis << "', which the mesh "
             << mesh.str() << " does not have";
    if (used[wanted[d]])
      return at->emitError("the sharding of ")
             << what << " splits two dimensions over mesh axis '" << axis << "'";
    used[wanted[d]] = true;
    if (shapeOfValue(v)[d] % axisSize(wanted[d]) != 0)
      return at->emitError("the sharding of ")
             << what << " splits dimension " << d << " (" << shapeOfValue(v)[d]
             << ") over mesh axis '" << axis << "' of " << axisSize(wanted[d])
             << ", which does not divide it";
  }
  return wanted;
}

static std::vector<std::string> stringsOf(ArrayAttr attr) {
  std::vector<std::string> out;
  for (Attribute a : attr)
    out.push_back(cast<StringAttr>(a).str());
  return out;
}

LogicalResult Partitioner::shardParameters() {
  Block &body = func.getBody().front();
  for (ParamOp param : llvm::to_vector(body.getOps<ParamOp>())) {
    auto attr = param->getAttrOfType<ArrayAttr>("dlc.sharding");
    if (!attr || param->use_empty())
      continue;
    auto wanted = axesOf(stringsOf(attr), param.getResult(), param,
                         "parameter '" + param.getName().str() + "'");
    if (failed(wanted))
      return failure();
    Value local = reshard(param.getResult(), *wanted, param->getNextNode());
    param.getResult().replaceAllUsesExcept(local, local.getDefiningOp());
  }
  return success();
}

LogicalResult Partitioner::shardArguments() {
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dlc.name");
    auto annotated = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), "dlc.sharding");
    SmallVector<int64_t, 4> wanted(shapeOfValue(arg).size(), -1);
    std::string what = "input '" + (name ? name.str() : std::to_string(arg.getArgNumber())) + "'";
    if (name && options.argShardings.count(name.str())) {
      auto axes = axesOf(options.argShardings.at(name.str()), arg, func, what);
      if (failed(axes))
        return failure();
      wanted = *axes;
    } else if (annotated) {
      auto axes = axesOf(stringsOf(annotated), arg, func, what);
      if (failed(axes))
        return failure();
      wanted = *axes;
    } else if (auto state = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dlc.state");
               state && options.stateShardings.count(state.str())) {
      auto axes = axesOf(options.stateShardings.at(state.str()), arg, func,
                         "state '" + state.str() + "'");
      if (failed(axes))
        return failure();
      wanted = *axes;
      splitState[state.str()] = wanted;
    } else if (auto state = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dlc.state");
               state && isOptimizerMoment(state.getValue()) && !wanted.empty()) {
      int64_t data = axisIndex("data");
      if (options.shardOptimizerState && data >= 0 &&
          shapeOfValue(arg)[0] % axisSize(data) == 0) {
        wanted[0] = data;
        splitState[state.str()] = wanted;
      }
    } else if (options.preset.data && !wanted.empty() &&
               !func.getArgAttr(arg.getArgNumber(), "dlc.state")) {
      // Data, not state: a train step's parameters and moments stay whole
      // on every rank (replicated, as in DDP).
      int64_t data = axisIndex("data");
      if (data >= 0 && shapeOfValue(arg)[0] % axisSize(data) == 0)
        wanted[0] = data;
    }
    if (llvm::all_of(wanted, [](int64_t a) { return a < 0; }) || arg.use_empty())
      continue;
    if (options.localArguments) {
      Sharding s;
      s.dims = wanted;
      shardings[arg] = s;
      arg.setType(localType(arg, wanted));
      // State given split leaves split: each rank keeps its block between
      // steps. The caller reads how from `dlc.local_sharding` (per
      // dimension, a mesh axis or "").
      if (auto state = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dlc.state"))
        splitState[state.str()] = wanted;
      SmallVector<Attribute> names;
      for (int64_t a : wanted)
        names.push_back(builder.getStringAttr(a < 0 ? "" : mesh.axes()[a].first));
      func.setArgAttr(arg.getArgNumber(), "dlc.local_sharding", builder.getArrayAttr(names));
      continue;
    }
    Operation *first = &body.front();
    Value local = reshard(arg, wanted, first);
    arg.replaceAllUsesExcept(local, local.getDefiningOp());
  }
  return success();
}

bool Partitioner::isParameter(Value v) {
  if (v.getDefiningOp<ParamOp>())
    return true;
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return false;
  auto state = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dlc.state");
  return state && !isOptimizerMoment(state.getValue());
}

bool Partitioner::isOptimizerMoment(StringRef name) {
  auto [param, moment] = name.rsplit('.');
  if (moment.empty())
    return false;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto state = func.getArgAttrOfType<StringAttr>(i, "dlc.state");
        state && state.getValue() == param)
      return true;
  return false;
}

void Partitioner::propagateHints() {
  Block &body = func.getBody().front();
  Operation *ret = body.getTerminator();
  for (auto [i, v] : llvm::enumerate(ret->getOperands()))
    if (auto state = func.getResultAttrOfType<StringAttr>(i, "dlc.state"))
      if (auto split = splitState.find(state.str()); split != splitState.end())
        hints.try_emplace(v, split->second);
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) {
    auto rule = rules.find(op);
    if (rule == rules.end())
      continue;
    SmallVector<int64_t> factorHint(rule->second.numFactors(), -1);
    bool any = false;
    for (auto [r, result] : llvm::enumerate(op->getResults()))
      if (auto hint = hints.find(result); hint != hints.end())
        for (auto [d, f] : llvm::enumerate(rule->second.results[r]))
          if (f >= 0 && hint->second[d] >= 0) {
            factorHint[f] = hint->second[d];
            any = true;
          }
    if (!any)
      continue;
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      SmallVector<int64_t, 4> dims;
      for (int64_t f : rule->second.operands[i])
        dims.push_back(f >= 0 ? factorHint[f] : -1);
      if (llvm::any_of(dims, [](int64_t a) { return a >= 0; }))
        hints.try_emplace(operand, dims);
    }
  }
}

void Partitioner::hoistCollectives() {
  Block &body = func.getBody().front();
  for (Operation &op : llvm::make_early_inc_range(body)) {
    if (kernelRoleOf(&op) != KernelRole::Collective || op.getNumOperands() != 1)
      continue;
    if (Operation *def = op.getOperand(0).getDefiningOp())
      op.moveAfter(def);
    else
      op.moveBefore(&body.front());
  }
}

LogicalResult Partitioner::run() {
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments())
    globalTypes[arg] = arg.getType();
  for (Operation &op : body) {
    for (Value result : op.getResults())
      globalTypes[result] = result.getType();
    if (auto ruled = dyn_cast<ShardingRuleOpInterface>(op))
      rules[&op] = ruled.getShardingRule();
  }
  if (failed(shardArguments()) || failed(shardParameters()))
    return failure();
  propagateHints();
  for (Operation &op : llvm::make_early_inc_range(body)) {
    if (op.hasTrait<mlir::OpTrait::IsTerminator>()) {
      // Results are whole on every rank, but split state, which leaves as
      // it came.
      for (auto [i, v] : llvm::enumerate(op.getOperands())) {
        SmallVector<int64_t, 4> whole(shapeOfValue(v).size(), -1);
        auto state = func.getResultAttrOfType<StringAttr>(i, "dlc.state");
        if (auto split = state ? splitState.find(state.str()) : splitState.end();
            split != splitState.end())
          whole = split->second;
        Value complete = reshard(v, whole, &op);
        if (complete != v)
          op.setOperand(i, complete);
      }
      continue;
    }
    if (kernelRoleOf(&op) == KernelRole::Collective && !rules.count(&op))
      continue; // inserted by this walk
    if (failed(partitionOp(&op)))
      return failure();
  }
  hoistCollectives();
  auto module = func->getParentOfType<ModuleOp>();
  if (module)
    module->setAttr("dlc.mesh", builder.getStringAttr(mesh.str()));
  func->setAttr("dlc.mesh", builder.getStringAttr(mesh.str()));
  // Arguments given split (localArguments) have their local types now.
  func.setFunctionType(FunctionType::get(func.getContext(), body.getArgumentTypes(),
                                         body.getTerminator()->getOperandTypes()));
  func->setAttr("dlc.collective_schedule",
                builder.getI64IntegerAttr(static_cast<int64_t>(collectiveScheduleHash(func))));
  return success();
}

} // namespace

uint64_t collectiveScheduleHash(func::FuncOp func) {
  // 64-bit FNV-1a over each collective's printed form without its SSA
  // names: the op, its attributes and its types, in program order.
  uint64_t hash = 0xcbf29ce484222325ull;
  auto mix = [&](llvm::StringRef text) {
    for (unsigned char c : text) {
      hash ^= c;
      hash *= 0x100000001b3ull;
    }
  };
  func.walk([&](Operation *op) {
    if (kernelRoleOf(op) != KernelRole::Collective)
      return;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << op->getName() << " " << op->getAttrDictionary() << " " << op->getOperandTypes()
       << " -> " << op->getResultTypes() << ";";
    mix(os.str());
  });
  return hash;
}

std::optional<ParallelPreset> parseParallelPreset(const std::string &name) {
  ParallelPreset preset;
  size_t start = 0;
  while (start <= name.size() && !name.empty()) {
    size_t end = std::min(name.find(',', start), name.size());
    std::string word = name.substr(start, end - start);
    if (word == "data")
      preset.data = true;
    else if (word == "tensor")
      preset.tensor = true;
    else if (word == "pipeline")
      preset.pipeline = true;
    else if (word != "none")
      return std::nullopt;
    start = end + 1;
  }
  return preset;
}

/// How the tensor preset splits a train step's parameters: partitioned
/// once as given (a copy), a parameter state whose only use slices it over
/// one mesh axis is one the preset splits; its optimizer moments (`P.m`,
/// same shape) split with it.
static std::map<std::string, std::vector<std::string>>
presetStateShardings(func::FuncOp func, const PartitionOptions &options) {
  std::map<std::string, std::vector<std::string>> found;
  auto probe = cast<func::FuncOp>(func->clone());
  auto erase = llvm::make_scope_exit([&] { probe->erase(); });
  {
    // The probe's diagnostics are the real run's: not shown twice.
    ScopedDiagnosticHandler quiet(func.getContext(), [](Diagnostic &) { return success(); });
    if (failed(Partitioner(probe, options).run()))
      return found;
  }
  std::map<std::string, Type> stateTypes;
  for (BlockArgument arg : func.getArguments())
    if (auto state = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dlc.state"))
      stateTypes[state.str()] = arg.getType();
  for (BlockArgument arg : probe.getArguments()) {
    auto state = probe.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dlc.state");
    if (!state || !arg.hasOneUse())
      continue;
    auto shard = dyn_cast<ShardOp>(*arg.getUsers().begin());
    auto axes = shard ? shard->getAttrOfType<ArrayAttr>("mesh_axes") : ArrayAttr();
    if (!axes || axes.size() != 1)
      continue;
    std::vector<std::string> dims(cast<RankedTensorType>(arg.getType()).getRank(), "");
    int64_t axis = shard.getAxis() < 0 ? shard.getAxis() + int64_t(dims.size()) : shard.getAxis();
    dims[axis] = cast<StringAttr>(axes[0]).str();
    found[state.str()] = dims;
  }
  // Moments: `P.<name>` of a split parameter P, of P's shape.
  std::map<std::string, std::vector<std::string>> moments;
  for (auto &[name, type] : stateTypes) {
    auto [param, moment] = StringRef(name).rsplit('.');
    auto split = found.find(param.str());
    if (!moment.empty() && split != found.end() && stateTypes[param.str()] == type)
      moments[name] = split->second;
  }
  found.insert(moments.begin(), moments.end());
  return found;
}

LogicalResult partitionFunction(func::FuncOp func, const PartitionOptions &options) {
  if (!options.splitParameterState || !options.preset.tensor || !options.localArguments ||
      !options.stateShardings.empty())
    return Partitioner(func, options).run();
  PartitionOptions withState = options;
  withState.stateShardings = presetStateShardings(func, options);
  return Partitioner(func, withState).run();
}

} // namespace dlc
