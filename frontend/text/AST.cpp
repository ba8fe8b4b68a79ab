//===- AST.cpp - Dump of the .dlg abstract syntax tree --------------------===//
//
// The dump printed by `dlc compile --emit=ast`: one node a line, indented by
// two spaces a level, each ending in `@file:line:col`. Types, initialisers
// and attribute values are printed inline, as written.
//
//===----------------------------------------------------------------------===//

#include "frontend/text/AST.h"

#include <charconv>

namespace dlc {
namespace dlg {

/// Shortest text that reads back as `value`, always marked as a float
/// (`2.0`, not `2`).
static std::string formatFloat(double value) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".eEn") == std::string::npos) // n: inf, nan
    s += ".0";
  return s;
}

static std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    default: out += c;
    }
  }
  return out + "\"";
}

std::string formatAttr(const Attr &attr) {
  switch (attr.kind) {
  case Attr::Int: return std::to_string(attr.i);
  case Attr::Float: return formatFloat(attr.f);
  case Attr::String: return quote(attr.s);
  case Attr::Bool: return attr.b ? "true" : "false";
  case Attr::Ident: return attr.s;
  case Attr::List: {
    std::string s = "[";
    for (size_t i = 0; i < attr.list.size(); ++i)
      s += (i ? ", " : "") + formatAttr(attr.list[i]);
    return s + "]";
  }
  }
  return "?";
}

std::string formatType(const TypeExpr &type) {
  std::string s = type.dtype + "[";
  for (size_t i = 0; i < type.dims.size(); ++i) {
    const Dim &d = type.dims[i];
    s += i ? ", " : "";
    s += d.isSymbolic() ? d.symbol() : std::to_string(d.size());
  }
  return s + "]";
}

namespace {

/// Accumulates the dump; `indent` is the current depth.
class Dumper {
public:
  std::string out;

  void module(const Module &m) {
    out += "Module\n";
    for (const Graph &g : m.graphs)
      graph(g);
    for (const TrainBlock &t : m.trains)
      train(t);
  }

private:
  int indent = 1;

  struct Nest {
    Dumper &d;
    explicit Nest(Dumper &d) : d(d) { ++d.indent; }
    ~Nest() { --d.indent; }
  };

  void line(const std::string &text, const Location &loc) {
    out.append(2 * indent, ' ');
    out += text + " @" + toString(loc) + "\n";
  }

  void bindings(const char *what, const std::vector<Binding> &bs) {
    for (const Binding &b : bs)
      line(std::string(what) + " " + b.name + ": " + formatType(b.type), b.loc);
  }

  void graph(const Graph &g) {
    line("Graph " + g.name, g.loc);
    Nest n(*this);
    bindings("Input", g.inputs);
    bindings("Output", g.outputs);
    body(g.body);
  }

  void train(const TrainBlock &t) {
    line("Train " + t.graphName, t.loc);
    Nest n(*this);
    bindings("Input", t.inputs);
    body(t.body);
  }

  static std::string init(const Init &in) {
    std::string s = in.callee;
    if (!in.hasParens)
      return s;
    s += "(";
    bool first = true;
    for (const Attr &a : in.args) {
      s += (first ? "" : ", ") + formatAttr(a);
      first = false;
    }
    for (const KwArg &kw : in.kwargs) {
      s += (first ? "" : ", ") + kw.name + "=" + formatAttr(kw.value);
      first = false;
    }
    return s + ")";
  }

  void body(const std::vector<Stmt> &stmts) {
    for (const Stmt &stmt : stmts) {
      if (const auto *p = std::get_if<ParamDecl>(&stmt)) {
        line("Param " + p->name + ": " + formatType(p->type) + " = " +
                 init(p->init),
             p->loc);
        continue;
      }
      if (const auto *m = std::get_if<StageMark>(&stmt)) {
        line("StageMark", m->loc);
        continue;
      }
      const auto &a = std::get<Assign>(stmt);
      std::string names;
      for (const NameLoc &n : a.names)
        names += (names.empty() ? "" : ", ") + n.name;
      line("Assign " + names, a.loc);
      Nest n(*this);
      expr(*a.value);
    }
  }

  void expr(const Expr &e) {
    if (const auto *name = e.dyn_cast<NameExpr>()) {
      line("Name " + name->name, e.loc());
    } else if (const auto *num = e.dyn_cast<NumberExpr>()) {
      line("Number " + (num->isInteger ? std::to_string(num->intValue)
                                       : formatFloat(num->value)),
           e.loc());
    } else if (const auto *un = e.dyn_cast<UnaryExpr>()) {
      line(std::string("Unary '") + un->op + "'", e.loc());
      Nest n(*this);
      expr(*un->operand);
    } else if (const auto *bin = e.dyn_cast<BinaryExpr>()) {
      line(std::string("Binary '") + bin->op + "'", e.loc());
      Nest n(*this);
      expr(*bin->lhs);
      expr(*bin->rhs);
    } else if (const auto *call = e.dyn_cast<CallExpr>()) {
      line("Call " + call->callee, e.loc());
      Nest n(*this);
      for (const Arg &arg : call->args)
        expr(*arg.value);
      for (const KwArg &kw : call->kwargs)
        line("Kwarg " + kw.name + " = " + formatAttr(kw.value), kw.loc);
    }
  }
};

} // namespace

std::string dumpModule(const Module &module) {
  Dumper d;
  d.module(module);
  return d.out;
}

} // namespace dlg
} // namespace dlc
