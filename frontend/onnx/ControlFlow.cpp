//===- ControlFlow.cpp - ONNX If and Loop, resolved at import -------------===//
//
// dlc graphs have no control flow: an If whose condition is known at
// import time is its chosen branch, imported in place; a Loop whose trip
// count (and condition, at every iteration) is known at import time is
// its body unrolled, the loop-carried values threaded through the copies
// and the scan outputs concatenated; Scan likewise over its scan inputs'
// static length. Bodies see the outer scope's values
// by name, as ONNX's scoping has it. A condition that depends on the
// graph's inputs is an error naming the node.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ShapeHelpers.h"

using namespace mlir;

namespace dlc::onnximport {

/// The most iterations a Loop is unrolled to.
static constexpr int64_t kMaxUnroll = 4096;

/// Imports the nodes of `body` into the graph under construction.
static LogicalResult importBody(NodeImporter &outer,
                                const ::onnx::GraphProto &body) {
  GraphState &graph = outer.graph;
  for (const auto &t : body.initializer())
    graph.tensors[t.name()].initializer = &t;
  const OpTable &table = opTable();
  for (auto [i, node] : llvm::enumerate(body.node())) {
    std::string name = node.name().empty()
                           ? outer.name + "/" + node.op_type() + " #" +
                                 std::to_string(i)
                           : node.name();
    auto spec = table.find(node.op_type());
    if (spec == table.end() || !(node.domain().empty() || node.domain() == "ai.onnx"))
      return outer.error() << "its body's node '" << name << "' has op type "
                           << node.op_type() << ", which dlc does not support";
    for (const auto &a : node.attribute())
      if (!llvm::is_contained(spec->second.attributes, a.name()))
        return outer.error() << "its body's node '" << name << "' ("
                             << node.op_type() << "): attribute '" << a.name()
                             << "' is not supported";
    Location loc = NameLoc::get(StringAttr::get(&graph.context, name),
                                graph.fileLoc());
    NodeImporter importer(graph, node, loc, name);
    bool known = inputsKnown(importer);
    Block *block = graph.builder.getInsertionBlock();
    Operation *lastBefore = block->empty() ? nullptr : &block->back();
    if (failed(spec->second.import(importer)))
      return failure();
    if (known)
      foldWithOracle(importer, lastBefore);
  }
  return success();
}

/// The entry of tensor `name`, or an error at `n`.
static FailureOr<TensorEntry> entryOf(NodeImporter &n, const std::string &name) {
  auto found = n.graph.tensors.find(name);
  if (found == n.graph.tensors.end())
    return n.error() << "'" << name << "' is not computed in its body";
  return found->second;
}

/// The value of an entry (a constant or initializer materialised).
static Value valueOf(NodeImporter &n, TensorEntry &entry,
                     const std::string &name) {
  if (entry.value)
    return entry.value;
  if (entry.constant)
    return n.constant(*entry.constant);
  if (entry.initializer) {
    auto v = n.graph.materializeInitializer(name, entry, n.loc);
    return succeeded(v) ? *v : Value();
  }
  n.error() << "'" << name << "' has no value";
  return {};
}

/// One iteration's value of the body's scan output `name`, with a unit
/// dimension at `axis` for the iterations to be concatenated along (Loop's
/// scan outputs, Scan's outputs); null after an error.
static Value iterationSlice(NodeImporter &n, const std::string &name, int64_t axis) {
  auto entry = entryOf(n, name);
  if (failed(entry))
    return {};
  Value v = valueOf(n, *entry, name);
  if (!v)
    return {};
  auto shape = shapeOf(v);
  shape.insert(shape.begin() + axis, 1);
  return n.reshape(v, shape);
}

static LogicalResult importIf(NodeImporter &n) {
  auto cond = n.constantInput(0, "cond");
  if (!cond)
    return failure();
  if (cond->numel() != 1)
    return n.error() << "cond must hold one element";
  const auto *branch = n.attr(cond->getInt(0) ? "then_branch" : "else_branch");
  if (!branch || !branch->has_g())
    return n.error() << "attributes 'then_branch' and 'else_branch' are required";
  const ::onnx::GraphProto &body = branch->g();
  if (body.output_size() != n.node.output_size())
    return n.error() << "the branch has " << body.output_size()
                     << " outputs; the node " << n.node.output_size();
  if (failed(importBody(n, body)))
    return failure();
  for (int k = 0; k < body.output_size(); ++k) {
    auto entry = entryOf(n, body.output(k).name());
    if (failed(entry))
      return failure();
    if (n.wantsOutput(k))
      n.graph.tensors[n.node.output(k)] = *entry;
  }
  return success();
}

static LogicalResult importLoop(NodeImporter &n) {
  const auto *bodyAttr = n.attr("body");
  if (!bodyAttr || !bodyAttr->has_g())
    return n.error() << "attribute 'body' is required";
  const ::onnx::GraphProto &body = bodyAttr->g();
  int64_t carried = static_cast<int64_t>(n.node.input_size()) - 2;
  if (carried < 0 || body.input_size() != carried + 2 ||
      body.output_size() < carried + 1)
    return n.error() << "the body must take (iteration, condition, "
                     << std::max<int64_t>(carried, 0)
                     << " loop-carried values) and return the condition and "
                        "those values";
  int64_t scans = body.output_size() - 1 - carried;
  if (n.node.output_size() > carried + scans)
    return n.error() << "the node has more outputs than its body";
  int64_t trips = kMaxUnroll;
  bool bounded = n.hasInput(0);
  if (bounded) {
    auto m = n.constantInput(0, "M, the trip count");
    if (!m)
      return failure();
    trips = m->getInt(0);
  }
  bool running = true;
  if (n.hasInput(1)) {
    auto c = n.constantInput(1, "cond");
    if (!c)
      return failure();
    running = c->getInt(0) != 0;
  }
  // The loop-carried values, as entries (constants stay constants).
  SmallVector<TensorEntry> state;
  for (int64_t k = 0; k < carried; ++k) {
    auto entry = entryOf(n, n.node.input(k + 2));
    if (failed(entry))
      return failure();
    state.push_back(*entry);
  }
  SmallVector<SmallVector<Value>> scanned(scans);
  int64_t iteration = 0;
  for (; running && iteration < trips; ++iteration) {
    if (iteration == kMaxUnroll)
      return n.error() << "the loop runs more than " << kMaxUnroll
                       << " iterations; dlc unrolls loops";
    auto &tensors = n.graph.tensors;
    Constant i = Constant::empty(n.i64(), {});
    i.pushInt(iteration);
    Constant c = Constant::empty(n.i1(), {});
    c.pushInt(1);
    tensors[body.input(0).name()] = TensorEntry{{}, i, nullptr};
    tensors[body.input(1).name()] = TensorEntry{{}, c, nullptr};
    for (int64_t k = 0; k < carried; ++k)
      tensors[body.input(k + 2).name()] = state[k];
    if (failed(importBody(n, body)))
      return failure();
    auto condOut = entryOf(n, body.output(0).name());
    if (failed(condOut))
      return failure();
    if (!condOut->constant)
      return n.error() << "its condition is computed from the graph's inputs; "
                          "dlc unrolls loops whose every condition is known "
                          "at import time";
    running = condOut->constant->getInt(0) != 0;
    for (int64_t k = 0; k < carried; ++k) {
      auto entry = entryOf(n, body.output(k + 1).name());
      if (failed(entry))
        return failure();
      state[k] = *entry;
    }
    for (int64_t s = 0; s < scans; ++s) {
      Value slice = iterationSlice(n, body.output(1 + carried + s).name(), 0);
      if (!slice)
        return failure();
      scanned[s].push_back(slice);
    }
  }
  for (int64_t k = 0; k < carried; ++k)
    if (n.wantsOutput(k))
      n.graph.tensors[n.node.output(k)] = state[k];
  for (int64_t s = 0; s < scans; ++s) {
    if (!n.wantsOutput(carried + s))
      continue;
    if (scanned[s].empty())
      return n.error() << "the loop runs no iteration, so scan output "
                       << s << " has no element type or shape dlc can give";
    Value joined = scanned[s].size() == 1
                       ? scanned[s][0]
                       : n.create<ConcatOp>(scanned[s], {n.i64("axis", 0)});
    if (failed(n.setOutput(carried + s, joined)))
      return failure();
  }
  return success();
}

/// One Scan over values (no batch dimension): `states` threaded through
/// the body, `inputs` sliced along their axes; the final states and the
/// stacked scan outputs in `results`.
static LogicalResult scanOnce(NodeImporter &n, const ::onnx::GraphProto &body,
                              SmallVector<TensorEntry> states,
                              ArrayRef<Value> inputs, ArrayRef<int64_t> inAxes,
                              ArrayRef<int64_t> inReverse,
                              ArrayRef<int64_t> outAxes,
                              ArrayRef<int64_t> outReverse,
                              SmallVector<Value> &results) {
  int64_t numStates = states.size(), numInputs = inputs.size();
  int64_t numOutputs = body.output_size() - numStates;
  int64_t length = -1;
  for (auto [k, v] : llvm::enumerate(inputs)) {
    int64_t size = shapeOf(v)[inAxes[k]];
    if (length >= 0 && size != length)
      return n.error() << "scan inputs differ in length (" << length << " vs "
                       << size << ")";
    length = size;
  }
  if (length < 1)
    return n.error() << "the scan has no iteration";
  if (length > kMaxUnroll)
    return n.error() << "the scan runs more than " << kMaxUnroll
                     << " iterations; dlc unrolls scans";
  SmallVector<SmallVector<Value>> collected(numOutputs);
  for (int64_t step = 0; step < length; ++step) {
    auto &tensors = n.graph.tensors;
    for (int64_t k = 0; k < numStates; ++k)
      tensors[body.input(k).name()] = states[k];
    for (int64_t k = 0; k < numInputs; ++k) {
      auto shape = shapeOf(inputs[k]);
      int64_t axis = inAxes[k], t = inReverse[k] ? length - 1 - step : step;
      SmallVector<int64_t> starts(shape.size(), 0), limits(shape),
          strides(shape.size(), 1);
      starts[axis] = t;
      limits[axis] = t + 1;
      SmallVector<int64_t> squeezed(shape);
      squeezed.erase(squeezed.begin() + axis);
      TensorEntry e;
      e.value = n.reshape(slice(n, inputs[k], starts, limits, strides), squeezed);
      tensors[body.input(numStates + k).name()] = e;
    }
    if (failed(importBody(n, body)))
      return failure();
    for (int64_t k = 0; k < numStates; ++k) {
      auto entry = entryOf(n, body.output(k).name());
      if (failed(entry))
        return failure();
      states[k] = *entry;
    }
    for (int64_t k = 0; k < numOutputs; ++k) {
      Value slice = iterationSlice(n, body.output(numStates + k).name(), outAxes[k]);
      if (!slice)
        return failure();
      collected[k].push_back(slice);
    }
  }
  results.clear();
  for (int64_t k = 0; k < numStates; ++k) {
    Value v = valueOf(n, states[k], body.output(k).name());
    if (!v)
      return failure();
    results.push_back(v);
  }
  for (int64_t k = 0; k < numOutputs; ++k) {
    if (outReverse[k])
      std::reverse(collected[k].begin(), collected[k].end());
    results.push_back(collected[k].size() == 1
                          ? collected[k][0]
                          : n.create<ConcatOp>(collected[k],
                                               {n.i64("axis", outAxes[k])}));
    if (!results.back())
      return failure();
  }
  return success();
}

static LogicalResult importScan(NodeImporter &n) {
  const auto *bodyAttr = n.attr("body");
  auto numScan = n.intAttr("num_scan_inputs", 0);
  if (!numScan)
    return failure();
  if (!bodyAttr || !bodyAttr->has_g())
    return n.error() << "attribute 'body' is required";
  const ::onnx::GraphProto &body = bodyAttr->g();
  // Opset 8: a sequence_lens input first and a batch dimension on every
  // input and output; opset 9 on: neither.
  bool batched = n.opset() < 9;
  size_t first = batched ? 1 : 0;
  int64_t numInputs = *numScan;
  int64_t numStates = static_cast<int64_t>(n.node.input_size() - first) - numInputs;
  int64_t numOutputs = body.output_size() - numStates;
  if (numStates < 0 || numOutputs < 0 || body.input_size() != numStates + numInputs)
    return n.error() << "the body's inputs and outputs do not match the node's";
  if (batched && n.hasInput(0))
    return n.error() << "sequence_lens is not supported";
  auto attrOr = [&](StringRef name, int64_t count, int64_t fallback) {
    auto v = n.intsAttr(name, SmallVector<int64_t>(count, fallback));
    if (v && static_cast<int64_t>(v->size()) != count) {
      n.error() << "attribute '" << name << "' needs " << count << " values";
      return std::optional<SmallVector<int64_t>>();
    }
    return v;
  };
  auto directions = attrOr(batched ? "directions" : "scan_input_directions",
                           numInputs, 0);
  auto inAxes = batched ? std::optional<SmallVector<int64_t>>(
                              SmallVector<int64_t>(numInputs, 0))
                        : attrOr("scan_input_axes", numInputs, 0);
  auto outAxes = batched ? std::optional<SmallVector<int64_t>>(
                               SmallVector<int64_t>(numOutputs, 0))
                         : attrOr("scan_output_axes", numOutputs, 0);
  auto outDirections = batched ? std::optional<SmallVector<int64_t>>(
                                     SmallVector<int64_t>(numOutputs, 0))
                               : attrOr("scan_output_directions", numOutputs, 0);
  if (!directions || !inAxes || !outAxes || !outDirections)
    return failure();
  // Opset 8: every state and scan input is [batch, ...], the same batch.
  std::optional<int64_t> batchSize;
  for (int64_t k = 0; batched && k < numStates + numInputs; ++k) {
    Value v = n.input(first + k);
    if (!v)
      return failure();
    auto shape = shapeOf(v);
    if (shape.empty() || (batchSize && shape[0] != *batchSize))
      return n.error() << "input '" << n.node.input(first + k) << "' has shape "
                       << formatShape(shape)
                       << "; opset 8's Scan needs every state and scan input [batch, ...]"
                       << (batchSize ? " of batch " + std::to_string(*batchSize) : "");
    batchSize = shape[0];
  }
  SmallVector<Value> inputs;
  for (int64_t k = 0; k < numInputs; ++k) {
    Value v = n.input(first + numStates + k);
    if (!v)
      return failure();
    int64_t rank = shapeOf(v).size() - (batched ? 1 : 0);
    auto axis = normalizeAxisOrError(n, (*inAxes)[k], rank, "a scan input axis");
    if (!axis)
      return failure();
    (*inAxes)[k] = *axis;
    inputs.push_back(v);
  }
  for (int64_t k = 0; k < numOutputs; ++k) {
    const auto &t = body.output(numStates + k).type().tensor_type();
    int64_t rank = t.has_shape() ? t.shape().dim_size() + 1 : 1;
    auto axis = normalizeAxisOrError(n, (*outAxes)[k], rank, "a scan output axis");
    if (!axis)
      return failure();
    (*outAxes)[k] = *axis;
  }
  SmallVector<TensorEntry> states;
  for (int64_t k = 0; k < numStates; ++k) {
    auto entry = entryOf(n, n.node.input(first + k));
    if (failed(entry))
      return failure();
    states.push_back(*entry);
  }
  SmallVector<Value> results;
  if (!batched) {
    if (failed(scanOnce(n, body, states, inputs, *inAxes, *directions,
                        *outAxes, *outDirections, results)))
      return failure();
  } else {
    // One scan per batch element (the scan axis is 1), stacked.
    int64_t batch = shapeOf(inputs.empty() ? n.input(first) : inputs[0])[0];
    SmallVector<SmallVector<Value>> perOutput(numStates + numOutputs);
    auto row = [&](Value v, int64_t b) {
      auto shape = shapeOf(v);
      SmallVector<int64_t> starts(shape.size(), 0), limits(shape),
          strides(shape.size(), 1);
      starts[0] = b;
      limits[0] = b + 1;
      return n.reshape(slice(n, v, starts, limits, strides),
                       ArrayRef<int64_t>(shape).drop_front());
    };
    for (int64_t b = 0; b < batch; ++b) {
      SmallVector<TensorEntry> s;
      for (int64_t k = 0; k < numStates; ++k) {
        TensorEntry e;
        e.value = row(n.input(first + k), b);
        s.push_back(e);
      }
      SmallVector<Value> in;
      for (Value v : inputs)
        in.push_back(row(v, b));
      SmallVector<Value> out;
      if (failed(scanOnce(n, body, s, in, *inAxes, *directions, *outAxes,
                          *outDirections, out)))
        return failure();
      for (auto [k, v] : llvm::enumerate(out)) {
        auto shape = shapeOf(v);
        shape.insert(shape.begin(), 1);
        perOutput[k].push_back(n.reshape(v, shape));
      }
    }
    for (auto &parts : perOutput)
      results.push_back(parts.size() == 1
                            ? parts[0]
                            : n.create<ConcatOp>(parts, {n.i64("axis", 0)}));
  }
  for (auto [k, v] : llvm::enumerate(results))
    if (n.wantsOutput(k) && failed(n.setOutput(k, v)))
      return failure();
  return success();
}

void addControlFlowOps(OpTable &t) {
  t["Scan"] = {{"body", "directions", "num_scan_inputs", "scan_input_axes",
                "scan_input_directions", "scan_output_axes",
                "scan_output_directions"},
               importScan};
  t["If"] = {{"else_branch", "then_branch"}, importIf};
  t["Loop"] = {{"body"}, importLoop};
}

} // namespace dlc::onnximport
