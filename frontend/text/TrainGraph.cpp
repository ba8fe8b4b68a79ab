//===- TrainGraph.cpp - a train block's loss graph ------------------------===//
//
// `train G(label: i32[N]) { loss = ...; optimizer = adam(lr=0.001) }`
// becomes `@G_train`: G's inputs then the block's, G's body then the
// block's (so the loss may use any value of the graph), and the scalar
// `loss` as its one result. The `optimizer = NAME(...)` statement is not
// an op: it is read into the function's `dlc.optimizer` dictionary, which
// dlc-differentiate turns into the update (docs/design/2026-11-25-training.md).
//
//===----------------------------------------------------------------------===//

#include "frontend/text/GraphBuilder.h"
#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace dlc::dlg {

namespace {
/// An optimizer's keywords and their defaults (PyTorch's).
struct OptimizerSpec {
  const char *name;
  std::vector<std::pair<const char *, double>> numbers;
  std::vector<std::pair<const char *, bool>> flags;
};
} // namespace

static const std::vector<OptimizerSpec> &optimizers() {
  static const std::vector<OptimizerSpec> specs = {
      {"adam",
       {{"lr", 1e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8},
        {"weight_decay", 0}, {"clip_norm", 0}},
       {}},
      {"adamw",
       {{"lr", 1e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8},
        {"weight_decay", 1e-2}, {"clip_norm", 0}},
       {}},
      {"sgd",
       {{"lr", 1e-2}, {"momentum", 0}, {"weight_decay", 0}, {"clip_norm", 0}},
       {{"nesterov", false}}},
  };
  return specs;
}

/// `optimizer = adam(lr=0.001, ...)` as the `dlc.optimizer` dictionary.
static FailureOr<DictionaryAttr> buildOptimizer(GraphBuilder &graph,
                                                const Assign &assign) {
  auto *call = assign.value->dyn_cast<CallExpr>();
  auto names = [] {
    std::string all;
    for (const OptimizerSpec &spec : optimizers())
      all += (all.empty() ? "" : ", ") + std::string(spec.name);
    return all;
  };
  if (!call)
    return graph.error(assign.value->loc())
           << "optimizer must be a call, e.g. adam(lr=0.001) (optimizers: "
           << names() << ")";
  auto spec = llvm::find_if(optimizers(), [&](const OptimizerSpec &s) {
    return call->callee == s.name;
  });
  if (spec == optimizers().end())
    return graph.error(call->loc())
           << "unknown optimizer '" << call->callee << "' (optimizers: "
           << names() << ")";
  if (!call->args.empty())
    return graph.error(call->args.front().value->loc())
           << "'" << call->callee << "' takes keywords only, e.g. lr=0.001";
  OpBuilder &b = graph.builder;
  SmallVector<NamedAttribute> entries{
      b.getNamedAttr("kind", b.getStringAttr(spec->name))};
  for (auto &[name, fallback] : spec->numbers)
    entries.push_back(b.getNamedAttr(name, b.getF64FloatAttr(fallback)));
  for (auto &[name, fallback] : spec->flags)
    entries.push_back(b.getNamedAttr(name, b.getBoolAttr(fallback)));
  for (const KwArg &kw : call->kwargs) {
    auto entry = llvm::find_if(entries, [&](const NamedAttribute &e) {
      return e.getName() == kw.name && e.getName() != "kind";
    });
    if (entry == entries.end()) {
      auto diag = graph.error(kw.loc) << "'" << call->callee
                                      << "' has no keyword '" << kw.name
                                      << "' (its keywords: ";
      llvm::interleaveComma(llvm::drop_begin(entries), diag,
                            [&](const NamedAttribute &e) {
                              diag << e.getName().getValue();
                            });
      return diag << ")";
    }
    if (isa<BoolAttr>(entry->getValue())) {
      if (kw.value.kind != Attr::Bool)
        return graph.error(kw.value.loc) << "'" << kw.name << "' needs true or false";
      entry->setValue(b.getBoolAttr(kw.value.b));
      continue;
    }
    double v;
    if (kw.value.kind == Attr::Float)
      v = kw.value.f;
    else if (kw.value.kind == Attr::Int)
      v = double(kw.value.i);
    else
      return graph.error(kw.value.loc) << "'" << kw.name << "' needs a number";
    if (!(v >= 0) || (kw.name == "lr" && v == 0))
      return graph.error(kw.value.loc)
             << "'" << kw.name << "' must be "
             << (kw.name == "lr" ? "positive" : "at least 0") << ", got " << v;
    if ((kw.name == "beta1" || kw.name == "beta2" || kw.name == "momentum") &&
        v >= 1)
      return graph.error(kw.value.loc)
             << "'" << kw.name << "' must be below 1, got " << v;
    entry->setValue(b.getF64FloatAttr(v));
  }
  return b.getDictionaryAttr(entries);
}

LogicalResult buildTrainGraph(GraphBuilder &graph, const TrainBlock &train,
                              const Graph &ast, ModuleOp module,
                              const std::string &baseDir) {
  std::string name = ast.name + "_train";
  if (module.lookupSymbol(name))
    return graph.error(train.nameLoc)
           << "the train block's loss graph would be named '" << name
           << "', which a graph of the file already is";
  graph.names.clear();
  graph.stage = 0;
  OpBuilder &b = graph.builder;
  SmallVector<Type> inputTypes;
  SmallVector<const Binding *> inputs;
  for (const std::vector<Binding> *list : {&ast.inputs, &train.inputs})
    for (const Binding &input : *list) {
      auto type = graph.resolveType(input.type);
      if (failed(type))
        return failure();
      inputTypes.push_back(*type);
      inputs.push_back(&input);
    }
  b.setInsertionPointToEnd(module.getBody());
  auto func = b.create<func::FuncOp>(graph.loc(train.loc), name,
                                     b.getFunctionType(inputTypes, {}));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  for (auto [i, input] : llvm::enumerate(inputs)) {
    func.setArgAttr(i, "dlc.name", b.getStringAttr(input->name));
    if (!input->type.shard.empty())
      func.setArgAttr(i, "dlc.sharding",
                      b.getStrArrayAttr(SmallVector<StringRef>(input->type.shard.begin(),
                                                               input->type.shard.end())));
    body->getArgument(i).setLoc(graph.loc(input->loc));
    auto taken = graph.names.find(input->name);
    if (taken != graph.names.end())
      return graph.error(input->loc)
             << "train input '" << input->name
             << "' has the name of an input of graph '" << ast.name << "'";
    graph.names[input->name] = {body->getArgument(i), input->loc};
  }
  for (const Stmt &stmt : ast.body)
    if (failed(buildStatement(graph, stmt, baseDir)))
      return failure();

  // The train block: `optimizer = ...` is configuration; the rest are ops.
  DictionaryAttr optimizer;
  for (const Stmt &stmt : train.body) {
    auto *assign = std::get_if<Assign>(&stmt);
    if (assign && assign->names.size() == 1 &&
        assign->names[0].name == "optimizer") {
      auto built = buildOptimizer(graph, *assign);
      if (failed(built))
        return failure();
      optimizer = *built;
      continue;
    }
    if (failed(buildStatement(graph, stmt, baseDir)))
      return failure();
  }
  if (!optimizer) {
    Assign fallback{train.loc, {{train.loc, "optimizer"}},
                    std::make_unique<CallExpr>(train.loc, "adam")};
    optimizer = *buildOptimizer(graph, fallback);
  }

  auto loss = graph.names.find("loss");
  if (loss == graph.names.end())
    return graph.error(train.loc)
           << "the train block defines no 'loss' (e.g. loss = "
              "cross_entropy(logits, label))";
  Value value = loss->second.first;
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() != 0 || !isa<FloatType>(type.getElementType()))
    return graph.error(loss->second.second)
           << "the loss must be a scalar float, got " << dlc::formatType(type)
           << " (reduce it, e.g. with reduction=mean)";
  b.create<func::ReturnOp>(graph.loc(train.loc), value);
  func.setFunctionType(b.getFunctionType(inputTypes, {type}));
  func.setResultAttr(0, "dlc.name", b.getStringAttr("loss"));
  func->setAttr("dlc.optimizer", optimizer);
  func->setAttr("dlc.graph", b.getStringAttr(ast.name));
  return success();
}

} // namespace dlc::dlg
