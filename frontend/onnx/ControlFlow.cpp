//===- ControlFlow.cpp - ONNX If and Loop, resolved at import -------------===//
//
// dlc graphs have no control flow: an If whose condition is known at
// import time is its chosen branch, imported in place; a Loop whose trip
// count (and condition, at every iteration) is known at import time is
// its body unrolled, the loop-carried values threaded through the copies
// and the scan outputs concatenated. Bodies see the outer scope's values
// by name, as ONNX's scoping has it. A condition that depends on the
// graph's inputs is an error naming the node.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

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
      const std::string &name = body.output(1 + carried + s).name();
      auto entry = entryOf(n, name);
      if (failed(entry))
        return failure();
      Value v = valueOf(n, *entry, name);
      if (!v)
        return failure();
      auto shape = shapeOf(v);
      shape.insert(shape.begin(), 1);
      scanned[s].push_back(n.reshape(v, shape));
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

void addControlFlowOps(OpTable &t) {
  t["If"] = {{"else_branch", "then_branch"}, importIf};
  t["Loop"] = {{"body"}, importLoop};
}

} // namespace dlc::onnximport
