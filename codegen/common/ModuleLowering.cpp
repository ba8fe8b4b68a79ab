//===- ModuleLowering.cpp - a planned function as module contents ---------===//

#include "codegen/common/ModuleLowering.h"

#include "ir/DlcDialect.h"
#include "ir/ParamSpec.h"
#include "passes/analysis/DynamicRows.h"
#include "passes/analysis/State.h"
#include "passes/analysis/Liveness.h"
#include "support/Mesh.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

static uint64_t byteSize(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.getNumElements() * elementSize(dtypeOf(tensor.getElementType()));
}

static format::TensorDesc describe(const std::string &name, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return {name, dtypeOf(tensor.getElementType()),
          {tensor.getShape().begin(), tensor.getShape().end()}};
}

static std::string nameOf(func::FuncOp func, unsigned i, bool result) {
  auto attr = result ? func.getResultAttrOfType<StringAttr>(i, "dlc.name")
                     : func.getArgAttrOfType<StringAttr>(i, "dlc.name");
  return attr ? attr.str() : (result ? "result" : "arg") + std::to_string(i);
}

/// Elements before `axis` in `shape`: 1 when blocks along `axis` are
/// contiguous.
static int64_t outerElements(ArrayRef<int64_t> shape, int64_t axis) {
  int64_t n = 1;
  for (int64_t d = 0; d < axis; ++d)
    n *= shape[d];
  return n;
}

/// `op` (a collective) as the runtime executes it; its `recv` is set by
/// the caller. The runtime moves contiguous blocks: a gather, scatter or
/// shard along an axis with only size-1 dimensions before it.
static FailureOr<LoweredCollective>
lowerCollective(Operation *kernel, Operation *op,
                const llvm::DenseMap<Value, format::BufferRef> &refs, size_t afterKernels) {
  LoweredCollective c;
  c.afterKernels = afterKernels;
  if (isa<SendOp, RecvOp>(op) || kernel->getNumOperands() != 1 || kernel->getNumResults() != 1)
    return op->emitError("'") << op->getName()
                              << "' is not executed by compiled modules yet (pipeline stages "
                                 "are issue 13's)";
  Value x = kernel->getOperand(0);
  auto found = refs.find(x);
  if (found == refs.end())
    return op->emitError("codegen: an operand defined after its use");
  c.send = found->second;
  auto type = cast<RankedTensorType>(x.getType());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  auto norm = [&](int64_t axis) { return axis < 0 ? axis + type.getRank() : axis; };
  for (Attribute a : op->getAttrOfType<ArrayAttr>("mesh_axes"))
    c.desc.axes.push_back(cast<StringAttr>(a).str());
  c.desc.dtype = dtypeOf(type.getElementType());
  auto reduceOf = [](CollectiveReduction kind) {
    switch (kind) {
    case CollectiveReduction::max: return fb::ReduceOp::max;
    case CollectiveReduction::min: return fb::ReduceOp::min;
    case CollectiveReduction::avg: return fb::ReduceOp::avg;
    default: return fb::ReduceOp::sum;
    }
  };
  // Blocks along an axis with larger dimensions before it are `outer`
  // strided pieces (the runtime moves them around the contiguous call).
  auto outerOf = [&](int64_t axis) { return outerElements(type.getShape(), norm(axis)); };
  if (auto o = dyn_cast<AllReduceOp>(op)) {
    c.desc.op = fb::CollectiveOp::all_reduce;
    c.desc.reduce = reduceOf(o.getKind());
    c.desc.count = type.getNumElements();
  } else if (auto o = dyn_cast<AllGatherOp>(op)) {
    c.desc.op = fb::CollectiveOp::all_gather;
    c.desc.reduce = fb::ReduceOp::none;
    c.desc.count = type.getNumElements();
    c.desc.outer = outerOf(o.getAxis());
  } else if (auto o = dyn_cast<ReduceScatterOp>(op)) {
    c.desc.op = fb::CollectiveOp::reduce_scatter;
    c.desc.reduce = reduceOf(o.getKind());
    c.desc.count = resultType.getNumElements();
    c.desc.outer = outerOf(o.getAxis());
  } else if (auto o = dyn_cast<ShardOp>(op)) {
    c.shard = true;
    c.shardOuter = static_cast<uint64_t>(outerOf(o.getAxis()));
    c.shardBytes = byteSize(resultType) / c.shardOuter;
    c.shardGroup = static_cast<uint64_t>(o.getGroupSize());
  } else {
    return op->emitError("'") << op->getName()
                              << "' is not executed by compiled modules yet: run the partitioned "
                                 "graph with `mpirun dlc run --mesh` (the host path)";
  }
  return c;
}

FailureOr<LoweredModule> dlc::codegen::lowerModule(func::FuncOp func, bool keepParams) {
  LoweredModule m;
  m.name = func.getSymName().str();
  auto arena = func->getAttrOfType<IntegerAttr>("dlc.arena_size");
  if (!arena)
    return func.emitError("codegen needs a planned function (dlc.arena_size): "
                          "run the dlc-compile pipeline first");
  m.arenaSize = arena.getInt();
  m.arenaAlignment = kArenaAlignment;
  // Values whose rows grow with the dynamic dimension: the marked inputs,
  // then every kernel result computed from one.
  llvm::DenseSet<Value> dynamicValues;
  if (auto range = dynamicDimOf(func))
    m.dynamicDim = format::DynamicDimDesc{range->name, range->min, range->max};

  // Arguments: inputs, or state (zeros, drawn by the session, or with its
  // initial value as a weight). Results: outputs, or new state.
  llvm::DenseMap<Value, format::BufferRef> refs;
  llvm::DenseMap<Value, std::string> names;
  llvm::StringMap<uint32_t> stateIndex;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    uint64_t bytes = byteSize(arg.getType());
    StringRef state = stateName(func, i, false);
    if (state.empty()) {
      refs[arg] = format::inputRef(m.inputs.size(), 0, bytes);
      m.inputs.push_back(describe(nameOf(func, i, false), arg.getType()));
      if (m.dynamicDim && func.getArgAttr(i, kDynamicRowsAttr)) {
        m.inputs.back().dynamicDim = 0;
        dynamicValues.insert(arg);
      }
      names[arg] = m.inputs.back().name + " (input)";
      continue;
    }
    format::StateDesc desc{describe(state.str(), arg.getType()), -1};
    auto init = func.getArgAttrOfType<DictionaryAttr>(i, "dlc.init");
    auto kind = init ? init.getAs<StringAttr>("kind") : StringAttr();
    if (init && !(kind && kind.getValue() == "zeros")) {
      auto spec = paramSpecOf(init, func);
      if (failed(spec))
        return failure();
      // An initialiser's value is drawn by the session that creates the
      // state (format 1.5), not stored: the module stays the size of its
      // code, and the compile does not draw millions of values it would
      // only write out. Data and files are stored as weights.
      if (spec->source == ParamSpec::Source::Initialiser) {
        desc.draw = format::Draw{spec->init, spec->options};
      } else {
        auto value = initialValue(init, cast<RankedTensorType>(arg.getType()),
                                  state, func);
        if (failed(value))
          return failure();
        desc.initialWeight = m.weights.size();
        m.weights.push_back(describe(state.str() + " (initial)", arg.getType()));
        if (keepParams)
          m.params[state.str()] = *value;
        m.weightBytes.push_back(std::move(*value).takeBytes());
        m.weightDraws.emplace_back();
      }
    }
    stateIndex[state] = m.state.size();
    refs[arg] = format::stateRef(m.state.size(), 0, bytes);
    names[arg] = state.str() + " (state)";
    m.state.push_back(std::move(desc));
  }
  auto ties = stateTies(func);
  if (failed(ties))
    return failure();
  llvm::DenseMap<Value, uint32_t> inPlaceState;
  llvm::DenseSet<unsigned> stateResults;
  for (const StateTie &tie : *ties) {
    stateResults.insert(tie.result);
    if (tie.inPlace)
      inPlaceState[tie.value] = stateIndex.lookup(stateName(func, tie.result, true));
  }

  // Which kernel result is written straight into which output.
  Operation *ret = func.getBody().front().getTerminator();
  llvm::DenseMap<Value, unsigned> outputOf;
  SmallVector<int64_t> outputIndex(func.getNumResults(), -1);
  for (unsigned j = 0; j < func.getNumResults(); ++j) {
    if (stateResults.contains(j))
      continue;
    outputIndex[j] = m.outputs.size();
    m.outputs.push_back(describe(nameOf(func, j, true), func.getResultTypes()[j]));
    if (m.dynamicDim && func.getResultAttr(j, kDynamicRowsAttr))
      m.outputs.back().dynamicDim = 0;
    Value v = ret->getOperand(j);
    Operation *def = v.getDefiningOp();
    if (def && !isa<ParamOp, ConstantOp>(def) && !outputOf.count(v) &&
        !inPlaceState.count(v))
      outputOf[v] = outputIndex[j];
  }

  // Where a result is written: in place over its state, straight into its
  // output, else the arena at its planned offset.
  auto resultRef = [&](Value result, int64_t offset, uint64_t bytes) {
    auto output = outputOf.find(result);
    auto state = inPlaceState.find(result);
    return state != inPlaceState.end() ? format::stateRef(state->second, 0, bytes)
           : output != outputOf.end()  ? format::outputRef(output->second, 0, bytes)
                                       : format::arenaRef(offset, bytes);
  };
  if (auto mesh = func->getAttrOfType<StringAttr>("dlc.mesh")) {
    Mesh parsed;
    std::string error;
    if (!Mesh::parse(mesh.str(), parsed, error))
      return func.emitError("dlc.mesh: ") << error;
    for (const auto &[name, size] : parsed.axes())
      m.mesh.push_back({name, static_cast<uint32_t>(size)});
  }

  auto module = func->getParentOfType<ModuleOp>();
  const bool drawParams = module && module->hasAttr(kDrawParamsAttr);
  unsigned kernelIndex = 0;
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (isa<ParamOp, ConstantOp>(op)) {
      auto param = dyn_cast<ParamOp>(op);
      // --draw-params: a drawn parameter is recorded as its initialiser,
      // and the reader draws its bytes (format 1.5).
      std::optional<format::Draw> draw;
      if (param && drawParams) {
        auto spec = paramSpecOf(param);
        if (failed(spec))
          return failure();
        if (spec->source == ParamSpec::Source::Initialiser && spec->init != InitKind::Zeros)
          draw = format::Draw{spec->init, spec->options};
      }
      std::vector<uint8_t> bytes;
      if (!draw) {
        auto value = param ? paramValue(param)
                           : hostTensorOf(cast<ElementsAttr>(cast<ConstantOp>(op).getValue()),
                                          &op);
        if (failed(value))
          return failure();
        if (param && keepParams)
          m.params[param.getName().str()] = *value;
        bytes = std::move(*value).takeBytes();
      }
      std::string name =
          param ? param.getName().str() : "constant" + std::to_string(m.weights.size());
      Value result = op.getResult(0);
      refs[result] = format::weightRef(m.weights.size(), 0, byteSize(result.getType()));
      names[result] = name + (param ? " (param)" : " (constant)");
      m.weights.push_back(describe(name, result.getType()));
      m.weightBytes.push_back(std::move(bytes));
      m.weightDraws.push_back(draw);
      continue;
    }
    auto offsets = op.getAttrOfType<DenseI64ArrayAttr>("dlc.offsets");
    if (!offsets || offsets.size() != (int64_t)op.getNumResults())
      return op.emitError("codegen needs the memory plan's dlc.offsets on "
                          "every kernel");
    if (Operation *inner = collectiveInKernel(&op)) {
      auto lowered = lowerCollective(&op, inner, refs, m.kernels.size());
      if (failed(lowered))
        return failure();
      int64_t meshSize = 1;
      for (const auto &axis : m.mesh)
        meshSize *= axis.size;
      if (!lowered->shard && inner->getAttrOfType<IntegerAttr>("group_size").getInt() != meshSize)
        return inner->emitError("'")
               << inner->getName()
               << "' over part of the mesh: compiled modules run collectives over the whole "
                  "mesh for now (run a 2-D mesh with `mpirun dlc run/train --mesh`)";
      Value result = op.getResult(0);
      lowered->recv = resultRef(result, offsets[0], byteSize(result.getType()));
      refs[result] = lowered->recv;
      names[result] = "%" + op.getName().stripDialect().str() + std::to_string(m.collectives.size());
      m.collectives.push_back(*lowered);
      continue;
    }
    LoweredKernel k;
    k.view = viewKernel(&op);
    k.dynamicRows = llvm::any_of(op.getOperands(),
                                 [&](Value v) { return dynamicValues.contains(v); });
    if (k.dynamicRows)
      dynamicValues.insert(op.result_begin(), op.result_end());
    k.dynamicResults = k.dynamicRows && llvm::all_of(k.view.results, [](Value v) {
      Operation *def = v.getDefiningOp();
      return def && def->hasAttr(kDynamicRowsAttr);
    });
    for (Value operand : op.getOperands()) {
      auto found = refs.find(operand);
      if (found == refs.end())
        return op.emitError("codegen: an operand defined after its use");
      k.refs.push_back(found->second);
      k.args.push_back({names[operand], fb::Access::read, found->second.bytes()});
      k.argNames.push_back(names[operand]);
    }
    for (auto [r, result] : llvm::enumerate(op.getResults())) {
      uint64_t bytes = byteSize(result.getType());
      auto output = outputOf.find(result);
      auto state = inPlaceState.find(result);
      format::BufferRef ref = resultRef(result, offsets[r], bytes);
      refs[result] = ref;
      std::string name =
          state != inPlaceState.end()
              ? m.state[state->second].tensor.name + " (new state)"
          : output != outputOf.end()
              ? m.outputs[output->second].name + " (output)"
              : "%" + std::to_string(kernelIndex) + "." + std::to_string(r) +
                    " (kernel " + std::to_string(kernelIndex) + ")";
      names[result] = name;
      k.refs.push_back(ref);
      k.args.push_back({name, fb::Access::write, bytes});
      k.argNames.push_back(name);
    }
    m.kernels.push_back(std::move(k));
    ++kernelIndex;
  }

  for (auto [j, v] : llvm::enumerate(ret->getOperands())) {
    if (outputIndex[j] < 0)
      continue;
    auto bound = outputOf.find(v);
    if (bound != outputOf.end() && bound->second == unsigned(outputIndex[j]))
      continue;
    format::BufferRef src = refs.find(v)->second;
    uint64_t bytes = byteSize(v.getType());
    m.copies.push_back({src, format::outputRef(outputIndex[j], 0, bytes), bytes});
  }
  // New state computed elsewhere than in place is copied over the state
  // last, after everything that reads the old value.
  for (const StateTie &tie : *ties) {
    if (tie.inPlace || tie.value == tie.arg)
      continue;
    uint32_t index = stateIndex.lookup(stateName(func, tie.result, true));
    uint64_t bytes = byteSize(tie.value.getType());
    m.copies.push_back(
        {refs.find(tie.value)->second, format::stateRef(index, 0, bytes), bytes});
  }
  return m;
}

void dlc::codegen::describeModule(LoweredModule &m,
                                  format::ModuleWriter &w) {
  w.setName(m.name);
  for (const auto &t : m.inputs)
    w.addInput(t);
  for (const auto &t : m.outputs)
    w.addOutput(t);
  for (auto [i, t] : llvm::enumerate(m.weights)) {
    if (m.weightDraws[i])
      w.addDrawnWeight(t, *m.weightDraws[i]);
    else
      w.addWeight(t, std::move(m.weightBytes[i])); // a model's weights are copied once
  }
  for (const auto &s : m.state)
    w.addState(s);
  if (m.dynamicDim)
    w.addDynamicDim(*m.dynamicDim);
}

void dlc::codegen::addPlans(const LoweredModule &m,
                            const std::vector<format::LaunchDesc> &launches,
                            format::ModuleWriter &w) {
  std::vector<std::pair<std::string, int64_t>> axes;
  for (const auto &axis : m.mesh)
    axes.push_back({axis.name, axis.size});
  Mesh mesh(axes.empty() ? std::vector<std::pair<std::string, int64_t>>{{"world", 1}} : axes);
  int64_t ranks = mesh.size();
  if (!m.mesh.empty())
    w.setMesh(m.mesh);
  std::vector<uint32_t> sequence;
  for (const LoweredCollective &c : m.collectives)
    sequence.push_back(c.shard ? 0 : w.addCollective(c.desc));
  for (int64_t rank = 0; rank < ranks; ++rank) {
    format::PlanDesc plan;
    plan.arenaSize = m.arenaSize;
    plan.arenaAlignment = m.arenaAlignment;
    size_t next = 0;
    auto collectivesUpTo = [&](size_t kernels) {
      for (; next < m.collectives.size() && m.collectives[next].afterKernels <= kernels; ++next) {
        const LoweredCollective &c = m.collectives[next];
        if (c.shard) {
          // Piece o of this rank's block: at (o * group + position) pieces
          // in, its position in its group.
          std::vector<int64_t> members = mesh.group(rank, c.desc.axes);
          uint64_t position = std::find(members.begin(), members.end(), rank) - members.begin();
          for (uint64_t o = 0; o < c.shardOuter; ++o) {
            uint64_t from = (o * c.shardGroup + position) * c.shardBytes;
            format::BufferRef src(c.send.space(), c.send.index(), c.send.offset() + from,
                                  c.shardBytes);
            format::BufferRef dst(c.recv.space(), c.recv.index(),
                                  c.recv.offset() + o * c.shardBytes, c.shardBytes);
            plan.commands.push_back(format::CopyDesc{src, dst, c.shardBytes});
          }
        } else {
          plan.commands.push_back(format::CollectiveCommandDesc{sequence[next], c.send, c.recv});
        }
      }
    };
    for (size_t k = 0; k < launches.size(); ++k) {
      collectivesUpTo(k);
      plan.commands.push_back(launches[k]);
    }
    collectivesUpTo(launches.size());
    for (const auto &copy : m.copies)
      plan.commands.push_back(copy);
    w.addPlan(plan);
  }
}
