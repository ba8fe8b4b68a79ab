//===- OnnxImporter.cpp - an ONNX model to a dlc graph --------------------===//
//
// 1. Parse the protobuf; take the default domain's opset (1 to 21). A model
//    below opset 7 is upgraded to 7 by ONNX's version converter; where the
//    converter gives up on opset 6, the attributes that 7 dropped
//    (`is_test`, `consumed_inputs`, `broadcast`) are read by the importer
//    itself. From here on every error ends with the file's IR version and
//    opset.
// 2. Check every external data path (no absolute paths, no `..`, nothing
//    that resolves outside the model's folder).
// 3. List every node whose op type the op table lacks: one error names
//    them all, with their nodes.
// 4. Run ONNX's checker, then its shape inference (non-strict): the shapes
//    it infers cross-check the ones dlc computes, node by node. Opsets
//    newer than libonnx knows (1.12: 17) and IR versions above 8 skip both:
//    dlc's own shape rules are the only ones.
// 5. Bind the inputs' dimensions (given inputs, then `--dim`), build a
//    `func.func` whose arguments are the graph inputs; initializers become
//    `dlc.param`s of kind `data` when used as values.
// 6. Import the nodes in order through the op table; each op is located at
//    its node; a node whose inputs are all known folds at import time
//    (data movement in its importer, arithmetic through the oracle).
// 7. Return the graph outputs, checking their declared types; drop the
//    constants that only folded nodes used.
//
// Steps 2-4 (and step 1's upgrade) are in ModelChecks.cpp.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ModelImporter.h"
#include "ir/ShapeUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include <set>
#include <fstream>

using namespace mlir;

namespace dlc::onnximport {


bool legacyBroadcastsAt(const ::onnx::NodeProto &node) {
  static const std::set<std::string> binary = {
      "Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor",
      "Equal", "Greater", "Less"};
  return binary.count(node.op_type()) > 0;
}

const OpTable &opTable() {
  static const OpTable table = [] {
    OpTable t;
    addElementwiseOps(t);
    addContractionOps(t);
    addConvolutionOps(t);
    addNormalizationOps(t);
    addLossOps(t);
    addShapeArithmeticOps(t);
    addReshapingOps(t);
    addSlicingPaddingOps(t);
    addIndexingOps(t);
    addControlFlowOps(t);
    addRecurrentOps(t);
    addResamplingOps(t);
    addScatteringOps(t);
    addSpectralOps(t);
    addReductionOps(t);
    addTypeOps(t);
    return t;
  }();
  return table;
}

std::vector<std::string> supportedOpTypes() {
  std::vector<std::string> names;
  for (const auto &entry : opTable())
    names.push_back(entry.first);
  return names;
}


LogicalResult ModelImporter::parse() {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return emitError(fileLoc) << "cannot open '" << path << "'";
  if (!model.ParseFromIstream(&in))
    return emitError(fileLoc)
           << "'" << path << "' is not an ONNX model (the protobuf does not "
           << "parse)";
  bool found = false;
  for (const auto &import : model.opset_import())
    if (import.domain().empty() || import.domain() == "ai.onnx") {
      opset = import.version();
      found = true;
    }
  if (!found)
    return emitError(fileLoc)
           << "the model imports no version of the default ONNX domain";
  fileOpset = opset;
  if (opset < kMinOpset || opset > kMaxOpset)
    return emitError(fileLoc)
           << "the model uses opset " << opset << " (IR version "
           << model.ir_version() << "); dlc imports opsets " << kMinOpset
           << " to " << kMaxOpset;
  return success();
}

static std::string describeOnnxType(const ::onnx::TypeProto &type,
                                    GraphState &graph);

LogicalResult ModelImporter::bindInputs(ImportResult &result) {
  const auto &g = model.graph();
  std::set<std::string> initializers;
  for (const auto &t : g.initializer())
    initializers.insert(t.name());
  std::map<std::string, int64_t> dims;
  std::vector<std::string> order;
  auto bind = [&](const std::string &name, int64_t size,
                  const std::string &input) -> LogicalResult {
    auto [it, inserted] = dims.try_emplace(name, size);
    if (inserted)
      order.push_back(name);
    else if (it->second != size)
      return emitError(fileLoc) << "dimension '" << name << "' is "
                                << it->second << " elsewhere but " << size
                                << " in input '" << input << "'";
    return success();
  };
  struct Pending {
    std::string input;
    size_t index;
    std::string dimParam;
  };
  std::vector<SmallVector<int64_t>> shapes;
  std::vector<Pending> pending;
  std::vector<const ::onnx::ValueInfoProto *> inputs;
  for (const auto &input : g.input()) {
    if (initializers.count(input.name())) {
      // An input with a default (an initializer of its name) must agree
      // with it: its declared type is what a caller would pass.
      const ::onnx::TensorProto *init = nullptr;
      for (const auto &t : g.initializer())
        if (t.name() == input.name())
          init = &t;
      const auto &declared = input.type().tensor_type();
      bool sameType = !input.type().has_tensor_type() ||
                      declared.elem_type() == 0 ||
                      declared.elem_type() == init->data_type();
      bool sameShape = true;
      if (input.type().has_tensor_type() && declared.has_shape()) {
        sameShape = declared.shape().dim_size() == init->dims_size();
        for (int d = 0; sameShape && d < init->dims_size(); ++d)
          if (declared.shape().dim(d).has_dim_value() &&
              declared.shape().dim(d).dim_value() != init->dims(d))
            sameShape = false;
      }
      if (!sameType || !sameShape) {
        SmallVector<int64_t> dims(init->dims().begin(), init->dims().end());
        return emitError(fileLoc)
               << "initializer '" << input.name() << "' is "
               << onnxTypeName(init->data_type()) << formatShape(dims)
               << " but the graph input of that name is declared "
               << describeOnnxType(input.type(), *graph);
      }
      continue;
    }
    // Names are unique (a second 'x' of another rank took the first's
    // shape and indexed past it; found by the onnx fuzz target, in a model
    // too new for libonnx's checker).
    if (llvm::any_of(inputs, [&](const auto *other) { return other->name() == input.name(); }))
      return emitError(fileLoc) << "graph input '" << input.name() << "' is declared twice";
    inputs.push_back(&input);
    const auto &type = input.type();
    if (!type.has_tensor_type())
      return emitError(fileLoc)
             << "input '" << input.name()
             << "' is not a tensor (a sequence, map or optional), which dlc "
                "does not support";
    auto element = graph->requireElementType(type.tensor_type().elem_type(),
                                             fileLoc,
                                             "input '" + input.name() + "'");
    if (failed(element))
      return failure();
    auto given = options.inputShapes.find(input.name());
    bool hasShape = type.tensor_type().has_shape();
    SmallVector<int64_t> shape;
    if (!hasShape) {
      if (given == options.inputShapes.end())
        return emitError(fileLoc)
               << "input '" << input.name()
               << "' has no declared shape: give its value with --input";
      shape.assign(given->second.begin(), given->second.end());
    } else {
      const auto &declared = type.tensor_type().shape();
      if (given != options.inputShapes.end() &&
          given->second.size() != static_cast<size_t>(declared.dim_size()))
        return emitError(fileLoc)
               << "input '" << input.name() << "' has rank "
               << declared.dim_size() << " but the data given has shape "
               << formatShape(given->second);
      for (auto [d, dim] : llvm::enumerate(declared.dim())) {
        std::optional<int64_t> data;
        if (given != options.inputShapes.end())
          data = given->second[d];
        if (dim.has_dim_value()) {
          if (dim.dim_value() < 0)
            return emitError(fileLoc)
                   << "input '" << input.name() << "' dimension " << d
                   << " is negative (" << dim.dim_value() << ")";
          if (data && *data != dim.dim_value())
            return emitError(fileLoc)
                   << "input '" << input.name() << "' dimension " << d
                   << " is " << dim.dim_value() << " but the data given has "
                   << *data;
          shape.push_back(dim.dim_value());
          continue;
        }
        shape.push_back(data ? *data : -1);
        if (dim.has_dim_param() && !dim.dim_param().empty()) {
          if (data && failed(bind(dim.dim_param(), *data, input.name())))
            return failure();
          if (!data)
            pending.push_back({input.name(), d, dim.dim_param()});
        } else if (!data) {
          pending.push_back({input.name(), d, ""});
        }
      }
    }
    shapes.push_back(shape);
    inputTypes.push_back(RankedTensorType::get(shape, *element));
  }
  for (auto &[name, size] : options.dims) {
    auto it = dims.find(name);
    if (it != dims.end() && it->second != size)
      return emitError(fileLoc)
             << "--dim " << name << "=" << size
             << " disagrees with the inputs given, whose shapes make it "
             << it->second;
    if (it == dims.end()) {
      dims[name] = size;
      order.push_back(name);
    }
  }
  for (const Pending &p : pending) {
    int64_t size;
    if (!p.dimParam.empty() && dims.count(p.dimParam)) {
      size = dims[p.dimParam];
    } else if (options.defaultUnboundDimsToOne) {
      size = 1;
      std::string name = p.dimParam.empty()
                             ? p.input + "[" + std::to_string(p.index) + "]"
                             : p.dimParam;
      if (!dims.count(name)) {
        dims[name] = 1;
        order.push_back(name);
        result.defaultedDims.push_back(name);
      }
    } else if (!p.dimParam.empty()) {
      return emitError(fileLoc)
             << "dimension '" << p.dimParam << "' of input '" << p.input
             << "' is not bound: pass --dim " << p.dimParam
             << "=<size> or the input's value";
    } else {
      return emitError(fileLoc)
             << "dimension " << p.index << " of input '" << p.input
             << "' has no size and no name: pass the input's value";
    }
    size_t i = 0;
    while (inputs[i]->name() != p.input)
      ++i;
    auto type = cast<RankedTensorType>(inputTypes[i]);
    SmallVector<int64_t> shape(type.getShape());
    shape[p.index] = size;
    inputTypes[i] = RankedTensorType::get(shape, type.getElementType());
  }
  for (auto [i, type] : llvm::enumerate(inputTypes)) {
    auto shape = cast<RankedTensorType>(type).getShape();
    std::string problem = shapeSizeProblem(shape);
    if (!problem.empty())
      return emitError(fileLoc) << "input '" << inputs[i]->name()
                                << "' of shape " << formatShape(shape)
                                << " " << problem;
  }
  for (const std::string &name : order)
    result.dims.emplace_back(name, dims[name]);

  // The graph function and its arguments.
  OpBuilder &b = graph->builder;
  std::string funcName = g.name().empty() ? "main" : g.name();
  func = func::FuncOp::create(fileLoc, funcName,
                              b.getFunctionType(inputTypes, {}));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  for (auto [i, input] : llvm::enumerate(inputs)) {
    func.setArgAttr(i, "dlc.name", b.getStringAttr(input->name()));
    body->getArgument(i).setLoc(
        NameLoc::get(b.getStringAttr(input->name()), fileLoc));
    graph->tensors[input->name()].value = body->getArgument(i);
  }
  for (const auto &t : g.initializer()) {
    TensorEntry entry;
    entry.initializer = &t;
    graph->tensors[t.name()] = std::move(entry);
  }
  return success();
}

/// "f32[2, 3]" for a tensor type from ONNX, "?" for unknown dimensions.
static std::string describeOnnxType(const ::onnx::TypeProto &type,
                                    GraphState &graph) {
  const auto &t = type.tensor_type();
  Type element = graph.elementType(t.elem_type());
  std::string text = element ? formatElementType(element)
                             : std::string(onnxTypeName(t.elem_type()));
  text += "[";
  for (auto [i, dim] : llvm::enumerate(t.shape().dim()))
    text += (i ? ", " : "") + (dim.has_dim_value()
                                   ? std::to_string(dim.dim_value())
                                   : std::string("?"));
  return text + "]";
}

/// Whether `value`'s type agrees with an ONNX type: same element type (when
/// given) and the same size for every dimension ONNX knows.
static bool agrees(Value value, const ::onnx::TypeProto &type,
                   GraphState &graph) {
  if (!type.has_tensor_type())
    return true;
  auto actual = cast<RankedTensorType>(value.getType());
  const auto &t = type.tensor_type();
  if (t.elem_type() != 0 &&
      graph.elementType(t.elem_type()) != actual.getElementType())
    return false;
  if (!t.has_shape())
    return true;
  if (t.shape().dim_size() != actual.getRank())
    return false;
  for (auto [i, dim] : llvm::enumerate(t.shape().dim()))
    if (dim.has_dim_value() && dim.dim_value() != actual.getDimSize(i))
      return false;
  return true;
}

LogicalResult ModelImporter::crossCheckShapes() {
  if (!checked)
    return success();
  // After the import, not before: libonnx's shape inference trusts what it
  // reads (a ConvTranspose whose weight has fewer dimensions than its input
  // is a SIGSEGV in it; the onnx fuzz target), while every node the
  // importer accepted has inputs of the ranks and sizes its op needs.
  try {
    ::onnx::ShapeInferenceOptions shapeOptions{/*check_type=*/false,
                                               /*error_mode=*/0,
                                               /*enable_data_propagation=*/false};
    ::onnx::shape_inference::InferShapes(
        model, ::onnx::OpSchemaRegistry::Instance(), shapeOptions);
  } catch (const std::exception &) {
    // Shape inference only cross-checks; a model it cannot follow imports.
  }
  std::map<std::string, const ::onnx::TypeProto *> inferred;
  for (const auto &info : model.graph().value_info())
    inferred[info.name()] = &info.type();
  for (auto [i, node] : llvm::enumerate(model.graph().node())) {
    for (const std::string &output : node.output()) {
      auto found = inferred.find(output);
      if (found == inferred.end())
        continue;
      auto entry = graph->tensors.find(output);
      if (entry == graph->tensors.end() || !entry->second.value)
        continue;
      if (agrees(entry->second.value, *found->second, *graph))
        continue;
      std::string name = nodeName(node, i);
      return emitError(NameLoc::get(StringAttr::get(&context, name), fileLoc))
             << "node '" << name << "' (" << node.op_type() << "): output '" << output
             << "' is " << formatType(entry->second.value.getType())
             << " in dlc, but the model's value_info or ONNX shape inference gives "
             << describeOnnxType(*found->second, *graph)
             << " (where the model is right, an importer bug: please report it)";
    }
  }
  return success();
}

LogicalResult ModelImporter::importNodes() {
  const OpTable &table = opTable();
  for (auto [i, node] : llvm::enumerate(model.graph().node())) {
    std::string name = nodeName(node, i);
    Location loc = NameLoc::get(StringAttr::get(&context, name), fileLoc);
    const OpSpec &spec = table.at(node.op_type());
    NodeImporter importer(*graph, node, loc, name);
    bool known = inputsKnown(importer);
    Block *block = graph->builder.getInsertionBlock();
    Operation *lastBefore = block->empty() ? nullptr : &block->back();
    if (failed(spec.import(importer)))
      return failure();
    if (known)
      foldWithOracle(importer, lastBefore);
    for (int k = 0; k < node.output_size(); ++k)
      if (!node.output(k).empty() && !graph->tensors.count(node.output(k)))
        return importer.error()
               << "output '" << node.output(k)
               << "' is not supported (the importer builds no value for it)";
  }
  return success();
}

LogicalResult ModelImporter::buildOutputs() {
  OpBuilder &b = graph->builder;
  if (model.graph().output_size() == 0)
    return emitError(fileLoc) << "graph '" << model.graph().name()
                              << "' has no outputs: it computes nothing";
  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const auto &output : model.graph().output()) {
    auto found = graph->tensors.find(output.name());
    if (found == graph->tensors.end())
      return emitError(fileLoc)
             << "output '" << output.name() << "' is not computed by any node";
    Location loc = NameLoc::get(b.getStringAttr(output.name()), fileLoc);
    // An output that is a constant or an initializer needs a value now.
    ::onnx::NodeProto identity;
    identity.set_op_type("Identity");
    identity.add_input(output.name());
    NodeImporter importer(*graph, identity, loc, output.name());
    Value value = importer.input(0);
    if (!value)
      return failure();
    if (!agrees(value, output.type(), *graph))
      return emitError(loc) << "output '" << output.name() << "' is declared "
                            << describeOnnxType(output.type(), *graph)
                            << " but the graph computes "
                            << formatType(value.getType());
    results.push_back(value);
    resultTypes.push_back(value.getType());
  }
  b.create<func::ReturnOp>(fileLoc, results);
  func.setType(b.getFunctionType(inputTypes, resultTypes));
  for (auto [i, output] : llvm::enumerate(model.graph().output()))
    func.setResultAttr(i, "dlc.name", b.getStringAttr(output.name()));
  return success();
}

ImportResult ModelImporter::run() {
  context.loadDialect<DlcDialect, func::FuncDialect>();
  ImportResult result;
  if (failed(parse()))
    return result;
  // Every error from here on ends with the file's IR version and opset.
  std::string version = " [ONNX IR version " +
                        std::to_string(model.ir_version()) + ", opset " +
                        std::to_string(fileOpset);
  ScopedDiagnosticHandler stamp(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      diag << version
           << (opset != fileOpset ? ", upgraded to " + std::to_string(opset)
                                  : std::string())
           << "]";
    return failure();
  });
  if (failed(upgradeLegacyOpset()))
    return result;
  graph = std::make_unique<GraphState>(context, path, opset);
  graph->fileOpset = fileOpset;
  graph->legacyBroadcast = legacy;
  if (failed(checkExternalData()) || failed(checkSupportedOps()) ||
      failed(runChecker()))
    return result;
  auto module = ModuleOp::create(fileLoc);
  OwningOpRef<ModuleOp> owned(module);
  if (failed(bindInputs(result))) {
    if (func)
      func.erase();
    return result;
  }
  module.push_back(func);
  if (failed(importNodes()) || failed(buildOutputs()) || failed(crossCheckShapes()))
    return result;
  // Constants that only fed folded nodes are left unused.
  for (Operation &op : llvm::make_early_inc_range(
           llvm::reverse(func.getBody().front())))
    if (isa<ConstantOp>(op) && op.use_empty())
      op.erase();
  result.module = std::move(owned);
  return result;
}

ImportResult importModel(const std::string &path, MLIRContext &context,
                         const ImportOptions &options) {
  return ModelImporter(context, path, options).run();
}

} // namespace dlc::onnximport
