//===- ModelChecks.cpp - what an ONNX model must pass before its nodes ----===//
//
// Steps 1-4 of OnnxImporter.cpp: the upgrade of a model below opset 7 (or
// the opset-6 attributes read by the importer), external data paths that
// stay inside the model's folder, every op type known, attributes known to
// their op and windows that libonnx's shape inference can divide by, then
// libonnx's checker. Each failure is one error naming the nodes.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ModelImporter.h"

#include "llvm/ADT/StringExtras.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/version_converter/convert.h"

#include <set>
#include <sys/stat.h>

using namespace mlir;

namespace dlc::onnximport {

/// Attributes of opset 6 and below that opset 7 removed; the importer
/// accepts them on models the version converter could not upgrade.
static bool isLegacyAttribute(const ::onnx::NodeProto &node,
                              llvm::StringRef name) {
  if (name == "is_test" || name == "consumed_inputs")
    return true;
  return name == "broadcast" || (name == "axis" && legacyBroadcastsAt(node));
}

bool resolveExternalDataPath(const std::string &modelDir,
                             const std::string &location,
                             std::string &resolved, std::string &error) {
  if (location.empty()) {
    error = "has no 'location'";
    return false;
  }
  if (location.find('\0') != std::string::npos) {
    error = "location '" + std::string(location.c_str()) +
            "...' holds a NUL byte";
    return false;
  }
  if (location.front() == '/') {
    error = "location '" + location +
            "' is an absolute path; external data must be a relative path "
            "inside the model's folder";
    return false;
  }
  for (StringRef part : llvm::split(StringRef(location), '/'))
    if (part == "..") {
      error = "location '" + location +
              "' has a '..' component; external data must stay inside the "
              "model's folder";
      return false;
    }
  std::string joined = modelDir + "/" + location;
  char buffer[PATH_MAX];
  if (!realpath(joined.c_str(), buffer)) {
    error = "file '" + location + "' does not exist next to the model";
    return false;
  }
  std::string real = buffer;
  if (!realpath(modelDir.c_str(), buffer)) {
    error = "cannot resolve the model's folder '" + modelDir + "'";
    return false;
  }
  std::string dir = buffer;
  if (dir != "/")
    dir += "/";
  if (real.compare(0, dir.size(), dir) != 0) {
    error = "location '" + location + "' resolves to '" + real +
            "', outside the model's folder '" + buffer +
            "' (through a symbolic link)";
    return false;
  }
  struct stat info;
  if (stat(real.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    error = "location '" + location + "' is not a regular file";
    return false;
  }
  resolved = real;
  return true;
}

/// Whether every output of `graph` (and of the graphs in its nodes'
/// attributes) is a name defined there or in an enclosing graph: an input,
/// an initializer or a node's output. If not, `error` names the first that
/// is not.
static bool graphOutputsDefined(const ::onnx::GraphProto &graph,
                                std::set<std::string> defined,
                                std::string &error) {
  for (const auto &input : graph.input())
    defined.insert(input.name());
  for (const auto &init : graph.initializer())
    defined.insert(init.name());
  for (const auto &node : graph.node())
    for (const auto &output : node.output())
      defined.insert(output);
  for (const auto &output : graph.output())
    if (!defined.count(output.name())) {
      error = "graph '" + graph.name() + "': output '" + output.name() +
              "' is not an input, an initializer or a node's output";
      return false;
    }
  for (const auto &node : graph.node())
    for (const auto &attr : node.attribute()) {
      if (attr.has_g() && !graphOutputsDefined(attr.g(), defined, error))
        return false;
      for (const auto &g : attr.graphs())
        if (!graphOutputsDefined(g, defined, error))
          return false;
    }
  return true;
}

/// Opset 6 to 7: ONNX's version converter rewrites the nodes (the
/// `broadcast`/`axis` of binary ops, BatchNormalization's and Dropout's
/// `is_test`). Where it gives up (it needs shapes it cannot infer, or has
/// no adapter for an op), the model stays at opset 6 and the importer reads
/// those attributes itself.
/// What ONNX's version converter reads of a node's inputs' shapes without
/// checking them, checked first: Gemm_6_7 takes the first two dimensions of
/// A and B (a scalar A crashed it; the onnx fuzz target), and the broadcast
/// adapters line B up with A from `axis`. Empty when the main graph's nodes
/// fit; ranks only where the file declares them (inputs, initializers,
/// value_info).
static std::string converterInputProblem(const ::onnx::GraphProto &g) {
  std::map<std::string, int64_t> ranks;
  auto note = [&](const ::onnx::ValueInfoProto &v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
      ranks[v.name()] = v.type().tensor_type().shape().dim_size();
  };
  for (const auto &v : g.input())
    note(v);
  for (const auto &v : g.value_info())
    note(v);
  for (const auto &t : g.initializer())
    ranks[t.name()] = t.dims_size();
  auto rankOf = [&](const ::onnx::NodeProto &node, int i) -> std::optional<int64_t> {
    if (i >= node.input_size())
      return std::nullopt;
    auto found = ranks.find(node.input(i));
    return found == ranks.end() ? std::nullopt : std::optional<int64_t>(found->second);
  };
  static const std::set<std::string> broadcasting = {"Add", "Sub", "Mul", "Div", "Pow",
                                                     "And", "Or",  "Xor", "Equal", "Greater",
                                                     "Less", "PRelu"};
  for (auto [i, node] : llvm::enumerate(g.node())) {
    std::string name = node.name().empty() ? node.op_type() + " #" + std::to_string(i)
                                           : node.name();
    std::string where = "node '" + name + "' (" + node.op_type() + "): ";
    if (node.op_type() == "Gemm") {
      for (int k = 0; k < 2; ++k)
        if (auto rank = rankOf(node, k); rank && *rank != 2)
          return where + "input " + std::to_string(k) + " ('" + node.input(k) +
                 "') has rank " + std::to_string(*rank) + "; Gemm needs a matrix";
    }
    if (broadcasting.count(node.op_type())) {
      auto a = rankOf(node, 0), b = rankOf(node, 1);
      for (const auto &attr : node.attribute())
        if (int64_t axis = attr.i() < 0 && a ? attr.i() + *a : attr.i();
            attr.name() == "axis" && a && b && (axis < 0 || axis + *b > *a))
          return where + "axis " + std::to_string(attr.i()) + " does not line up input 1 (rank " +
                 std::to_string(*b) + ") inside input 0 (rank " + std::to_string(*a) + ")";
    }
  }
  return "";
}

LogicalResult ModelImporter::upgradeLegacyOpset() {
  if (opset >= 7)
    return success();
  // The converter trusts its input: ONNX's checker sees the model first.
  try {
    ::onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    return emitError(fileLoc) << "the ONNX checker rejects the model: "
                              << e.what();
  }
  // The converter rebuilds initializers from their bytes in the file, so
  // a model whose weights are external data keeps its opset.
  bool external = llvm::any_of(model.graph().initializer(), [](const auto &t) {
    return t.data_location() == ::onnx::TensorProto::EXTERNAL;
  });
  if (external) {
    if (opset < 6)
      return emitError(fileLoc)
             << "an opset-" << opset << " model with external data: dlc "
             << "imports opsets below 6 only through ONNX's version "
             << "converter, which does not read external data";
    legacy = true;
    return success();
  }
  // The converter also trusts that every graph output is defined, which
  // libonnx 1.12's checker does not check: an undefined one crashed it
  // (fuzz/regressions/onnx/converter-undefined-graph-output).
  std::string undefined;
  if (!graphOutputsDefined(model.graph(), {}, undefined))
    return emitError(fileLoc) << undefined;
  if (std::string problem = converterInputProblem(model.graph()); !problem.empty())
    return emitError(fileLoc) << problem;
  try {
    ::onnx::ModelProto upgraded =
        ::onnx::version_conversion::ConvertVersion(model, 7);
    model = std::move(upgraded);
    opset = 7;
    return success();
  } catch (const std::exception &e) {
    // Opset 6 differs from 7 in a few attributes, which the importer reads
    // itself; older opsets differ in more, and need the converter.
    if (opset < 6)
      return emitError(fileLoc)
             << "ONNX's version converter cannot upgrade this opset-" << opset
             << " model to opset 7 (" << StringRef(e.what()).trim()
             << "); dlc imports opsets below 6 only through it";
  }
  legacy = true;
  return success();
}

LogicalResult ModelImporter::checkExternalData() {
  std::string dir = graph->modelDir;
  auto check = [&](const ::onnx::TensorProto &t,
                   const Twine &what) -> LogicalResult {
    if (t.data_location() != ::onnx::TensorProto::EXTERNAL)
      return success();
    std::string location;
    for (const auto &entry : t.external_data())
      if (entry.key() == "location")
        location = entry.value();
    std::string resolved, error;
    if (!resolveExternalDataPath(dir, location, resolved, error))
      return emitError(fileLoc) << what << ": external data " << error;
    return success();
  };
  for (const auto &t : model.graph().initializer())
    if (failed(check(t, "initializer '" + t.name() + "'")))
      return failure();
  for (const auto &node : model.graph().node())
    for (const auto &a : node.attribute())
      if (a.has_t() && failed(check(a.t(), "node '" + node.name() +
                                               "' attribute '" + a.name() +
                                               "'")))
        return failure();
  return success();
}

LogicalResult ModelImporter::checkSupportedOps() {
  const OpTable &table = opTable();
  std::map<std::string, std::vector<std::string>> missing;
  // The nodes of If and Loop bodies too, so that one error lists them all.
  std::function<void(const ::onnx::GraphProto &, const std::string &)> visit =
      [&](const ::onnx::GraphProto &g, const std::string &scope) {
        for (auto [i, node] : llvm::enumerate(g.node())) {
          std::string name = scope + nodeName(node, i);
          for (const auto &a : node.attribute()) {
            if (a.has_g())
              visit(a.g(), name + "/");
            for (const auto &sub : a.graphs())
              visit(sub, name + "/");
          }
          bool defaultDomain =
              node.domain().empty() || node.domain() == "ai.onnx";
          if (defaultDomain && table.count(node.op_type()))
            continue;
          std::string key = defaultDomain
                                ? node.op_type()
                                : node.domain() + "." + node.op_type();
          missing[key].push_back(name);
        }
      };
  visit(model.graph(), "");
  if (missing.empty())
    return checkAttributes();
  auto diag = emitError(fileLoc);
  diag << "the model uses " << missing.size() << " op type"
       << (missing.size() == 1 ? "" : "s")
       << " that dlc does not support:";
  for (auto &[op, nodes] : missing) {
    diag << "\n  " << op << " (" << nodes.size() << " node"
         << (nodes.size() == 1 ? "" : "s") << "): ";
    constexpr size_t kShown = 10;
    for (size_t i = 0; i < nodes.size() && i < kShown; ++i)
      diag << (i ? ", " : "") << "'" << nodes[i] << "'";
    if (nodes.size() > kShown)
      diag << " and " << nodes.size() - kShown << " more";
  }
  return diag;
}

/// Every attribute of a supported node must be one its importer reads
/// (checked before ONNX's checker, whose message would not name dlc's).
LogicalResult ModelImporter::checkAttributes() {
  const OpTable &table = opTable();
  // Every one at once: "node 'n' (Op): attribute 'a'".
  std::vector<std::pair<size_t, std::string>> unknown;
  for (auto [i, node] : llvm::enumerate(model.graph().node())) {
    const OpSpec &spec = table.at(node.op_type());
    for (const auto &a : node.attribute())
      if (!llvm::is_contained(spec.attributes, a.name()) &&
          !(legacy && isLegacyAttribute(node, a.name())))
        unknown.push_back({i, "node '" + nodeName(node, i) + "' (" + node.op_type() +
                                  "): attribute '" + a.name() + "'"});
  }
  if (unknown.empty())
    return success();
  const std::string first = nodeName(model.graph().node(unknown[0].first), unknown[0].first);
  auto diag = emitError(NameLoc::get(StringAttr::get(&context, first), fileLoc));
  if (unknown.size() == 1)
    return diag << unknown[0].second << " is not supported";
  diag << unknown.size() << " attributes are not supported:";
  for (const auto &[node, text] : unknown)
    diag << "\n  " << text;
  return diag;
}

LogicalResult ModelImporter::checkWindowAttributes() {
  std::function<LogicalResult(const ::onnx::GraphProto &, const std::string &)>
      visit = [&](const ::onnx::GraphProto &g,
                  const std::string &scope) -> LogicalResult {
    for (auto [i, node] : llvm::enumerate(g.node())) {
      std::string name = scope + nodeName(node, i);
      for (const auto &a : node.attribute()) {
        if (a.has_g() && failed(visit(a.g(), name + "/")))
          return failure();
        for (const auto &sub : a.graphs())
          if (failed(visit(sub, name + "/")))
            return failure();
        bool positive = a.name() == "strides" || a.name() == "dilations" ||
                        a.name() == "kernel_shape";
        // Pad's own pads (opsets 1-10) may be negative: they crop.
        if (!positive && (a.name() != "pads" || node.op_type() == "Pad"))
          continue;
        for (int64_t v : a.ints())
          if (positive ? v < 1 : v < 0)
            return emitError(NameLoc::get(StringAttr::get(&context, name),
                                          fileLoc))
                   << "node '" << name << "' (" << node.op_type()
                   << "): attribute '" << a.name() << "' needs values of at least "
                   << (positive ? 1 : 0) << ", got " << v;
      }
    }
    return success();
  };
  return visit(model.graph(), "");
}

LogicalResult ModelImporter::runChecker() {
  // The checker multiplies an initializer's dimensions without checking
  // (2^40 x 2^40 wraps to "0-element but contains data"): they are
  // checked here first, by name.
  for (const auto &t : model.graph().initializer()) {
    int64_t elements = 1;
    for (int64_t d : t.dims()) {
      if (d < 0)
        return emitError(fileLoc) << "tensor '" << t.name()
                                  << "' has a negative dimension " << d;
      if (__builtin_mul_overflow(elements, d, &elements) ||
          elements > (int64_t(1) << 48))
        return emitError(fileLoc)
               << "tensor '" << t.name()
               << "' has more than 2^48 elements (its dimensions multiply "
                  "past what dlc holds)";
    }
  }
  // libonnx 1.12's checker knows IR versions up to 8 and opsets up to 17;
  // newer files are checked, and their shapes inferred, by the importer
  // alone.
  const auto &versions =
      ::onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto known = versions.find(::onnx::ONNX_DOMAIN);
  if (model.ir_version() > ::onnx::IR_VERSION ||
      (known != versions.end() && opset > known->second.second))
    return success();
  // The checker resolves external data against the model's folder only
  // when it reads the file itself (the paths were checked already).
  bool external = llvm::any_of(model.graph().initializer(), [](const auto &t) {
    return t.data_location() == ::onnx::TensorProto::EXTERNAL;
  });
  try {
    if (external)
      ::onnx::checker::check_model(path);
    else
      ::onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    return emitError(fileLoc) << "the ONNX checker rejects the model: "
                              << e.what();
  }
  // libonnx's shape inference divides by strides (Conv, pooling) without
  // checking them: a zero stride is SIGFPE. Window attributes are checked
  // here first, for every node (subgraphs too), and named.
  if (failed(checkWindowAttributes()))
    return failure();
  checked = true;
  return success();
}

} // namespace dlc::onnximport
