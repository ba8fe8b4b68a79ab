//===- AST.h - Abstract syntax tree of the .dlg text format -----*- C++ -*-===//
//
// The tree the parser builds and the graph builder (MLIRGen) consumes, in the
// manner of the Toy tutorial's AST.h. It records what was written, with a
// Location on every node, and checks nothing beyond syntax: names, op names,
// initialiser names, keyword names and shapes are the builder's to verify.
// Plain C++17: no LLVM. The grammar is in docs/format.md.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_TEXT_AST_H
#define DLC_FRONTEND_TEXT_AST_H

#include "frontend/text/Location.h"

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace dlc {
namespace dlg {

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// One dimension of a tensor type: a non-negative size, or the name of a
/// symbolic dimension (`N`), bound later by `--dim N=64` or by an input.
struct Dim {
  Location loc;
  std::variant<int64_t, std::string> value;

  bool isSymbolic() const { return std::holds_alternative<std::string>(value); }
  int64_t size() const { return std::get<int64_t>(value); }
  const std::string &symbol() const { return std::get<std::string>(value); }
};

/// `f32[N, 784]`. `dtype` is one of f64 f32 f16 bf16 i64 i32 i1 (the parser
/// rejects others); an empty `dims` is a scalar (`f32[]`). `loc` is the dtype.
struct TypeExpr {
  Location loc;
  std::string dtype;
  std::vector<Dim> dims;
  /// `@shard(data, _)` after the shape: per dimension the mesh axis it is
  /// split over, or "" (`_`) for whole; empty when not annotated.
  std::vector<std::string> shard;
  Location shardLoc;
};

//===----------------------------------------------------------------------===//
// Attributes: the literal values of keyword arguments and initialiser args
//===----------------------------------------------------------------------===//

/// A literal: `3`, `-1`, `1e-5`, `"mean"`, `true`, `f16`, `[N, T, 12, 64]`.
/// Only the field named by `kind` is meaningful: Int → i, Float → f,
/// String → s (escapes resolved), Bool → b, Ident → s (a bare name such as a
/// dtype, `tanh` or a symbolic dimension), List → list (may mix kinds; may be
/// empty). Negative numbers are folded into i / f.
struct Attr {
  enum Kind { Int, Float, String, Bool, Ident, List };
  Location loc; ///< First character; the '-' of a negative number.
  Kind kind = Int;
  int64_t i = 0;
  double f = 0.0;
  std::string s;
  bool b = false;
  std::vector<Attr> list;
};

/// `name = value` in a call. `loc` is the keyword name; `value.loc` the value.
struct KwArg {
  Location loc;
  std::string name;
  Attr value;
};

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

/// Base of the expression nodes, Toy style: test `kind()` (or use
/// `llvm::isa`/`dyn_cast`, which work through each node's `classof`), or call
/// `dyn_cast<T>()` here. Nodes are owned through `ExprPtr`.
class Expr {
public:
  enum class Kind { Name, Number, Unary, Binary, Call };

  Expr(Kind kind, Location loc) : kind_(kind), loc_(std::move(loc)) {}
  virtual ~Expr() = default;
  Expr(const Expr &) = delete;
  Expr &operator=(const Expr &) = delete;

  Kind kind() const { return kind_; }
  const Location &loc() const { return loc_; }

  /// This node as a T, or nullptr if it is another kind.
  template <typename T> const T *dyn_cast() const {
    return T::classof(this) ? static_cast<const T *>(this) : nullptr;
  }

private:
  Kind kind_;
  Location loc_;
};

using ExprPtr = std::unique_ptr<Expr>;

/// A reference to a value by name: an input, a parameter, an earlier result.
/// `inf`, `true` and op names are not special here.
class NameExpr : public Expr {
public:
  NameExpr(Location loc, std::string name)
      : Expr(Kind::Name, std::move(loc)), name(std::move(name)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Name; }

  std::string name;
};

/// A number literal: `3`, `0.5`, `1e-5` (never negative: `-3` is Unary).
/// `isInteger` says it was written without '.' or exponent; then `intValue`
/// holds it exactly. `value` always holds it as a double.
class NumberExpr : public Expr {
public:
  NumberExpr(Location loc, double value, bool isInteger, int64_t intValue)
      : Expr(Kind::Number, std::move(loc)), value(value), isInteger(isInteger),
        intValue(intValue) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Number; }

  double value;
  bool isInteger;
  int64_t intValue;
};

/// `-operand`; `op` is always '-'. `loc` is the '-'.
class UnaryExpr : public Expr {
public:
  UnaryExpr(Location loc, char op, ExprPtr operand)
      : Expr(Kind::Unary, std::move(loc)), op(op), operand(std::move(operand)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Unary; }

  char op;
  ExprPtr operand;
};

/// `lhs op rhs` with op one of '+' '-' '*' '/' '@' (matmul). `loc` is the
/// operator, as in Toy.
class BinaryExpr : public Expr {
public:
  BinaryExpr(Location loc, char op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, std::move(loc)), op(op), lhs(std::move(lhs)),
        rhs(std::move(rhs)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Binary; }

  char op;
  ExprPtr lhs, rhs;
};

/// A positional call argument. `loc` is the argument's first token, which
/// for `x @ w` differs from `value->loc()` (the '@').
struct Arg {
  Location loc;
  ExprPtr value;
};

/// `callee(args..., kwargs...)`: positional arguments first, then keyword
/// arguments (their names are distinct). `loc` is the callee name.
class CallExpr : public Expr {
public:
  CallExpr(Location loc, std::string callee)
      : Expr(Kind::Call, std::move(loc)), callee(std::move(callee)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Call; }

  std::string callee;
  std::vector<Arg> args;
  std::vector<KwArg> kwargs;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

/// A name with its position: one target of an assignment.
struct NameLoc {
  Location loc;
  std::string name;
};

/// The initialiser of a parameter: `zeros`, `he(seed=1)`, `load("w.npy")`,
/// `load("m.safetensors", key="h.0.attn.w")`. Arguments are literals.
/// `hasParens` distinguishes `zeros` from `zeros()`. `loc` is the callee.
struct Init {
  Location loc;
  std::string callee;
  bool hasParens = false;
  std::vector<Attr> args;
  std::vector<KwArg> kwargs;
};

/// `param name: type = init`. `loc` is the `param` keyword.
struct ParamDecl {
  Location loc;
  Location nameLoc;
  std::string name;
  TypeExpr type;
  Init init;
};

/// `a = expr` or `a, b = expr` (an op with several results). `loc` is the
/// first name; `names` is never empty.
struct Assign {
  Location loc;
  std::vector<NameLoc> names;
  ExprPtr value;
};

/// `@stage`: the ops of the statements after it are in the next pipeline
/// stage (`--parallel pipeline`; passes/partition/Pipeline.h).
struct StageMark {
  Location loc;
};

/// A statement of a graph or train body, in source order.
using Stmt = std::variant<ParamDecl, Assign, StageMark>;

//===----------------------------------------------------------------------===//
// Blocks and module
//===----------------------------------------------------------------------===//

/// `name: type` in a signature. `loc` is the name.
struct Binding {
  Location loc;
  std::string name;
  TypeExpr type;
};

/// `graph name(inputs) -> (outputs) { body }`. `loc` is the `graph` keyword.
/// Outputs (at least one) name values defined in the body or inputs.
struct Graph {
  Location loc;
  Location nameLoc;
  std::string name;
  std::vector<Binding> inputs;
  std::vector<Binding> outputs;
  std::vector<Stmt> body;
};

/// `train graphName(extra inputs) { body }`: the loss and optimiser of the
/// graph it names. `loc` is the `train` keyword.
struct TrainBlock {
  Location loc;
  Location nameLoc;
  std::string graphName;
  std::vector<Binding> inputs;
  std::vector<Stmt> body;
};

/// A whole file: graphs and train blocks, each in source order. The first
/// graph is the entry point unless a tool says otherwise.
struct Module {
  std::vector<Graph> graphs;
  std::vector<TrainBlock> trains;
};

/// An indented tree with `@file:line:col` on every node, as Toy's `ast.toy`;
/// what `dlc compile --emit=ast` prints. Ends with a newline.
std::string dumpModule(const Module &module);

/// One attribute as written in the dump: `1`, `-1e-05`, `"mean"`, `[N, 64]`.
std::string formatAttr(const Attr &attr);

/// A type as written in the dump: `f32[N, 784]`.
std::string formatType(const TypeExpr &type);

} // namespace dlg
} // namespace dlc

#endif // DLC_FRONTEND_TEXT_AST_H
