//===- NodeImporter.cpp - checked access to a node's inputs and outputs ---===//
//
// What an op importer reads and writes of its node: inputs as values, types
// or values known at import time (constants, small integer initializers),
// outputs recorded as values or constants, and errors at the node.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/NodeImporter.h"

using namespace mlir;

namespace dlc::onnximport {

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

/// Whether input 1 of `node` broadcasts from an explicit `axis` of input 0
/// (opset 6's `broadcast = 1, axis = a`).
static bool alignsAtAxis(const GraphState &graph,
                         const ::onnx::NodeProto &node) {
  if (!graph.legacyBroadcast || !legacyBroadcastsAt(node))
    return false;
  bool broadcast = false, axis = false;
  for (const auto &a : node.attribute()) {
    broadcast |= a.name() == "broadcast" && a.i() != 0;
    axis |= a.name() == "axis";
  }
  return broadcast && axis;
}

Value NodeImporter::input(size_t i) {
  Value value = rawInput(i);
  if (!value || i != 1 || !alignsAtAxis(graph, node))
    return value;
  // Opset 6: input 1's dimensions line up with input 0's from `axis` on;
  // padded with 1s on both sides, NumPy broadcasting does the rest.
  RankedTensorType first = inputType(0);
  auto axisAttr = intAttr("axis", 0);
  if (!first || !axisAttr)
    return {};
  auto shape = shapeOf(value);
  int64_t rank = first.getRank(), rank1 = shape.size();
  int64_t axis = *axisAttr < 0 ? *axisAttr + rank : *axisAttr;
  if (axis < 0 || axis + rank1 > rank) {
    error() << "broadcast axis " << *axisAttr << " does not fit input 1 of rank "
            << rank1 << " into input 0 of rank " << rank;
    return {};
  }
  SmallVector<int64_t> aligned(axis, 1);
  aligned.append(shape.begin(), shape.end());
  aligned.append(rank - axis - rank1, 1);
  return reshape(value, aligned);
}

Value NodeImporter::rawInput(size_t i) {
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
  if (!hasInput(i)) {
    // As rawInput: a Shape node without its input failed without a
    // message (found by the onnx fuzz target).
    error() << "input " << i << " is required";
    return {};
  }
  auto found = graph.tensors.find(node.input(i));
  if (found == graph.tensors.end()) {
    // As input(i) says: importers that ask for the type first (Concat)
    // failed without a message (found by the onnx fuzz target).
    error() << "input '" << node.input(i) << "' is not defined before the node";
    return {};
  }
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

/// Small integer initializers are shape arithmetic (axes, shapes, indices),
/// not weights: they fold (unless already used as a parameter).
static bool isShapeInitializer(GraphState &graph, const TensorEntry &entry) {
  const ::onnx::TensorProto *t = entry.initializer;
  if (!t || entry.value)
    return false;
  int64_t n = 1;
  for (int64_t d : t->dims())
    n *= d;
  Type element = graph.elementType(t->data_type());
  return element && isa<IntegerType>(element) && n <= 64;
}

const Constant *NodeImporter::foldable(size_t i) {
  if (!hasInput(i) || (i == 1 && alignsAtAxis(graph, node)))
    return nullptr;
  auto found = graph.tensors.find(node.input(i));
  if (found == graph.tensors.end())
    return nullptr;
  TensorEntry &entry = found->second;
  if (entry.constant)
    return &*entry.constant;
  if (isShapeInitializer(graph, entry)) {
    auto c = graph.readConstant(*entry.initializer, loc);
    if (succeeded(c)) {
      entry.constant = std::move(*c);
      return &*entry.constant;
    }
  }
  return nullptr;
}

bool NodeImporter::knownAtImport(size_t i) const {
  auto found = graph.tensors.find(node.input(i));
  return found != graph.tensors.end() &&
         (found->second.constant || isShapeInitializer(graph, found->second));
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
