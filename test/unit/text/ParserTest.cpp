//===- ParserTest.cpp - Lexer, parser and dump of the .dlg format ---------===//

#include "frontend/text/AST.h"
#include "frontend/text/Lexer.h"
#include "frontend/text/Parser.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

using namespace dlc::dlg;

namespace {

std::shared_ptr<const std::string> fileName(const char *name = "t.dlg") {
  return std::make_shared<const std::string>(name);
}

/// Parses `src`; fails the test with the diagnostic if it does not parse.
Module parseOk(const std::string &src) {
  Diagnostic diag;
  std::optional<Module> m = parseModule(src, fileName(), diag);
  EXPECT_TRUE(m.has_value()) << toString(diag.loc) << ": " << diag.message;
  return m ? std::move(*m) : Module{};
}

/// "line:col: message" of the error `src` must produce.
std::string errorOf(const std::string &src) {
  Diagnostic diag;
  std::optional<Module> m = parseModule(src, nullptr, diag);
  if (m)
    return "<parsed>";
  return toString(diag.loc) + ": " + diag.message;
}

/// A one-graph module whose body is `body`, starting on line 2.
std::string inGraph(const std::string &body) {
  return "graph g(x: f32[N]) -> (y: f32[N]) {\n" + body + "\n}\n";
}

/// The expression of the only statement of `inGraph(body)`'s graph.
Module parseBody(const std::string &body) { return parseOk(inGraph(body)); }

const Assign &assignAt(const Module &m, size_t i) {
  return std::get<Assign>(m.graphs.at(0).body.at(i));
}

std::string pos(const Location &loc) {
  return std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

/// A compact prefix rendering of an expression: (+ a (* b c)).
std::string sexpr(const Expr &e) {
  if (auto *n = e.dyn_cast<NameExpr>())
    return n->name;
  if (auto *n = e.dyn_cast<NumberExpr>())
    return n->isInteger ? std::to_string(n->intValue) : formatAttr([&] {
      Attr a;
      a.kind = Attr::Float;
      a.f = n->value;
      return a;
    }());
  if (auto *u = e.dyn_cast<UnaryExpr>())
    return std::string("(") + u->op + " " + sexpr(*u->operand) + ")";
  if (auto *b = e.dyn_cast<BinaryExpr>())
    return std::string("(") + b->op + " " + sexpr(*b->lhs) + " " +
           sexpr(*b->rhs) + ")";
  auto *c = e.dyn_cast<CallExpr>();
  std::string s = c->callee + "(";
  for (size_t i = 0; i < c->args.size(); ++i)
    s += (i ? ", " : "") + sexpr(*c->args[i].value);
  for (const KwArg &kw : c->kwargs)
    s += ", " + kw.name + "=" + formatAttr(kw.value);
  return s + ")";
}

/// Reads a file of the source tree: $DLC_SOURCE_DIR (set by lit) or the
/// compile-time DLC_SOURCE_DIR.
std::string readSource(const std::string &relative) {
  const char *root = std::getenv("DLC_SOURCE_DIR");
  std::ifstream in(std::string(root ? root : DLC_SOURCE_DIR) + "/" + relative,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << relative;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char *const kExamples[] = {"examples/mnist_mlp.dlg", "examples/lenet.dlg",
                                 "examples/gpt2_block.dlg"};

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

TEST(Lexer, TokensWithLocations) {
  std::vector<Token> toks = tokenize(
      "graph g(x: f32[N, 784]) -> (y)  # note\n"
      "\t a = -1.5e-3 @ \"s\\\"q\\\\\" 7\r\n",
      fileName());
  struct Want {
    TokenKind kind;
    const char *text;
    int line, col;
  } want[] = {
      {TokenKind::Ident, "graph", 1, 1},  {TokenKind::Ident, "g", 1, 7},
      {TokenKind::LParen, "(", 1, 8},     {TokenKind::Ident, "x", 1, 9},
      {TokenKind::Colon, ":", 1, 10},     {TokenKind::Ident, "f32", 1, 12},
      {TokenKind::LBracket, "[", 1, 15},  {TokenKind::Ident, "N", 1, 16},
      {TokenKind::Comma, ",", 1, 17},     {TokenKind::Integer, "784", 1, 19},
      {TokenKind::RBracket, "]", 1, 22},  {TokenKind::RParen, ")", 1, 23},
      {TokenKind::Arrow, "->", 1, 25},    {TokenKind::LParen, "(", 1, 28},
      {TokenKind::Ident, "y", 1, 29},     {TokenKind::RParen, ")", 1, 30},
      {TokenKind::Newline, "\n", 1, 39},  {TokenKind::Ident, "a", 2, 3},
      {TokenKind::Equal, "=", 2, 5},      {TokenKind::Minus, "-", 2, 7},
      {TokenKind::Float, "1.5e-3", 2, 8}, {TokenKind::At, "@", 2, 15},
      {TokenKind::String, "s\"q\\", 2, 17}, {TokenKind::Integer, "7", 2, 26},
      {TokenKind::Newline, "\n", 2, 28},  {TokenKind::Eof, "", 3, 1},
  };
  ASSERT_EQ(toks.size(), std::size(want));
  for (size_t i = 0; i < toks.size(); ++i) {
    SCOPED_TRACE("token " + std::to_string(i));
    EXPECT_EQ(toks[i].kind, want[i].kind);
    EXPECT_EQ(toks[i].text, want[i].text);
    EXPECT_EQ(pos(toks[i].loc), std::to_string(want[i].line) + ":" +
                                    std::to_string(want[i].col));
    EXPECT_EQ(*toks[i].loc.file, "t.dlg");
  }
}

TEST(Lexer, OperatorsAndErrorStopsTheStream) {
  std::vector<Token> toks = tokenize("+ - * / @ { } = 1e5 2.0 $ x", nullptr);
  std::vector<TokenKind> kinds;
  for (const Token &t : toks)
    kinds.push_back(t.kind);
  std::vector<TokenKind> want = {
      TokenKind::Plus,    TokenKind::Minus,  TokenKind::Star,
      TokenKind::Slash,   TokenKind::At,     TokenKind::LBrace,
      TokenKind::RBrace,  TokenKind::Equal,  TokenKind::Float,
      TokenKind::Float,   TokenKind::Error};
  EXPECT_EQ(kinds, want);
  EXPECT_EQ(toks.back().text, "unexpected character '$'");
  EXPECT_EQ(pos(toks.back().loc), "1:25");
}

TEST(Lexer, DescribeTokens) {
  std::vector<Token> toks = tokenize("x 0.5 \"hi\" ( ->\n", nullptr);
  EXPECT_EQ(describe(toks[0]), "identifier 'x'");
  EXPECT_EQ(describe(toks[1]), "number '0.5'");
  EXPECT_EQ(describe(toks[2]), "string \"hi\"");
  EXPECT_EQ(describe(toks[3]), "'('");
  EXPECT_EQ(describe(toks[4]), "'->'");
  EXPECT_EQ(describe(toks[5]), "newline");
  EXPECT_EQ(describe(toks[6]), "end of file");
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

TEST(Parser, Precedence) {
  Module m = parseBody("  y = a + b * c @ d\n"
                       "  y = -x @ w\n"
                       "  y = a - b - c\n"
                       "  y = (a + b) * c / d\n"
                       "  y = - - x + 2 * 0.5\n"
                       "  y = a @ b @ c");
  EXPECT_EQ(sexpr(*assignAt(m, 0).value), "(+ a (@ (* b c) d))");
  EXPECT_EQ(sexpr(*assignAt(m, 1).value), "(@ (- x) w)");
  EXPECT_EQ(sexpr(*assignAt(m, 2).value), "(- (- a b) c)");
  EXPECT_EQ(sexpr(*assignAt(m, 3).value), "(/ (* (+ a b) c) d)");
  EXPECT_EQ(sexpr(*assignAt(m, 4).value), "(+ (- (- x)) (* 2 0.5))");
  EXPECT_EQ(sexpr(*assignAt(m, 5).value), "(@ (@ a b) c)");
}

TEST(Parser, ExpressionLocations) {
  Module m = parseBody("  y = -x @ w + f(a, k=1)");
  const Assign &a = assignAt(m, 0);
  EXPECT_EQ(pos(a.loc), "2:3");
  ASSERT_EQ(a.names.size(), 1u);
  EXPECT_EQ(pos(a.names[0].loc), "2:3");
  auto *plus = a.value->dyn_cast<BinaryExpr>();
  ASSERT_TRUE(plus);
  EXPECT_EQ(plus->op, '+');
  EXPECT_EQ(pos(plus->loc()), "2:14");
  auto *at = plus->lhs->dyn_cast<BinaryExpr>();
  ASSERT_TRUE(at);
  EXPECT_EQ(pos(at->loc()), "2:10");
  auto *neg = at->lhs->dyn_cast<UnaryExpr>();
  ASSERT_TRUE(neg);
  EXPECT_EQ(neg->op, '-');
  EXPECT_EQ(pos(neg->loc()), "2:7");
  EXPECT_EQ(pos(neg->operand->loc()), "2:8");
  EXPECT_EQ(pos(at->rhs->loc()), "2:12");
  auto *call = plus->rhs->dyn_cast<CallExpr>();
  ASSERT_TRUE(call);
  EXPECT_EQ(call->callee, "f");
  EXPECT_EQ(pos(call->loc()), "2:16");
  EXPECT_EQ(pos(call->args[0].loc), "2:18");
  EXPECT_EQ(pos(call->kwargs[0].loc), "2:21");
  EXPECT_EQ(pos(call->kwargs[0].value.loc), "2:23");
  EXPECT_FALSE(a.value->dyn_cast<CallExpr>());
}

TEST(Parser, Numbers) {
  Module m = parseBody("  y = f(3, 3.0, 0.5, 1e-5, 9223372036854775807, inf)");
  auto *call = assignAt(m, 0).value->dyn_cast<CallExpr>();
  ASSERT_TRUE(call);
  ASSERT_EQ(call->args.size(), 6u);
  auto num = [&](size_t i) { return call->args[i].value->dyn_cast<NumberExpr>(); };
  EXPECT_TRUE(num(0)->isInteger);
  EXPECT_EQ(num(0)->intValue, 3);
  EXPECT_EQ(num(0)->value, 3.0);
  EXPECT_FALSE(num(1)->isInteger);
  EXPECT_EQ(num(1)->value, 3.0);
  EXPECT_EQ(num(2)->value, 0.5);
  EXPECT_EQ(num(3)->value, 1e-5);
  EXPECT_EQ(num(4)->intValue, INT64_MAX);
  EXPECT_EQ(call->args[5].value->kind(), Expr::Kind::Name);
}

TEST(Parser, CallWithEveryAttributeKind) {
  Module m = parseBody(
      "  y = op(x, 2, i=3, n=-1, f=0.5, g=-1e9, s=\"a\\\"b\\\\c\", t=true, "
      "u=false, to=f16, shape=[N, T, 12, -64], mixed=[1, 2.5, \"s\", [true]], "
      "empty=[])");
  auto *call = assignAt(m, 0).value->dyn_cast<CallExpr>();
  ASSERT_TRUE(call);
  ASSERT_EQ(call->args.size(), 2u);
  ASSERT_EQ(call->kwargs.size(), 11u);
  const auto &kw = call->kwargs;
  EXPECT_EQ(kw[0].name, "i");
  EXPECT_EQ(kw[0].value.kind, Attr::Int);
  EXPECT_EQ(kw[0].value.i, 3);
  EXPECT_EQ(kw[1].value.kind, Attr::Int);
  EXPECT_EQ(kw[1].value.i, -1);
  EXPECT_EQ(kw[2].value.kind, Attr::Float);
  EXPECT_EQ(kw[2].value.f, 0.5);
  EXPECT_EQ(kw[3].value.kind, Attr::Float);
  EXPECT_EQ(kw[3].value.f, -1e9);
  EXPECT_EQ(pos(kw[3].value.loc), pos(kw[3].loc).substr(0, 2) + "36");
  EXPECT_EQ(kw[4].value.kind, Attr::String);
  EXPECT_EQ(kw[4].value.s, "a\"b\\c");
  EXPECT_EQ(kw[5].value.kind, Attr::Bool);
  EXPECT_TRUE(kw[5].value.b);
  EXPECT_EQ(kw[6].value.kind, Attr::Bool);
  EXPECT_FALSE(kw[6].value.b);
  EXPECT_EQ(kw[7].value.kind, Attr::Ident);
  EXPECT_EQ(kw[7].value.s, "f16");
  const Attr &shape = kw[8].value;
  ASSERT_EQ(shape.kind, Attr::List);
  ASSERT_EQ(shape.list.size(), 4u);
  EXPECT_EQ(shape.list[0].kind, Attr::Ident);
  EXPECT_EQ(shape.list[0].s, "N");
  EXPECT_EQ(shape.list[2].i, 12);
  EXPECT_EQ(shape.list[3].i, -64);
  EXPECT_EQ(formatAttr(kw[9].value), "[1, 2.5, \"s\", [true]]");
  EXPECT_EQ(kw[10].value.kind, Attr::List);
  EXPECT_TRUE(kw[10].value.list.empty());
  EXPECT_EQ(formatAttr(kw[4].value), "\"a\\\"b\\\\c\"");
  // Element locations inside a list.
  EXPECT_EQ(shape.list[1].loc.col, shape.list[0].loc.col + 3);
}

TEST(Parser, IntegerAttributeExtremes) {
  Module m = parseBody("  y = f(a=-9223372036854775808, b=9223372036854775807)");
  auto *call = assignAt(m, 0).value->dyn_cast<CallExpr>();
  EXPECT_EQ(call->kwargs[0].value.i, INT64_MIN);
  EXPECT_EQ(call->kwargs[1].value.i, INT64_MAX);
}

TEST(Parser, MultiLineCallsCommentsAndBlankLines) {
  Module m = parseOk("\n# header comment\n\n"
                     "graph g(   # inputs wrap\n"
                     "    x: f32[N, 4],\n"
                     "    w: f32[4,\n"
                     "           4],   # trailing comma\n"
                     ") -> (y: f32[N, 4]) {   # comment after brace\n"
                     "\n"
                     "  # a comment line\n"
                     "  y = reshape(\n"
                     "      x @ w   # comment inside a call\n"
                     "\n"
                     "      + x,\n"
                     "      shape=[\n"
                     "        N,\n"
                     "        4,\n"
                     "      ],\n"
                     "  )\n"
                     "}   # done\n"
                     "# trailing comment without newline");
  ASSERT_EQ(m.graphs.size(), 1u);
  const Graph &g = m.graphs[0];
  EXPECT_EQ(pos(g.loc), "4:1");
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(pos(g.inputs[1].loc), "6:5");
  EXPECT_EQ(pos(g.inputs[1].type.dims[1].loc), "7:12");
  ASSERT_EQ(g.body.size(), 1u);
  const Assign &a = assignAt(m, 0);
  EXPECT_EQ(sexpr(*a.value), "reshape((+ (@ x w) x), shape=[N, 4])");
  auto *call = a.value->dyn_cast<CallExpr>();
  EXPECT_EQ(pos(call->args[0].loc), "12:7");
  EXPECT_EQ(pos(call->args[0].value->loc()), "14:7");
}

TEST(Parser, CarriageReturnLineEndings) {
  Module m = parseOk("graph g(x: f32[]) -> (y: f32[]) {\r\n  y = x\r\n}\r\n");
  EXPECT_EQ(m.graphs.at(0).body.size(), 1u);
  EXPECT_TRUE(m.graphs[0].inputs[0].type.dims.empty());
}

TEST(Parser, SignatureTypesAndLocations) {
  Module m = parseOk("graph two(a: f32[N, 784], b: bf16[], c: i1[2, T, 0]) "
                     "-> (s: f64[N], t: i64[3]) {\n  s = a\n  t = c\n}\n");
  const Graph &g = m.graphs.at(0);
  EXPECT_EQ(g.name, "two");
  EXPECT_EQ(pos(g.nameLoc), "1:7");
  ASSERT_EQ(g.inputs.size(), 3u);
  EXPECT_EQ(g.inputs[0].name, "a");
  EXPECT_EQ(pos(g.inputs[0].loc), "1:11");
  EXPECT_EQ(g.inputs[0].type.dtype, "f32");
  EXPECT_EQ(pos(g.inputs[0].type.loc), "1:14");
  ASSERT_EQ(g.inputs[0].type.dims.size(), 2u);
  EXPECT_TRUE(g.inputs[0].type.dims[0].isSymbolic());
  EXPECT_EQ(g.inputs[0].type.dims[0].symbol(), "N");
  EXPECT_EQ(pos(g.inputs[0].type.dims[0].loc), "1:18");
  EXPECT_EQ(g.inputs[0].type.dims[1].size(), 784);
  EXPECT_EQ(pos(g.inputs[0].type.dims[1].loc), "1:21");
  EXPECT_EQ(g.inputs[1].type.dtype, "bf16");
  EXPECT_TRUE(g.inputs[1].type.dims.empty());
  EXPECT_EQ(formatType(g.inputs[2].type), "i1[2, T, 0]");
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(g.outputs[1].name, "t");
  EXPECT_EQ(formatType(g.outputs[1].type), "i64[3]");
}

TEST(Parser, MultipleOutputsAndResults) {
  Module m = parseOk("graph g(x: f32[N]) -> (a: f32[N], b: f32[N]) {\n"
                     "  a, b = split(x, parts=2)\n"
                     "}\n"
                     "graph h() -> (z: f32[]) {\n"
                     "  z = zero()\n"
                     "}\n");
  ASSERT_EQ(m.graphs.size(), 2u);
  const Assign &a = assignAt(m, 0);
  ASSERT_EQ(a.names.size(), 2u);
  EXPECT_EQ(a.names[0].name, "a");
  EXPECT_EQ(a.names[1].name, "b");
  EXPECT_EQ(pos(a.names[1].loc), "2:6");
  EXPECT_TRUE(m.graphs[1].inputs.empty());
  EXPECT_EQ(m.graphs[1].name, "h");
  auto *call = std::get<Assign>(m.graphs[1].body[0]).value->dyn_cast<CallExpr>();
  ASSERT_TRUE(call);
  EXPECT_TRUE(call->args.empty() && call->kwargs.empty());
}

TEST(Parser, TrainBlocks) {
  Module m = parseOk("graph g(x: f32[N]) -> (y: f32[N]) {\n  y = x\n}\n\n"
                     "train g(label: i32[N], w: f32[N]) {\n"
                     "  loss = cross_entropy(y, label) * w\n"
                     "  optimizer = adam(lr=0.001)\n"
                     "}\n"
                     "train g() {\n  optimizer = sgd(lr=0.1)\n}\n");
  ASSERT_EQ(m.trains.size(), 2u);
  const TrainBlock &t = m.trains[0];
  EXPECT_EQ(t.graphName, "g");
  EXPECT_EQ(pos(t.loc), "5:1");
  EXPECT_EQ(pos(t.nameLoc), "5:7");
  ASSERT_EQ(t.inputs.size(), 2u);
  EXPECT_EQ(t.inputs[0].name, "label");
  EXPECT_EQ(t.inputs[0].type.dtype, "i32");
  ASSERT_EQ(t.body.size(), 2u);
  const Assign &opt = std::get<Assign>(t.body[1]);
  EXPECT_EQ(opt.names[0].name, "optimizer");
  EXPECT_EQ(sexpr(*opt.value), "adam(, lr=0.001)");
  EXPECT_TRUE(m.trains[1].inputs.empty());
}

TEST(Parser, ParamInitialisers) {
  Module m = parseBody(
      "  param a: f32[4] = zeros\n"
      "  param b: f32[4] = ones()\n"
      "  param c: f32[4, 4] = he(seed=1)\n"
      "  param d: f32[4] = normal(mean=0, std=0.02, seed=1)\n"
      "  param e: f32[4] = uniform(low=-0.1, high=0.1, seed=3)\n"
      "  param f: f32[4] = load(\"w1.npy\")\n"
      "  param h: f32[4] = load(\"model.safetensors\", key=\"h.0.attn.w\")\n"
      "  param i: f32[\n    4] = load(\n    \"weights.npz\",\n    key=\"w1\",\n  )\n"
      "  y = x");
  const auto &body = m.graphs.at(0).body;
  ASSERT_EQ(body.size(), 9u);
  const auto &a = std::get<ParamDecl>(body[0]);
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(pos(a.loc), "2:3");
  EXPECT_EQ(pos(a.nameLoc), "2:9");
  EXPECT_EQ(pos(a.type.loc), "2:12");
  EXPECT_EQ(a.init.callee, "zeros");
  EXPECT_EQ(pos(a.init.loc), "2:21");
  EXPECT_FALSE(a.init.hasParens);
  const auto &b = std::get<ParamDecl>(body[1]);
  EXPECT_TRUE(b.init.hasParens);
  EXPECT_TRUE(b.init.args.empty());
  const auto &d = std::get<ParamDecl>(body[3]);
  ASSERT_EQ(d.init.kwargs.size(), 3u);
  EXPECT_EQ(d.init.kwargs[1].name, "std");
  EXPECT_EQ(d.init.kwargs[1].value.f, 0.02);
  EXPECT_EQ(d.init.kwargs[0].value.kind, Attr::Int);
  EXPECT_EQ(std::get<ParamDecl>(body[4]).init.kwargs[0].value.f, -0.1);
  const auto &f = std::get<ParamDecl>(body[5]);
  ASSERT_EQ(f.init.args.size(), 1u);
  EXPECT_EQ(f.init.args[0].kind, Attr::String);
  EXPECT_EQ(f.init.args[0].s, "w1.npy");
  EXPECT_EQ(pos(f.init.args[0].loc), "7:26");
  const auto &h = std::get<ParamDecl>(body[6]);
  EXPECT_EQ(h.init.kwargs.at(0).value.s, "h.0.attn.w");
  const auto &i = std::get<ParamDecl>(body[7]);
  EXPECT_EQ(formatType(i.type), "f32[4]");
  EXPECT_EQ(i.init.args.at(0).s, "weights.npz");
  EXPECT_EQ(pos(i.init.kwargs.at(0).loc), "12:5");
  EXPECT_TRUE(std::holds_alternative<Assign>(body[8]));
}

TEST(Parser, ContextualKeywords) {
  // `graph`, `train` and `inf` are ordinary names inside expressions.
  Module m = parseBody("  y = graph + train * inf\n  true_ = true");
  EXPECT_EQ(sexpr(*assignAt(m, 0).value), "(+ graph (* train inf))");
  EXPECT_EQ(assignAt(m, 1).value->kind(), Expr::Kind::Name);
}

TEST(Parser, EmptyFileIsAnEmptyModule) {
  Module m = parseOk("\n  # nothing here\n\n");
  EXPECT_TRUE(m.graphs.empty());
  EXPECT_TRUE(m.trains.empty());
}

//===----------------------------------------------------------------------===//
// Dump
//===----------------------------------------------------------------------===//

TEST(Dump, Golden) {
  Diagnostic diag;
  std::optional<Module> m = parseModule(
      "graph g(x: f32[N, 4]) -> (y: f32[N, 4], z: f32[]) {\n"
      "  param w: f32[4, 4] = load(\"w.npz\", key=\"w\")\n"
      "  y = relu(-x @ w + 0.5)\n"
      "  a, z = f(y, axes=[-1], eps=1e-5, to=f16, s=\"q\", b=false, n=2.0)\n"
      "}\n"
      "train g(l: i32[N]) {\n"
      "  loss = mse(y, l)\n"
      "}\n",
      fileName("g.dlg"), diag);
  ASSERT_TRUE(m) << diag.message;
  EXPECT_EQ(dumpModule(*m),
            "Module\n"
            "  Graph g @g.dlg:1:1\n"
            "    Input x: f32[N, 4] @g.dlg:1:9\n"
            "    Output y: f32[N, 4] @g.dlg:1:27\n"
            "    Output z: f32[] @g.dlg:1:41\n"
            "    Param w: f32[4, 4] = load(\"w.npz\", key=\"w\") @g.dlg:2:3\n"
            "    Assign y @g.dlg:3:3\n"
            "      Call relu @g.dlg:3:7\n"
            "        Binary '+' @g.dlg:3:19\n"
            "          Binary '@' @g.dlg:3:15\n"
            "            Unary '-' @g.dlg:3:12\n"
            "              Name x @g.dlg:3:13\n"
            "            Name w @g.dlg:3:17\n"
            "          Number 0.5 @g.dlg:3:21\n"
            "    Assign a, z @g.dlg:4:3\n"
            "      Call f @g.dlg:4:10\n"
            "        Name y @g.dlg:4:12\n"
            "        Kwarg axes = [-1] @g.dlg:4:15\n"
            "        Kwarg eps = 1e-05 @g.dlg:4:26\n"
            "        Kwarg to = f16 @g.dlg:4:36\n"
            "        Kwarg s = \"q\" @g.dlg:4:44\n"
            "        Kwarg b = false @g.dlg:4:51\n"
            "        Kwarg n = 2.0 @g.dlg:4:60\n"
            "  Train g @g.dlg:6:1\n"
            "    Input l: i32[N] @g.dlg:6:9\n"
            "    Assign loss @g.dlg:7:3\n"
            "      Call mse @g.dlg:7:10\n"
            "        Name y @g.dlg:7:14\n"
            "        Name l @g.dlg:7:17\n");
}

TEST(Dump, MnistExampleLines) {
  std::string src = readSource("examples/mnist_mlp.dlg");
  Diagnostic diag;
  auto m = parseModule(src, fileName("examples/mnist_mlp.dlg"), diag);
  ASSERT_TRUE(m) << diag.message;
  std::string dump = dumpModule(*m);
  for (const char *line : {
           "  Graph mnist_mlp @examples/mnist_mlp.dlg:2:1\n",
           "    Input x: f32[N, 784] @examples/mnist_mlp.dlg:2:17\n",
           "    Param w1: f32[784, 128] = he(seed=1) @examples/mnist_mlp.dlg:3:3\n",
           "    Assign h @examples/mnist_mlp.dlg:7:3\n"
           "      Call relu @examples/mnist_mlp.dlg:7:12\n"
           "        Binary '+' @examples/mnist_mlp.dlg:7:24\n"
           "          Binary '@' @examples/mnist_mlp.dlg:7:19\n",
           "        Kwarg lr = 0.001 @examples/mnist_mlp.dlg:13:20\n"})
    EXPECT_NE(dump.find(line), std::string::npos) << line << "\nin\n" << dump;
}

TEST(Dump, RenderDiagnostic) {
  std::string src = "graph g(x: f32[N]) -> (y: f32[N]) {\n\t y = relu(x\n}\n";
  Diagnostic diag;
  ASSERT_FALSE(parseModule(src, fileName("r.dlg"), diag));
  EXPECT_EQ(renderDiagnostic(diag, src),
            "r.dlg:2:13: error: expected ')' to close the argument list of "
            "'relu' opened at 2:11, found newline\n"
            "\t y = relu(x\n"
            "\t           ^\n");
}

//===----------------------------------------------------------------------===//
// Syntax errors: exact line:col and message
//===----------------------------------------------------------------------===//

struct ErrorCase {
  const char *name;
  std::string source;
  std::string want;
};

void PrintTo(const ErrorCase &c, std::ostream *os) { *os << c.name; }

class SyntaxError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(SyntaxError, ReportsLocationAndMessage) {
  EXPECT_EQ(errorOf(GetParam().source), GetParam().want);
}

const std::string kSig = "graph g(x: f32[N]) -> (y: f32[N])";

INSTANTIATE_TEST_SUITE_P(
    Parser, SyntaxError,
    ::testing::Values(
        ErrorCase{"UnknownElementType", "graph g(x: f31[N]) -> (y: f32[N]) {\n}\n",
                  "1:12: unknown element type 'f31' (expected one of f64, f32, "
                  "f16, bf16, i64, i32, i8, u8, i1)"},
        ErrorCase{"NegativeDim", "graph g(x: f32[-1]) -> (y: f32[N]) {\n}\n",
                  "1:16: expected a dimension (integer or name), found '-'"},
        ErrorCase{"UnclosedCallAtEndOfLine", inGraph("  h = relu(x @ w\n  y = h"),
                  "2:17: expected ')' to close the argument list of 'relu' "
                  "opened at 2:11, found newline"},
        ErrorCase{"UnterminatedString", inGraph("  y = f(x, mode=\"abc)"),
                  "2:17: unterminated string"},
        ErrorCase{"UnexpectedCharacter", inGraph("  y = x $ 2"),
                  "2:9: unexpected character '$'"},
        ErrorCase{"UnexpectedUtf8Character", inGraph("  y = x → w"),
                  "2:9: unexpected character '→'"},
        ErrorCase{"UnexpectedControlCharacter", inGraph(std::string("  y = \x01")),
                  "2:7: unexpected character '\\x01'"},
        ErrorCase{"PositionalAfterKeyword", inGraph("  y = softmax(axis=1, x)"),
                  "2:23: positional argument after keyword argument 'axis'"},
        ErrorCase{"ParamWithoutInit", inGraph("  param w: f32[4]"),
                  "2:18: 'param' needs an initialiser: add '= zeros' or "
                  "'= load(\"file.npy\")'"},
        ErrorCase{"IntegerOutOfRange", inGraph("  y = x * 99999999999999999999"),
                  "2:11: integer literal '99999999999999999999' is out of range "
                  "(it must fit in 64 bits)"},
        ErrorCase{"DimOutOfRange",
                  "graph g(x: f32[99999999999999999999]) -> (y: f32[N]) {\n}\n",
                  "1:16: integer literal '99999999999999999999' is out of range "
                  "(it must fit in 64 bits)"},
        ErrorCase{"FloatOutOfRange", inGraph("  y = x * 1e999"),
                  "2:11: number '1e999' is out of the range of a 64-bit float"},
        ErrorCase{"TopLevelJunk", "foo\n",
                  "1:1: expected 'graph' or 'train' to begin a block, found "
                  "identifier 'foo'"},
        ErrorCase{"MissingGraphName", "graph (x: f32[N]) -> (y: f32[N]) {\n}\n",
                  "1:7: expected a graph name after 'graph', found '('"},
        ErrorCase{"MissingColon", "graph g(x f32[N]) -> (y: f32[N]) {\n}\n",
                  "1:11: expected ':' and a type after input 'x', found "
                  "identifier 'f32'"},
        ErrorCase{"UnclosedShape", "graph g(x: f32[N, 4) -> (y: f32[N]) {\n}\n",
                  "1:20: expected ']' to close the shape opened at 1:15, found ')'"},
        ErrorCase{"ScalarWithoutBrackets", "graph g(x: f32) -> (y: f32[]) {\n}\n",
                  "1:15: expected '[' and the shape after element type 'f32' "
                  "(write 'f32[]' for a scalar), found ')'"},
        ErrorCase{"MissingArrow", "graph g(x: f32[N]) (y: f32[N]) {\n}\n",
                  "1:20: expected '->' and the outputs after the inputs of "
                  "graph 'g', found '('"},
        ErrorCase{"OutputsNotParenthesised",
                  "graph g(x: f32[N]) -> y: f32[N] {\n}\n",
                  "1:23: expected '(' before the outputs of graph 'g' (outputs "
                  "are named and parenthesised: '-> (y: f32[N])'), found "
                  "identifier 'y'"},
        ErrorCase{"NoOutputs", "graph g(x: f32[N]) -> () {\n}\n",
                  "1:23: graph 'g' needs at least one output"},
        ErrorCase{"MissingOpenBrace", kSig + "\n  y = x\n}\n",
                  "1:34: expected '{' to open the body of graph 'g', found newline"},
        ErrorCase{"StatementOnBraceLine", kSig + " { y = x }\n",
                  "1:37: expected a newline after '{' (one statement a line), "
                  "found identifier 'y'"},
        ErrorCase{"MissingCloseBraceAtEof", kSig + " {\n  y = x\n",
                  "3:1: expected '}' to close the body of graph 'g' opened at "
                  "1:35, found end of file"},
        ErrorCase{"MissingCloseBraceBeforeGraph",
                  kSig + " {\n  y = x\ngraph h(x: f32[N]) -> (y: f32[N]) {\n"
                         "  y = x\n}\n",
                  "3:1: expected '}' to close the body of graph 'g' opened at "
                  "1:35 before the next 'graph'"},
        ErrorCase{"JunkAfterBrace", kSig + " {\n  y = x\n} x\n",
                  "3:3: expected a newline after '}', found identifier 'x'"},
        ErrorCase{"BareCall", inGraph("  relu(x)"),
                  "2:7: expected '=' after 'relu', found '(' (a statement "
                  "names its result: 'y = relu(...)')"},
        ErrorCase{"MissingOperand", inGraph("  y = x +"),
                  "2:10: expected an expression, found newline"},
        ErrorCase{"TwoExpressions", inGraph("  y = x w"),
                  "2:9: expected an operator or the end of the line, found "
                  "identifier 'w'"},
        ErrorCase{"UnclosedParenthesis", inGraph("  y = (x + 1\n  z = y"),
                  "2:13: expected ')' to close the parenthesis opened at 2:7, "
                  "found newline"},
        ErrorCase{"UnclosedAttrList", inGraph("  y = reshape(x, shape=[N, 4)"),
                  "2:29: expected ']' to close the list opened at 2:24, found ')'"},
        ErrorCase{"NegativeNonNumberAttr", inGraph("  y = pad(x, value=-inf)"),
                  "2:21: expected a number after '-', found identifier 'inf'"},
        ErrorCase{"MissingAttrValue", inGraph("  y = f(x, axis=)"),
                  "2:17: expected an attribute value (number, string, true, "
                  "false, name or [list]), found ')'"},
        ErrorCase{"ExpressionAsAttr", inGraph("  y = f(x, axis=a + 1)"),
                  "2:19: expected ')' to close the argument list of 'f' "
                  "opened at 2:8, found '+'"},
        ErrorCase{"DuplicateKeyword", inGraph("  y = f(x, axis=1, axis=2)"),
                  "2:20: duplicate keyword argument 'axis' (first given at 2:12)"},
        ErrorCase{"UnknownEscape", inGraph("  y = f(x, s=\"a\\qb\")"),
                  "2:16: unknown escape sequence '\\q' in string (use \\\" \\\\ "
                  "\\n or \\t)"},
        ErrorCase{"ParamWithoutName", inGraph("  param : f32[4] = zeros"),
                  "2:9: expected a parameter name after 'param', found ':'"},
        ErrorCase{"ParamInitIsNumber", inGraph("  param w: f32[4] = 0"),
                  "2:21: expected an initialiser such as 'zeros', 'he(seed=1)' "
                  "or 'load(\"w.npy\")', found number '0'"},
        ErrorCase{"ParamInitExpression", inGraph("  param w: f32[4] = zeros + 1"),
                  "2:27: expected the end of the line after the parameter "
                  "declaration, found '+'"},
        ErrorCase{"NumberSuffix", inGraph("  y = x * 3x"),
                  "2:11: invalid suffix 'x' on number '3'"},
        ErrorCase{"EmptyExponent", inGraph("  y = x * 1e"),
                  "2:11: expected digits in the exponent of number '1e'"},
        ErrorCase{"DotWithoutDigits", inGraph("  y = x * 1."),
                  "2:11: expected a digit after the '.' in number '1.'"},
        ErrorCase{"TrainWithoutParens", "train g {\n}\n",
                  "1:9: expected '(' and the extra inputs after 'train g' "
                  "(write '()' if there are none), found '{'"},
        ErrorCase{"MultiAssignMissingName", inGraph("  a, = f(x)"),
                  "2:6: expected a name after ',' in the names being assigned, "
                  "found '='"},
        ErrorCase{"StatementStartsWithNumber", inGraph("  3 = x"),
                  "2:3: expected a statement ('name = expression' or 'param "
                  "name: type = init'), found number '3'"},
        ErrorCase{"TooDeepParentheses",
                  inGraph("  y = " + std::string(300, '(') + "x" +
                          std::string(300, ')')),
                  "2:263: nesting is too deep (more than 256 levels)"},
        ErrorCase{"TooDeepLists",
                  inGraph("  y = f(a=" + std::string(300, '[') +
                          std::string(300, ']') + ")"),
                  "2:267: nesting is too deep (more than 256 levels)"},
        ErrorCase{"LexErrorInsideCallWins", inGraph("  y = f(x,\n   $)"),
                  "3:4: unexpected character '$'"}),
    [](const ::testing::TestParamInfo<ErrorCase> &info) {
      return std::string(info.param.name);
    });

//===----------------------------------------------------------------------===//
// Examples and robustness
//===----------------------------------------------------------------------===//

int64_t countParams(const Module &m) {
  int64_t total = 0;
  for (const Graph &g : m.graphs)
    for (const Stmt &s : g.body)
      if (auto *p = std::get_if<ParamDecl>(&s)) {
        int64_t n = 1;
        for (const Dim &d : p->type.dims)
          n *= d.size(); // parameters of the examples have static shapes
        total += n;
      }
  return total;
}

TEST(Examples, AllParse) {
  for (const char *path : kExamples) {
    SCOPED_TRACE(path);
    std::string src = readSource(path);
    Diagnostic diag;
    auto m = parseModule(src, fileName(path), diag);
    ASSERT_TRUE(m) << renderDiagnostic(diag, src);
    EXPECT_FALSE(m->graphs.empty());
    EXPECT_FALSE(dumpModule(*m).empty());
  }
}

TEST(Examples, ParameterCounts) {
  auto parse = [](const char *path) {
    Diagnostic diag;
    auto m = parseModule(readSource(path), fileName(path), diag);
    EXPECT_TRUE(m) << diag.message;
    return m ? std::move(*m) : Module{};
  };
  Module mnist = parse("examples/mnist_mlp.dlg");
  EXPECT_EQ(countParams(mnist), 784 * 128 + 128 + 128 * 10 + 10);
  EXPECT_EQ(mnist.trains.size(), 1u);
  Module lenet = parse("examples/lenet.dlg");
  EXPECT_EQ(countParams(lenet), 6 * 25 + 6 + 16 * 6 * 25 + 16 + 400 * 120 +
                                    120 + 120 * 84 + 84 + 84 * 10 + 10);
  EXPECT_EQ(lenet.trains.size(), 1u);
  Module gpt2 = parse("examples/gpt2_block.dlg");
  EXPECT_EQ(countParams(gpt2), 7087872);
  EXPECT_EQ(gpt2.graphs.at(0).name, "gpt2_block");
}

/// Parses and, on success, dumps; on failure checks the location is sane.
void parseAnything(const std::string &src) {
  Diagnostic diag;
  auto m = parseModule(src, nullptr, diag);
  if (m) {
    (void)dumpModule(*m);
  } else {
    EXPECT_GE(diag.loc.line, 1);
    EXPECT_GE(diag.loc.col, 1);
    EXPECT_FALSE(diag.message.empty());
  }
}

TEST(Robustness, EveryPrefixOfTheExamples) {
  for (const char *path : kExamples) {
    std::string src = readSource(path);
    for (size_t n = 0; n <= src.size(); ++n)
      parseAnything(src.substr(0, n));
  }
}

TEST(Robustness, RandomBytesAndMutations) {
  std::mt19937 rng(12345);
  std::vector<std::string> seeds;
  for (const char *path : kExamples)
    seeds.push_back(readSource(path));
  const std::string alphabet = "()[]{},:=+-*/@#\"\\\n\r\t xN0123456789.e_"
                               "graphtrainparam";
  for (int iter = 0; iter < 2000; ++iter) {
    std::string s;
    if (iter % 4 == 0) { // random bytes
      s.resize(rng() % 200);
      for (char &c : s)
        c = static_cast<char>(rng() % 256);
    } else { // mutate an example
      s = seeds[rng() % seeds.size()];
      int edits = 1 + rng() % 8;
      for (int e = 0; e < edits && !s.empty(); ++e) {
        size_t at = rng() % s.size();
        switch (rng() % 4) {
        case 0: s.erase(at, 1 + rng() % 4); break;
        case 1: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        case 2: s[at] = alphabet[rng() % alphabet.size()]; break;
        default: s[at] = static_cast<char>(rng() % 256); break;
        }
      }
    }
    parseAnything(s);
  }
}

TEST(Robustness, PathologicalInputs) {
  const size_t n = 100000;
  auto body = [](const std::string &stmt) { return inGraph("  y = " + stmt); };
  std::string chain = "x";
  for (size_t i = 0; i < n; ++i)
    chain += " + x";
  parseAnything(body(chain));
  parseAnything(body(std::string(n, '-') + "x"));
  parseAnything(body(std::string(n, '(') + "x"));
  parseAnything(body("f(" + std::string(n, '[')));
  std::string calls;
  for (size_t i = 0; i < n / 4; ++i)
    calls += "f(";
  parseAnything(body(calls));
  parseAnything(std::string(n, '\n'));
  parseAnything(std::string("graph g(x: f32[N]) -> (y: f32[N]) {\n") +
                std::string(n, '\0'));
  // The limits hold exactly: 256 levels parse, 257 do not.
  Diagnostic diag;
  std::string ok = body(std::string(255, '-') + "x");
  EXPECT_TRUE(parseModule(ok, nullptr, diag)) << diag.message;
  std::string tooMany = body(std::string(257, '-') + "x");
  EXPECT_FALSE(parseModule(tooMany, nullptr, diag));
  std::string longChain = "x";
  for (int i = 0; i < 300; ++i)
    longChain += "+x";
  EXPECT_FALSE(parseModule(body(longChain), nullptr, diag));
  EXPECT_NE(diag.message.find("nesting is too deep"), std::string::npos);
}

} // namespace
