//===- GraphBuilder.h - state shared by MLIRGen and the op table -*- C++ -*-===//
//
// Internal to frontend/text: the graph under construction (names, bound
// dimensions, an OpBuilder) and the view of one call that the op table's
// builders use to read arguments and keywords with checked kinds.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_TEXT_GRAPHBUILDER_H
#define DLC_FRONTEND_TEXT_GRAPHBUILDER_H

#include "frontend/text/AST.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

#include <map>
#include <optional>
#include <set>
#include <string>

namespace dlc::dlg {

/// A value of the graph, or a number literal that takes its element type
/// from the op that uses it (`x * 0.5` multiplies by an f32 scalar when `x`
/// is f32).
struct Operand {
  Location loc;
  mlir::Value value;
  bool isNumber = false;
  bool isInteger = false;
  double number = 0;
};

class GraphBuilder {
public:
  GraphBuilder(mlir::MLIRContext &context, std::map<std::string, int64_t> dims)
      : context(context), builder(&context), dims(std::move(dims)) {}

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  /// The pipeline stage of the statements being built (one more after each
  /// `@stage` line).
  int64_t stage = 0;
  /// Sizes of the symbolic dimensions.
  std::map<std::string, int64_t> dims;

  mlir::Location loc(const Location &l) const;
  mlir::InFlightDiagnostic error(const Location &l) const;

  /// The size a dimension stands for; an error at its location when it is
  /// a symbolic dimension with no size.
  mlir::FailureOr<int64_t> resolveDim(const Dim &dim) const;
  /// An element type by name (f32, bf16, i1, ...), or a null type.
  mlir::Type elementType(const std::string &name) const;
  /// Fails at `l` when a tensor of `shape` would have more elements than
  /// any device holds (2^48), so that no later size computation overflows.
  mlir::LogicalResult checkShapeSize(const Location &l,
                                     llvm::ArrayRef<int64_t> shape) const;
  /// The tensor type a `TypeExpr` denotes once dimensions are bound.
  mlir::FailureOr<mlir::RankedTensorType> resolveType(const TypeExpr &type) const;

  /// `operand` as a value: a number becomes a rank-0 constant of
  /// `elementType`.
  mlir::FailureOr<mlir::Value> materialize(const Operand &operand,
                                           mlir::Type elementType);
  /// `operand` as a value, failing with "a bare number has no type" when it
  /// is a number and `what` needs a tensor.
  mlir::FailureOr<mlir::Value> tensor(const Operand &operand,
                                      llvm::StringRef what);

  /// Creates the op `name`, whose result type its shape inference
  /// (InferTypeOpInterface) computes; a shape error is reported at `l` and
  /// nothing is created.
  mlir::FailureOr<mlir::Value>
  create(const Location &l, llvm::StringRef name, mlir::ValueRange operands,
         llvm::ArrayRef<mlir::NamedAttribute> attrs = {});
  template <typename OpTy>
  mlir::FailureOr<mlir::Value>
  create(const Location &l, mlir::ValueRange operands,
         llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    return create(l, OpTy::getOperationName(), operands, attrs);
  }

  /// Creates the op `name` with a given result type, then verifies it.
  mlir::FailureOr<mlir::Value>
  createTyped(const Location &l, llvm::StringRef name, mlir::Type type,
              mlir::ValueRange operands,
              llvm::ArrayRef<mlir::NamedAttribute> attrs = {});
  template <typename OpTy>
  mlir::FailureOr<mlir::Value>
  createTyped(const Location &l, mlir::Type type, mlir::ValueRange operands,
              llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    return createTyped(l, OpTy::getOperationName(), type, operands, attrs);
  }

  /// Builds an expression: names resolve to defined values, numbers stay
  /// numbers until an op gives them a type.
  mlir::FailureOr<Operand> buildExpr(const Expr &expr);

  /// Values defined so far, with where they were defined.
  std::map<std::string, std::pair<mlir::Value, Location>> names;

private:
  mlir::FailureOr<Operand> buildBinary(const BinaryExpr &expr);
  mlir::FailureOr<Operand> buildCall(const CallExpr &call);
};

struct OpSpec;

/// One call being built: its evaluated positional arguments and checked
/// access to its keywords.
class CallBuilder {
public:
  CallBuilder(GraphBuilder &graph, const CallExpr &call, const OpSpec &spec,
              std::vector<Operand> args)
      : graph(graph), call(call), spec(spec), args(std::move(args)) {}

  GraphBuilder &graph;
  const CallExpr &call;
  /// The entry of the vocabulary that builds the call.
  const OpSpec &spec;
  std::vector<Operand> args;

  const Location &loc() const { return call.loc(); }
  llvm::StringRef name() const { return call.callee; }
  mlir::InFlightDiagnostic error(const Location &l) const {
    return graph.error(l) << "'" << call.callee << "': ";
  }

  /// Positional argument `i` as a tensor.
  mlir::FailureOr<mlir::Value> tensorArg(size_t i);
  /// Positional argument `i`, a number taking `elementType`.
  mlir::FailureOr<mlir::Value> arg(size_t i, mlir::Type elementType);

  const KwArg *keyword(llvm::StringRef name) const;
  mlir::FailureOr<int64_t> intKw(llvm::StringRef name, int64_t fallback);
  mlir::FailureOr<int64_t> requiredIntKw(llvm::StringRef name);
  mlir::FailureOr<double> floatKw(llvm::StringRef name, double fallback);
  mlir::FailureOr<bool> boolKw(llvm::StringRef name, bool fallback);
  /// A string. Without a fallback the keyword is required.
  mlir::FailureOr<std::string>
  stringKw(llvm::StringRef name, std::optional<std::string> fallback);
  /// A bare name or a string among `choices`.
  mlir::FailureOr<std::string> choiceKw(llvm::StringRef name,
                                        llvm::ArrayRef<llvm::StringRef> choices,
                                        llvm::StringRef fallback);
  /// A list of integers; symbolic dimension names resolve to their sizes.
  /// A single integer is accepted as a one-element list.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  intListKw(llvm::StringRef name, std::optional<llvm::SmallVector<int64_t>> fallback);
  /// A tensor shape: sizes of at least 0 (or dimension names) whose product
  /// is a sane number of elements.
  mlir::FailureOr<llvm::SmallVector<int64_t>> shapeKw(llvm::StringRef name);
  /// An element type given by name (`to=f16`).
  mlir::FailureOr<mlir::Type> dtypeKw(llvm::StringRef name,
                                      std::optional<mlir::Type> fallback);
};

struct OdsOp;

/// Builds one statement of a graph or train body (MLIRGen.cpp).
mlir::LogicalResult buildStatement(GraphBuilder &graph, const Stmt &stmt,
                                   const std::string &baseDir);

/// Builds `train`'s loss graph `@<graph>_train` into `module`: the graph's
/// inputs and the train block's, the graph's body and the train block's,
/// the scalar `loss` as result, the optimizer as `dlc.optimizer`
/// (TrainGraph.cpp).
mlir::LogicalResult buildTrainGraph(GraphBuilder &graph, const TrainBlock &train,
                                    const Graph &ast, mlir::ModuleOp module,
                                    const std::string &baseDir);

/// What the op table knows of one op of the .dlg vocabulary.
struct OpSpec {
  const char *name;
  unsigned minArgs, maxArgs;
  std::vector<const char *> keywords;
  mlir::FailureOr<mlir::Value> (*build)(CallBuilder &);
  /// The op's ODS, for entries built by `buildFromOds`; null for the
  /// hand-written ones.
  const OdsOp *ods = nullptr;
};

/// The op of the .dlg vocabulary called `name`, or null: a hand-written
/// entry where there is one, else the dialect op of that mnemonic.
const OpSpec *lookupOp(llvm::StringRef name);
/// The closest op name to `name` for a "did you mean" hint, or empty.
std::string closestOpName(llvm::StringRef name);

} // namespace dlc::dlg

#endif // DLC_FRONTEND_TEXT_GRAPHBUILDER_H
