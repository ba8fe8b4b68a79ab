//===- MLIRGen.cpp - builds dlc IR from a .dlg AST ------------------------===//
//
// 1. Bind symbolic dimensions: from the shapes of supplied inputs, then from
//    `--dim`; a dimension bound two ways must agree.
// 2. Per graph: a `func.func` whose arguments are the inputs; then each
//    statement in order: `param` creates a `dlc.param` (its weight file, if
//    any, checked now), an assignment builds its expression.
// 3. Outputs name defined values; their declared types must match.
// Every error is reported at the source location and stops the build.
//
//===----------------------------------------------------------------------===//

#include "frontend/text/MLIRGen.h"

#include "frontend/text/GraphBuilder.h"
#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"
#include "support/weights/WeightFiles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

#include <functional>

using namespace mlir;

namespace dlc::dlg {

// IR types print in the .dlg notation, as AST types do.
using dlc::formatType;

/// A number as the user would write it: 3, 0.5, 1e-09.
static std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

//===----------------------------------------------------------------------===//
// GraphBuilder: locations, types, operands
//===----------------------------------------------------------------------===//

mlir::Location GraphBuilder::loc(const Location &l) const {
  return FileLineColLoc::get(&context, l.file ? *l.file : "<input>", l.line,
                             l.col);
}

InFlightDiagnostic GraphBuilder::error(const Location &l) const {
  return mlir::emitError(loc(l));
}

FailureOr<int64_t> GraphBuilder::resolveDim(const Dim &dim) const {
  if (!dim.isSymbolic())
    return dim.size();
  auto found = dims.find(dim.symbol());
  if (found != dims.end())
    return found->second;
  return error(dim.loc) << "symbolic dimension '" << dim.symbol()
                        << "' is not bound: pass --dim " << dim.symbol()
                        << "=<size> or an input whose shape has it";
}

Type GraphBuilder::elementType(const std::string &name) const {
  MLIRContext *ctx = &context;
  return llvm::StringSwitch<Type>(name)
      .Case("f64", Float64Type::get(ctx))
      .Case("f32", Float32Type::get(ctx))
      .Case("f16", Float16Type::get(ctx))
      .Case("bf16", BFloat16Type::get(ctx))
      .Case("i64", IntegerType::get(ctx, 64))
      .Case("i32", IntegerType::get(ctx, 32))
      .Case("i8", IntegerType::get(ctx, 8))
      .Case("u8", IntegerType::get(ctx, 8, IntegerType::Unsigned))
      .Case("i1", IntegerType::get(ctx, 1))
      .Default(Type());
}

LogicalResult GraphBuilder::checkShapeSize(const Location &l,
                                           ArrayRef<int64_t> shape) const {
  constexpr int64_t kMaxElements = int64_t(1) << 48;
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d != 0 && elements > kMaxElements / d)
      return error(l) << "a tensor of shape " << formatShape(shape)
                      << " has more than 2^48 elements";
    elements *= d;
  }
  return success();
}

FailureOr<RankedTensorType>
GraphBuilder::resolveType(const TypeExpr &type) const {
  SmallVector<int64_t> shape;
  for (const Dim &dim : type.dims) {
    auto size = resolveDim(dim);
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  if (failed(checkShapeSize(type.loc, shape)))
    return failure();
  Type element = elementType(type.dtype);
  if (!element)
    return error(type.loc) << "unknown element type '" << type.dtype << "'";
  return RankedTensorType::get(shape, element);
}

FailureOr<Value> GraphBuilder::materialize(const Operand &operand,
                                           Type elementType) {
  if (!operand.isNumber)
    return operand.value;
  auto type = RankedTensorType::get({}, elementType);
  Attribute value;
  if (isa<FloatType>(elementType)) {
    value = DenseElementsAttr::get(
        type, builder.getFloatAttr(elementType, operand.number));
  } else {
    if (!operand.isInteger)
      return error(operand.loc)
             << "the number " << formatNumber(operand.number)
             << " is not an integer, but the other operand is "
             << formatElementType(elementType) << " (use cast to convert)";
    value = DenseElementsAttr::get(
        type, builder.getIntegerAttr(elementType,
                                     static_cast<int64_t>(operand.number)));
  }
  return createTyped<ConstantOp>(operand.loc, type, {},
                                 {builder.getNamedAttr("value", value)});
}

FailureOr<Value> GraphBuilder::tensor(const Operand &operand, StringRef what) {
  if (!operand.isNumber)
    return operand.value;
  return error(operand.loc)
         << what << " needs a tensor here; a bare number has no shape or type";
}

FailureOr<Value> GraphBuilder::create(const Location &l, StringRef name,
                                      ValueRange operands,
                                      ArrayRef<NamedAttribute> attrs) {
  auto op = RegisteredOperationName::lookup(name, &context);
  auto *infer = op ? op->getInterface<InferTypeOpInterface>() : nullptr;
  if (!infer)
    return error(l) << "'" << name
                    << "' has no shape inference to type its result";
  SmallVector<Type> types;
  if (failed(infer->inferReturnTypes(
          &context, loc(l), operands, DictionaryAttr::get(&context, attrs),
          OpaqueProperties(nullptr), {}, types)))
    return failure();
  if (types.size() != 1)
    return error(l) << "'" << name << "' has " << types.size()
                    << " results; a .dlg expression has one";
  return createTyped(l, name, types.front(), operands, attrs);
}

FailureOr<Value> GraphBuilder::createTyped(const Location &l, StringRef name,
                                           Type type, ValueRange operands,
                                           ArrayRef<NamedAttribute> attrs) {
  if (auto ranked = dyn_cast<RankedTensorType>(type)) {
    std::string problem = shapeSizeProblem(ranked.getShape());
    if (!problem.empty())
      return error(l) << "'" << name << "' would give a result of shape "
                      << formatShape(ranked.getShape()) << ", which "
                      << problem;
  }
  OperationState state(loc(l), name);
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(type);
  Operation *op = builder.create(state);
  if (failed(mlir::verify(op))) {
    op->erase();
    return failure();
  }
  return op->getResult(0);
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

FailureOr<Operand> GraphBuilder::buildExpr(const Expr &expr) {
  if (auto *name = expr.dyn_cast<NameExpr>()) {
    auto found = names.find(name->name);
    if (found == names.end()) {
      auto diag = error(expr.loc()) << "undefined name '" << name->name << "'";
      if (lookupOp(name->name))
        diag << " ('" << name->name << "' is an op: call it with arguments)";
      return diag;
    }
    return Operand{expr.loc(), found->second.first};
  }
  if (auto *number = expr.dyn_cast<NumberExpr>())
    return Operand{expr.loc(), Value(), true, number->isInteger, number->value};
  if (auto *unary = expr.dyn_cast<UnaryExpr>()) {
    auto operand = buildExpr(*unary->operand);
    if (failed(operand))
      return failure();
    if (operand->isNumber) {
      operand->number = -operand->number;
      operand->loc = expr.loc();
      return operand;
    }
    auto neg = create<NegOp>(expr.loc(), {operand->value});
    if (failed(neg))
      return failure();
    return Operand{expr.loc(), *neg};
  }
  if (auto *binary = expr.dyn_cast<BinaryExpr>())
    return buildBinary(*binary);
  return buildCall(*expr.dyn_cast<CallExpr>());
}

FailureOr<Operand> GraphBuilder::buildBinary(const BinaryExpr &expr) {
  auto lhs = buildExpr(*expr.lhs);
  if (failed(lhs))
    return failure();
  auto rhs = buildExpr(*expr.rhs);
  if (failed(rhs))
    return failure();
  // Infix operators are the ops of the same name; build them as calls so
  // they share the checks (and messages) of `add(a, b)`.
  static const std::map<char, const char *> opNames = {
      {'+', "add"}, {'-', "sub"}, {'*', "mul"}, {'/', "div"}, {'@', "matmul"}};
  CallExpr call(expr.loc(), opNames.at(expr.op));
  const OpSpec &spec = *lookupOp(call.callee);
  CallBuilder builder(*this, call, spec, {*lhs, *rhs});
  auto value = spec.build(builder);
  if (failed(value))
    return failure();
  return Operand{expr.loc(), *value};
}

FailureOr<Operand> GraphBuilder::buildCall(const CallExpr &call) {
  const OpSpec *spec = lookupOp(call.callee);
  if (!spec) {
    auto diag = error(call.loc()) << "unknown op '" << call.callee << "'";
    std::string hint = closestOpName(call.callee);
    if (!hint.empty())
      diag << " (did you mean '" << hint << "'?)";
    return diag;
  }
  size_t n = call.args.size();
  if (n < spec->minArgs || n > spec->maxArgs) {
    auto diag = error(call.loc()) << "'" << call.callee << "' takes ";
    if (spec->minArgs == spec->maxArgs)
      diag << spec->minArgs;
    else if (spec->maxArgs == ~0u)
      diag << "at least " << spec->minArgs;
    else
      diag << spec->minArgs << " to " << spec->maxArgs;
    diag << (spec->maxArgs == 1 && spec->minArgs == 1 ? " argument"
                                                      : " arguments")
         << ", got " << n;
    return diag;
  }
  for (const KwArg &kw : call.kwargs) {
    if (llvm::is_contained(spec->keywords, kw.name))
      continue;
    auto diag = error(kw.loc) << "'" << call.callee
                              << "' has no keyword '" << kw.name << "'";
    if (spec->keywords.empty())
      diag << " (it takes none)";
    else
      diag << " (it takes " << llvm::join(spec->keywords, ", ") << ")";
    return diag;
  }
  std::vector<Operand> args;
  for (const Arg &arg : call.args) {
    auto operand = buildExpr(*arg.value);
    if (failed(operand))
      return failure();
    operand->loc = arg.loc;
    args.push_back(*operand);
  }
  CallBuilder builder(*this, call, *spec, std::move(args));
  auto value = spec->build(builder);
  if (failed(value))
    return failure();
  return Operand{call.loc(), *value};
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

/// Records `name` as defined at `where`, failing on a redefinition.
static LogicalResult define(GraphBuilder &graph, const std::string &name,
                            const Location &where, Value value) {
  auto [it, inserted] = graph.names.try_emplace(name, value, where);
  if (!inserted)
    return graph.error(where) << "'" << name << "' is already defined at "
                              << it->second.second.line << ":"
                              << it->second.second.col;
  return success();
}

/// The `init` dictionary of a parameter, with weight files checked.
static FailureOr<DictionaryAttr> buildInit(GraphBuilder &graph,
                                           const ParamDecl &param,
                                           RankedTensorType type,
                                           const std::string &baseDir) {
  const Init &init = param.init;
  OpBuilder &b = graph.builder;
  SmallVector<NamedAttribute> entries{
      b.getNamedAttr("kind", b.getStringAttr(init.callee))};
  auto expectKeywords = [&](ArrayRef<StringRef> allowed) -> LogicalResult {
    for (const KwArg &kw : init.kwargs)
      if (!llvm::is_contained(allowed, kw.name))
        return graph.error(kw.loc)
               << "initialiser '" << init.callee << "' has no keyword '"
               << kw.name << "'"
               << (allowed.empty()
                       ? std::string(" (it takes none)")
                       : " (it takes " + llvm::join(allowed, ", ") + ")");
    return success();
  };
  auto numberEntries = [&](ArrayRef<StringRef> keys) -> LogicalResult {
    if (failed(expectKeywords(keys)))
      return failure();
    if (!init.args.empty())
      return graph.error(init.args.front().loc)
             << "initialiser '" << init.callee
             << "' takes keyword arguments only, e.g. " << init.callee
             << "(seed=1)";
    for (const KwArg &kw : init.kwargs) {
      const Attr &v = kw.value;
      if (kw.name == "seed") {
        if (v.kind != Attr::Int || v.i < 0)
          return graph.error(v.loc) << "seed must be a non-negative integer";
        entries.push_back(b.getNamedAttr("seed", b.getI64IntegerAttr(v.i)));
      } else if (v.kind == Attr::Int || v.kind == Attr::Float) {
        double d = v.kind == Attr::Int ? double(v.i) : v.f;
        entries.push_back(b.getNamedAttr(kw.name, b.getF64FloatAttr(d)));
      } else {
        return graph.error(v.loc) << "'" << kw.name << "' needs a number";
      }
    }
    return success();
  };
  StringRef kind = init.callee;
  if (kind == "zeros" || kind == "ones") {
    if (failed(numberEntries({})))
      return failure();
  } else if (kind == "normal") {
    if (failed(numberEntries({"mean", "std", "seed"})))
      return failure();
  } else if (kind == "uniform") {
    if (failed(numberEntries({"low", "high", "seed"})))
      return failure();
  } else if (kind == "xavier" || kind == "he") {
    if (failed(numberEntries({"seed"})))
      return failure();
  } else if (kind == "load") {
    if (failed(expectKeywords({"key"})))
      return failure();
    if (init.args.size() != 1 || init.args[0].kind != Attr::String)
      return graph.error(init.loc)
             << "load needs the weight file's path as a string, e.g. "
                "load(\"w.npy\")";
    std::string path = init.args[0].s;
    if (!llvm::sys::path::is_absolute(path) && !baseDir.empty()) {
      SmallString<256> joined(baseDir);
      llvm::sys::path::append(joined, path);
      path = std::string(joined);
    }
    // Archives default to the parameter's own name as the key.
    std::string key;
    if (const KwArg *kw = init.kwargs.empty() ? nullptr : &init.kwargs[0]) {
      if (kw->value.kind != Attr::String)
        return graph.error(kw->value.loc) << "key needs a string";
      key = kw->value.s;
    } else if (!StringRef(path).ends_with(".npy")) {
      key = param.name;
    }
    weights::TensorHeader header;
    std::string message;
    if (!weights::readHeader(path, key, header, message))
      return graph.error(init.args[0].loc) << message;
    std::string held = dtypeName(header.dtype) + formatShape(header.shape);
    std::string declared = formatType(type);
    if (held != declared)
      return graph.error(init.args[0].loc)
             << "weight file '" << init.args[0].s << "'"
             << (key.empty() ? "" : " key '" + key + "'") << " holds " << held
             << ", but '" << param.name << "' is declared " << declared;
    entries[0] = b.getNamedAttr("kind", b.getStringAttr("file"));
    entries.push_back(b.getNamedAttr("path", b.getStringAttr(path)));
    if (!key.empty())
      entries.push_back(b.getNamedAttr("key", b.getStringAttr(key)));
  } else {
    return graph.error(init.loc)
           << "unknown initialiser '" << init.callee
           << "' (expected zeros, ones, normal, uniform, xavier, he or load)";
  }
  return b.getDictionaryAttr(entries);
}

/// `@shard(data, _)` as `dlc.sharding = ["data", ""]` (passes/partition).
static ArrayAttr shardingAttr(OpBuilder &b, const TypeExpr &type) {
  SmallVector<StringRef> axes(type.shard.begin(), type.shard.end());
  return b.getStrArrayAttr(axes);
}

static LogicalResult buildParam(GraphBuilder &graph, const ParamDecl &param,
                                const std::string &baseDir) {
  auto type = graph.resolveType(param.type);
  if (failed(type))
    return failure();
  auto init = buildInit(graph, param, *type, baseDir);
  if (failed(init))
    return failure();
  OpBuilder &b = graph.builder;
  SmallVector<NamedAttribute> attrs{b.getNamedAttr("name", b.getStringAttr(param.name)),
                                    b.getNamedAttr("init", *init)};
  if (!param.type.shard.empty())
    attrs.push_back(b.getNamedAttr("dlc.sharding", shardingAttr(b, param.type)));
  auto value = graph.createTyped<ParamOp>(param.loc, *type, {}, attrs);
  if (failed(value))
    return failure();
  return define(graph, param.name, param.nameLoc, *value);
}

static LogicalResult buildAssign(GraphBuilder &graph, const Assign &assign) {
  auto value = graph.buildExpr(*assign.value);
  if (failed(value))
    return failure();
  if (value->isNumber)
    return graph.error(assign.value->loc())
           << "a bare number has no shape or type: use it in an op with a "
              "tensor, e.g. x * "
           << formatNumber(value->number);
  if (assign.names.size() != 1)
    return graph.error(assign.names[1].loc)
           << "the expression has 1 result, but " << assign.names.size()
           << " names are assigned";
  return define(graph, assign.names[0].name, assign.names[0].loc, value->value);
}

//===----------------------------------------------------------------------===//
// Graphs and dimensions
//===----------------------------------------------------------------------===//

LogicalResult buildStatement(GraphBuilder &graph, const Stmt &stmt,
                             const std::string &baseDir) {
  if (std::holds_alternative<StageMark>(stmt)) {
    ++graph.stage;
    return success();
  }
  Block *block = graph.builder.getInsertionBlock();
  Operation *last = block->empty() ? nullptr : &block->back();
  LogicalResult built = std::holds_alternative<ParamDecl>(stmt)
                            ? buildParam(graph, std::get<ParamDecl>(stmt), baseDir)
                            : buildAssign(graph, std::get<Assign>(stmt));
  // After an `@stage` line, the statement's ops carry their pipeline stage
  // (`dlc.stage`, which passes/partition/Pipeline.h reads); ops before the
  // first mark are in stage 0.
  if (succeeded(built) && graph.stage > 0)
    for (Operation &op : llvm::make_range(last ? std::next(last->getIterator()) : block->begin(),
                                          block->end()))
      op.setAttr("dlc.stage", graph.builder.getI64IntegerAttr(graph.stage));
  return built;
}

static LogicalResult buildGraph(GraphBuilder &graph, const Graph &ast,
                                ModuleOp module, const std::string &baseDir) {
  graph.names.clear();
  graph.stage = 0;
  OpBuilder &b = graph.builder;
  SmallVector<Type> inputTypes, outputTypes;
  for (const Binding &input : ast.inputs) {
    auto type = graph.resolveType(input.type);
    if (failed(type))
      return failure();
    inputTypes.push_back(*type);
  }
  for (const Binding &output : ast.outputs) {
    auto type = graph.resolveType(output.type);
    if (failed(type))
      return failure();
    outputTypes.push_back(*type);
  }
  b.setInsertionPointToEnd(module.getBody());
  auto func = b.create<func::FuncOp>(graph.loc(ast.loc), ast.name,
                                     b.getFunctionType(inputTypes, outputTypes));
  for (auto [i, input] : llvm::enumerate(ast.inputs)) {
    func.setArgAttr(i, "dlc.name", b.getStringAttr(input.name));
    if (!input.type.shard.empty())
      func.setArgAttr(i, "dlc.sharding", shardingAttr(b, input.type));
  }
  for (const Binding &output : ast.outputs)
    if (!output.type.shard.empty())
      return graph.error(output.type.shardLoc)
             << "@shard applies to inputs and parameters; a graph's outputs are "
                "whole on every rank";
  for (auto [i, output] : llvm::enumerate(ast.outputs))
    func.setResultAttr(i, "dlc.name", b.getStringAttr(output.name));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  for (auto [i, input] : llvm::enumerate(ast.inputs)) {
    body->getArgument(i).setLoc(graph.loc(input.loc));
    if (failed(define(graph, input.name, input.loc, body->getArgument(i))))
      return failure();
  }
  for (const Stmt &stmt : ast.body)
    if (failed(buildStatement(graph, stmt, baseDir)))
      return failure();
  SmallVector<Value> results;
  for (auto [output, declared] : llvm::zip(ast.outputs, outputTypes)) {
    auto found = graph.names.find(output.name);
    if (found == graph.names.end())
      return graph.error(output.loc) << "output '" << output.name
                                     << "' is not defined in the graph body";
    Value value = found->second.first;
    if (value.getType() != declared)
      return graph.error(output.type.loc)
             << "output '" << output.name << "' is declared "
             << formatType(declared) << " but the graph computes "
             << formatType(value.getType());
    results.push_back(value);
  }
  b.create<func::ReturnOp>(graph.loc(ast.loc), results);
  return success();
}

/// Every symbolic dimension of the graphs' signatures, in order of first
/// appearance, with where it first appears.
static std::vector<std::pair<std::string, Location>>
signatureDims(const Module &module) {
  std::vector<std::pair<std::string, Location>> dims;
  auto add = [&](const TypeExpr &type) {
    for (const Dim &d : type.dims)
      if (d.isSymbolic() &&
          llvm::none_of(dims, [&](auto &e) { return e.first == d.symbol(); }))
        dims.emplace_back(d.symbol(), d.loc);
  };
  for (const Graph &g : module.graphs) {
    for (const Binding &b : g.inputs) add(b.type);
    for (const Binding &b : g.outputs) add(b.type);
  }
  return dims;
}

/// Whether `name` appears anywhere a dimension can: in a type, or as a bare
/// name in a keyword list (`shape=[N, 64]`).
static bool mentionsDim(const Module &module, const std::string &name) {
  std::function<bool(const Attr &)> inAttr = [&](const Attr &a) {
    if (a.kind == Attr::Ident) return a.s == name;
    return a.kind == Attr::List && llvm::any_of(a.list, inAttr);
  };
  std::function<bool(const Expr &)> inExpr = [&](const Expr &e) -> bool {
    if (auto *call = e.dyn_cast<CallExpr>())
      return llvm::any_of(call->kwargs, [&](auto &k) { return inAttr(k.value); }) ||
             llvm::any_of(call->args, [&](auto &a) { return inExpr(*a.value); });
    if (auto *b = e.dyn_cast<BinaryExpr>())
      return inExpr(*b->lhs) || inExpr(*b->rhs);
    if (auto *u = e.dyn_cast<UnaryExpr>())
      return inExpr(*u->operand);
    return false;
  };
  auto inType = [&](const TypeExpr &t) {
    return llvm::any_of(t.dims, [&](const Dim &d) {
      return d.isSymbolic() && d.symbol() == name;
    });
  };
  auto inBody = [&](const std::vector<Stmt> &body) {
    return llvm::any_of(body, [&](const Stmt &s) {
      if (auto *p = std::get_if<ParamDecl>(&s)) return inType(p->type);
      if (auto *a = std::get_if<Assign>(&s)) return inExpr(*a->value);
      return false;
    });
  };
  auto inBindings = [&](const std::vector<Binding> &bs) {
    return llvm::any_of(bs, [&](const Binding &b) { return inType(b.type); });
  };
  return llvm::any_of(module.graphs, [&](const Graph &g) {
           return inBindings(g.inputs) || inBindings(g.outputs) || inBody(g.body);
         }) ||
         llvm::any_of(module.trains, [&](const TrainBlock &t) {
           return inBindings(t.inputs) || inBody(t.body);
         });
}

/// Binds dimensions from supplied input shapes and `--dim`.
static FailureOr<std::map<std::string, int64_t>>
bindDims(const Module &module, MLIRContext &context,
         const BuildOptions &options, BuildResult &result) {
  GraphBuilder scratch(context, {});
  std::map<std::string, int64_t> dims;
  std::map<std::string, std::string> boundBy;
  std::map<std::string, Location> boundAt;
  const Graph &entry = module.graphs.front();
  // The inputs values may be given for: the entry graph's, and with
  // training its train blocks' too.
  std::vector<const Binding *> bindable;
  for (const Binding &b : entry.inputs)
    bindable.push_back(&b);
  if (options.buildTraining)
    for (const TrainBlock &t : module.trains)
      if (t.graphName == entry.name)
        for (const Binding &b : t.inputs)
          bindable.push_back(&b);
  for (auto &[name, shape] : options.inputShapes) {
    if (llvm::any_of(bindable, [&](const Binding *b) { return b->name == name; }))
      continue;
    auto diag = scratch.error(entry.nameLoc)
                << "--input " << name << ": graph '" << entry.name
                << "' has no input named '" << name << "' (its inputs: ";
    llvm::interleaveComma(bindable, diag,
                          [&](const Binding *b) { diag << b->name; });
    return diag << ")";
  }
  for (auto &[name, size] : options.dims)
    if (!mentionsDim(module, name))
      return scratch.error(entry.nameLoc)
             << "--dim " << name << "=" << size
             << ": the model has no symbolic dimension '" << name << "'";
  for (const Binding *bound : bindable) {
    const Binding &input = *bound;
    auto given = options.inputShapes.find(input.name);
    if (given == options.inputShapes.end())
      continue;
    const std::vector<int64_t> &shape = given->second;
    if (shape.size() != input.type.dims.size())
      return scratch.error(input.loc)
             << "input '" << input.name << "' is declared "
             << formatType(input.type) << " (rank " << input.type.dims.size()
             << ") but the data given has shape " << formatShape(shape);
    for (auto [dim, size] : llvm::zip(input.type.dims, shape)) {
      if (!dim.isSymbolic()) {
        if (dim.size() != size)
          return scratch.error(input.loc)
                 << "input '" << input.name << "' is declared "
                 << formatType(input.type) << " but the data given has shape "
                 << formatShape(shape);
        continue;
      }
      auto [it, inserted] = dims.try_emplace(dim.symbol(), size);
      if (!inserted && it->second != size)
        return scratch.error(dim.loc)
               << "dimension '" << dim.symbol() << "' is " << it->second
               << " in input '" << boundBy[dim.symbol()] << "' but " << size
               << " in input '" << input.name << "'";
      boundBy.try_emplace(dim.symbol(), input.name);
      boundAt.try_emplace(dim.symbol(), dim.loc);
    }
  }
  auto known = signatureDims(module);
  for (auto [name, size] : options.dims) {
    auto it = dims.find(name);
    if (it != dims.end() && it->second != size)
      return scratch.error(boundAt[name])
             << "--dim " << name << "=" << size << " disagrees with input '"
             << boundBy[name] << "', whose shape gives " << name << "="
             << it->second;
    dims[name] = size;
  }
  for (auto &[name, where] : known) {
    if (dims.count(name))
      continue;
    if (!options.defaultUnboundDimsToOne)
      return scratch.error(where)
             << "symbolic dimension '" << name
             << "' is not bound: pass --dim " << name
             << "=<size> or an input whose shape has it";
    dims[name] = 1;
    result.defaultedDims.push_back(name);
  }
  for (auto &[name, where] : known)
    result.dims.emplace_back(name, dims[name]);
  return dims;
}

BuildResult buildModule(const Module &module, MLIRContext &context,
                        const BuildOptions &options) {
  loadBuilderDialects(context);
  BuildResult result;
  if (module.graphs.empty()) {
    mlir::emitError(UnknownLoc::get(&context)) << "the file defines no graph";
    return result;
  }
  auto dims = bindDims(module, context, options, result);
  if (failed(dims))
    return result;
  GraphBuilder graph(context, *dims);
  auto moduleOp = ModuleOp::create(graph.loc(module.graphs.front().loc));
  OwningOpRef<ModuleOp> owned(moduleOp);
  if (!options.precision.empty() && options.precision != "f32")
    moduleOp->setAttr("dlc.precision", StringAttr::get(&context, options.precision));
  for (const Graph &g : module.graphs) {
    if (moduleOp.lookupSymbol(g.name)) {
      graph.error(g.nameLoc) << "graph '" << g.name << "' is defined twice";
      return result;
    }
    if (failed(buildGraph(graph, g, moduleOp, options.baseDir)))
      return result;
  }
  for (const TrainBlock &train : module.trains) {
    auto found = llvm::find_if(module.graphs, [&](const Graph &g) {
      return g.name == train.graphName;
    });
    if (found == module.graphs.end()) {
      graph.error(train.nameLoc)
          << "train block names graph '" << train.graphName
          << "', which the file does not define";
      return result;
    }
    if (options.buildTraining &&
        failed(buildTrainGraph(graph, train, *found, moduleOp, options.baseDir)))
      return result;
  }
  result.module = std::move(owned);
  return result;
}

void loadBuilderDialects(MLIRContext &context) {
  context.loadDialect<DlcDialect, func::FuncDialect>();
}

} // namespace dlc::dlg
