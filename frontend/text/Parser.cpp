//===- Parser.cpp - Parser of the .dlg text format ------------------------===//
//
// Recursive descent over the token vector of Lexer.h, one function per rule
// of the grammar in docs/format.md. Every function returns false (or null)
// after recording the first error; nothing throws.
//
// Newlines end statements, except inside ( ) and [ ]: while `nest` > 0 the
// token accessors skip them. When an item inside brackets is followed by
// something other than ',' or the closer, and a newline was skipped, the error
// names the newline (the usual cause is a missing ')' at the end of a line).
//
//===----------------------------------------------------------------------===//

#include "frontend/text/Parser.h"

#include "frontend/text/Lexer.h"

#include <algorithm>
#include <charconv>

namespace dlc {
namespace dlg {
namespace {

const char *const kDTypes[] = {"f64", "f32", "f16", "bf16", "i64",
                               "i32", "i8",  "u8",  "i1"};

std::string at(const Location &loc) {
  return std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

std::string quoted(const std::string &s) { return "'" + s + "'"; }

class Parser {
public:
  Parser(std::string_view source, std::shared_ptr<const std::string> file)
      : toks(tokenize(source, std::move(file))) {}

  std::optional<Module> parseModule(Diagnostic &error);

private:
  //===--------------------------------------------------------------------===//
  // Tokens
  //===--------------------------------------------------------------------===//

  /// Index of the current token: newlines are skipped inside brackets.
  size_t index(size_t from) const {
    if (nest > 0)
      while (toks[from].kind == TokenKind::Newline)
        ++from;
    return from;
  }
  const Token &tok() const { return toks[index(pos)]; }
  /// The token after the current one (newlines skipped inside brackets).
  const Token &lookahead() const {
    size_t i = index(pos);
    if (toks[i].kind == TokenKind::Eof || toks[i].kind == TokenKind::Error)
      return toks[i];
    return toks[index(i + 1)];
  }
  bool is(TokenKind kind) const { return tok().kind == kind; }
  bool isIdent(const char *word) const {
    return is(TokenKind::Ident) && tok().text == word;
  }
  /// Consumes the current token; the final Eof/Error is never passed.
  Token take() {
    size_t i = index(pos);
    Token t = toks[i];
    if (t.kind != TokenKind::Eof && t.kind != TokenKind::Error)
      pos = i + 1;
    return t;
  }
  void skipNewlines() {
    while (toks[pos].kind == TokenKind::Newline)
      ++pos;
  }

  //===--------------------------------------------------------------------===//
  // Errors
  //===--------------------------------------------------------------------===//

  bool fail(const Location &loc, std::string message) {
    if (!failed) {
      failed = true;
      diag = Diagnostic{loc, std::move(message)};
    }
    return false;
  }
  /// "expected <what>, found <current token>"; a lexical error wins.
  bool expected(const std::string &what) {
    const Token &t = tok();
    if (t.kind == TokenKind::Error)
      return fail(t.loc, t.text);
    return fail(t.loc, "expected " + what + ", found " + describe(t));
  }
  /// As `expected`, after an item inside brackets: names a skipped newline.
  bool expectedCloser(const std::string &what) {
    const Token &t = tok();
    if (t.kind != TokenKind::Error && nest > 0 &&
        toks[pos].kind == TokenKind::Newline)
      return fail(toks[pos].loc, "expected " + what + ", found newline");
    return expected(what);
  }
  bool tooDeep(const Location &loc) {
    return fail(loc, "nesting is too deep (more than " +
                         std::to_string(kMaxNesting) + " levels)");
  }

  //===--------------------------------------------------------------------===//
  // Rules
  //===--------------------------------------------------------------------===//

  bool parseGraph(Graph &graph);
  bool parseTrain(TrainBlock &train);
  bool parseBindings(std::vector<Binding> &out, const std::string &what,
                     const std::string &list);
  bool parseType(TypeExpr &type);
  bool parseShard(TypeExpr &type);
  bool parseBody(std::vector<Stmt> &body, const std::string &owner);
  bool parseStatement(std::vector<Stmt> &body, const std::string &owner,
                      const Location &openLoc);
  bool parseParam(ParamDecl &param);
  bool parseAssign(Assign &assign);
  template <typename Positional>
  bool parseArgList(const std::string &callee, std::vector<KwArg> &kwargs,
                    Positional positional);
  bool parseAttr(Attr &attr, int depth);
  bool parseInteger(const Token &t, const std::string &spelling, int64_t &out);
  bool parseFloat(const Token &t, const std::string &spelling, double &out);

  ExprPtr parseExpr(int &height);
  ExprPtr parseTerm(int &height);
  ExprPtr parseUnary(int &height);
  ExprPtr parsePrimary(int &height);
  ExprPtr binary(Location loc, char op, ExprPtr lhs, int &height,
                 ExprPtr rhs, int rhsHeight);

  std::vector<Token> toks;
  size_t pos = 0;
  int nest = 0;  ///< Open ( and [ around the current token.
  int depth = 0; ///< Recursion depth of parsePrimary.
  bool failed = false;
  Diagnostic diag;
};

/// Counts an open bracket for the newline rule while in scope.
struct Nested {
  int &nest;
  explicit Nested(int &nest) : nest(nest) { ++nest; }
  ~Nested() { --nest; }
};

std::optional<Module> Parser::parseModule(Diagnostic &error) {
  Module module;
  skipNewlines();
  while (!is(TokenKind::Eof)) {
    bool ok;
    if (isIdent("graph")) {
      module.graphs.emplace_back();
      ok = parseGraph(module.graphs.back());
    } else if (isIdent("train")) {
      module.trains.emplace_back();
      ok = parseTrain(module.trains.back());
    } else {
      ok = expected("'graph' or 'train' to begin a block");
    }
    if (!ok)
      break;
    if (!is(TokenKind::Newline) && !is(TokenKind::Eof)) {
      expected("a newline after '}'");
      break;
    }
    skipNewlines();
  }
  if (failed) {
    error = diag;
    return std::nullopt;
  }
  return module;
}

/// graph ::= 'graph' IDENT '(' bindings ')' '->' '(' bindings ')' body
bool Parser::parseGraph(Graph &graph) {
  graph.loc = take().loc;
  if (!is(TokenKind::Ident))
    return expected("a graph name after 'graph'");
  Token name = take();
  graph.name = name.text, graph.nameLoc = name.loc;
  std::string owner = "graph " + quoted(graph.name);
  if (!is(TokenKind::LParen))
    return expected("'(' and the inputs after the graph name " +
                    quoted(graph.name));
  if (!parseBindings(graph.inputs, "input", "the inputs of " + owner))
    return false;
  if (!is(TokenKind::Arrow))
    return expected("'->' and the outputs after the inputs of " + owner);
  take();
  if (!is(TokenKind::LParen))
    return expected("'(' before the outputs of " + owner +
                    " (outputs are named and parenthesised: '-> (y: f32[N])')");
  Location open = tok().loc;
  if (!parseBindings(graph.outputs, "output", "the outputs of " + owner))
    return false;
  if (graph.outputs.empty())
    return fail(open, owner + " needs at least one output");
  return parseBody(graph.body, owner);
}

/// train ::= 'train' IDENT '(' bindings ')' body
bool Parser::parseTrain(TrainBlock &train) {
  train.loc = take().loc;
  if (!is(TokenKind::Ident))
    return expected("the name of the graph to train after 'train'");
  Token name = take();
  train.graphName = name.text, train.nameLoc = name.loc;
  std::string owner = "train block " + quoted(train.graphName);
  if (!is(TokenKind::LParen))
    return expected("'(' and the extra inputs after 'train " + train.graphName +
                    "' (write '()' if there are none)");
  if (!parseBindings(train.inputs, "input", "the inputs of " + owner))
    return false;
  return parseBody(train.body, owner);
}

/// bindings ::= '(' [ IDENT ':' type { ',' IDENT ':' type } [','] ] ')'
bool Parser::parseBindings(std::vector<Binding> &out, const std::string &what,
                           const std::string &list) {
  Location open = take().loc;
  Nested n(nest);
  while (!is(TokenKind::RParen)) {
    if (!is(TokenKind::Ident))
      return expected("an " + what + " name (name: type) or ')'");
    Binding b;
    Token name = take();
    b.loc = name.loc, b.name = name.text;
    if (!is(TokenKind::Colon))
      return expected("':' and a type after " + what + " " + quoted(b.name));
    take();
    if (!parseType(b.type))
      return false;
    out.push_back(std::move(b));
    if (is(TokenKind::Comma))
      take();
    else if (!is(TokenKind::RParen))
      return expectedCloser("')' to close " + list + " opened at " + at(open));
  }
  take();
  return true;
}

/// type ::= DTYPE '[' [ dim { ',' dim } [','] ] ']' ; dim ::= INTEGER | IDENT
bool Parser::parseType(TypeExpr &type) {
  if (!is(TokenKind::Ident))
    return expected("a type such as 'f32[N, 784]'");
  Token dtype = take();
  type.loc = dtype.loc, type.dtype = dtype.text;
  if (std::find(std::begin(kDTypes), std::end(kDTypes), dtype.text) ==
      std::end(kDTypes))
    return fail(dtype.loc, "unknown element type " + quoted(dtype.text) +
                               " (expected one of f64, f32, f16, bf16, i64, "
                               "i32, i8, u8, i1)");
  if (!is(TokenKind::LBracket))
    return expected("'[' and the shape after element type " +
                    quoted(dtype.text) + " (write '" + dtype.text +
                    "[]' for a scalar)");
  Location open = take().loc;
  Nested n(nest);
  while (!is(TokenKind::RBracket)) {
    Dim dim;
    dim.loc = tok().loc;
    if (is(TokenKind::Integer)) {
      Token t = take();
      int64_t size;
      if (!parseInteger(t, t.text, size))
        return false;
      dim.value = size;
    } else if (is(TokenKind::Ident)) {
      dim.value = take().text;
    } else {
      return expected("a dimension (integer or name)");
    }
    type.dims.push_back(std::move(dim));
    if (is(TokenKind::Comma))
      take();
    else if (!is(TokenKind::RBracket))
      return expectedCloser("']' to close the shape opened at " + at(open));
  }
  take();
  if (is(TokenKind::At))
    return parseShard(type);
  return true;
}

/// shard ::= '@' 'shard' '(' axis { ',' axis } ')' ; axis ::= IDENT | '_'
/// One entry per dimension: the mesh axis it is split over, `_` for whole.
bool Parser::parseShard(TypeExpr &type) {
  type.shardLoc = take().loc;
  if (!is(TokenKind::Ident) || tok().text != "shard")
    return expected("'shard(...)' after '@' (the mesh axis of each dimension, "
                    "'_' for whole)");
  take();
  if (!is(TokenKind::LParen))
    return expected("'(' after '@shard'");
  Location open = take().loc;
  Nested n(nest);
  while (!is(TokenKind::RParen)) {
    if (!is(TokenKind::Ident))
      return expected("a mesh axis name or '_' (whole)");
    Token axis = take();
    type.shard.push_back(axis.text == "_" ? "" : axis.text);
    if (is(TokenKind::Comma))
      take();
    else if (!is(TokenKind::RParen))
      return expectedCloser("')' to close the @shard opened at " + at(open));
  }
  take();
  if (type.shard.size() != type.dims.size())
    return fail(type.shardLoc, "@shard names " + std::to_string(type.shard.size()) +
                                   " dimension(s), the type has " +
                                   std::to_string(type.dims.size()));
  return true;
}

/// body ::= '{' NEWLINE { [ stmt ] NEWLINE } '}'
bool Parser::parseBody(std::vector<Stmt> &body, const std::string &owner) {
  if (!is(TokenKind::LBrace))
    return expected("'{' to open the body of " + owner);
  Location open = take().loc;
  if (!is(TokenKind::Newline))
    return expected("a newline after '{' (one statement a line)");
  for (;;) {
    skipNewlines();
    if (is(TokenKind::RBrace)) {
      take();
      return true;
    }
    if (is(TokenKind::Eof))
      return expected("'}' to close the body of " + owner + " opened at " +
                      at(open));
    if (!parseStatement(body, owner, open))
      return false;
  }
}

/// stmt ::= param | assign | '@stage', ended by a newline (or the end of
/// the file).
bool Parser::parseStatement(std::vector<Stmt> &body, const std::string &owner,
                            const Location &open) {
  if ((isIdent("graph") || isIdent("train")) &&
      lookahead().kind == TokenKind::Ident)
    return fail(tok().loc, "expected '}' to close the body of " + owner +
                               " opened at " + at(open) + " before the next " +
                               quoted(tok().text));
  if (is(TokenKind::At)) {
    StageMark mark{tok().loc};
    take();
    if (!isIdent("stage"))
      return expected("'stage' after '@' (a pipeline stage boundary: '@stage')");
    take();
    body.emplace_back(mark);
    if (!is(TokenKind::Newline) && !is(TokenKind::Eof))
      return expected("the end of the line after '@stage'");
    return true;
  }
  if (isIdent("param")) {
    ParamDecl param;
    if (!parseParam(param))
      return false;
    body.emplace_back(std::move(param));
    if (!is(TokenKind::Newline) && !is(TokenKind::Eof))
      return expected("the end of the line after the parameter declaration");
    return true;
  }
  if (!is(TokenKind::Ident))
    return expected("a statement ('name = expression' or 'param name: type = "
                    "init')");
  Assign assign;
  if (!parseAssign(assign))
    return false;
  body.emplace_back(std::move(assign));
  if (!is(TokenKind::Newline) && !is(TokenKind::Eof))
    return expected("an operator or the end of the line");
  return true;
}

/// param ::= 'param' IDENT ':' type '=' IDENT [ '(' args ')' ]
bool Parser::parseParam(ParamDecl &param) {
  param.loc = take().loc;
  if (!is(TokenKind::Ident))
    return expected("a parameter name after 'param'");
  Token name = take();
  param.name = name.text, param.nameLoc = name.loc;
  if (!is(TokenKind::Colon))
    return expected("':' and a type after parameter " + quoted(param.name));
  take();
  if (!parseType(param.type))
    return false;
  if (is(TokenKind::Newline) || is(TokenKind::Eof) || is(TokenKind::RBrace))
    return fail(tok().loc, "'param' needs an initialiser: add '= zeros' or "
                           "'= load(\"file.npy\")'");
  if (!is(TokenKind::Equal))
    return expected("'=' and an initialiser after the type of parameter " +
                    quoted(param.name));
  take();
  if (!is(TokenKind::Ident))
    return expected("an initialiser such as 'zeros', 'he(seed=1)' or "
                    "'load(\"w.npy\")'");
  Token callee = take();
  param.init.loc = callee.loc, param.init.callee = callee.text;
  if (!is(TokenKind::LParen))
    return true;
  param.init.hasParens = true;
  std::vector<Attr> &args = param.init.args;
  return parseArgList(callee.text, param.init.kwargs, [&]() {
    Attr attr;
    if (!parseAttr(attr, 0))
      return false;
    args.push_back(std::move(attr));
    return true;
  });
}

/// assign ::= IDENT { ',' IDENT } '=' expr
bool Parser::parseAssign(Assign &assign) {
  assign.loc = tok().loc;
  for (;;) {
    Token name = take();
    assign.names.push_back(NameLoc{name.loc, name.text});
    if (!is(TokenKind::Comma))
      break;
    take();
    if (!is(TokenKind::Ident))
      return expected("a name after ',' in the names being assigned");
  }
  if (!is(TokenKind::Equal)) {
    std::string after = assign.names.size() == 1
                            ? quoted(assign.names[0].name)
                            : "the names being assigned";
    if (is(TokenKind::LParen))
      return fail(tok().loc, "expected '=' after " + after +
                                 ", found '(' (a statement names its result: "
                                 "'y = " + assign.names[0].name + "(...)')");
    return expected("'=' after " + after);
  }
  take();
  int height = 0;
  assign.value = parseExpr(height);
  return assign.value != nullptr;
}

/// args ::= [ arg { ',' arg } [','] ] ')' with arg ::= positional | kwarg,
/// kwarg ::= IDENT '=' attr, and every positional before every kwarg. The
/// current token is the '('.
template <typename Positional>
bool Parser::parseArgList(const std::string &callee, std::vector<KwArg> &kwargs,
                          Positional positional) {
  Location open = take().loc;
  Nested n(nest);
  while (!is(TokenKind::RParen)) {
    if (is(TokenKind::Ident) && lookahead().kind == TokenKind::Equal) {
      Token name = take();
      take(); // '='
      for (const KwArg &kw : kwargs)
        if (kw.name == name.text)
          return fail(name.loc, "duplicate keyword argument " +
                                    quoted(name.text) + " (first given at " +
                                    at(kw.loc) + ")");
      KwArg kw;
      kw.loc = name.loc, kw.name = name.text;
      if (!parseAttr(kw.value, 0))
        return false;
      kwargs.push_back(std::move(kw));
    } else {
      if (!kwargs.empty() && !is(TokenKind::Error))
        return fail(tok().loc, "positional argument after keyword argument " +
                                   quoted(kwargs.back().name));
      if (!positional())
        return false;
    }
    if (is(TokenKind::Comma))
      take();
    else if (!is(TokenKind::RParen))
      return expectedCloser("')' to close the argument list of " +
                            quoted(callee) + " opened at " + at(open));
  }
  take();
  return true;
}

/// attr ::= ['-'] (INTEGER | FLOAT) | STRING | 'true' | 'false' | IDENT
///        | '[' [ attr { ',' attr } [','] ] ']'
bool Parser::parseAttr(Attr &attr, int level) {
  attr.loc = tok().loc;
  if (level >= kMaxNesting)
    return tooDeep(attr.loc);
  std::string sign;
  if (is(TokenKind::Minus)) {
    take();
    if (!is(TokenKind::Integer) && !is(TokenKind::Float))
      return expected("a number after '-'");
    sign = "-";
  }
  switch (tok().kind) {
  case TokenKind::Integer: {
    Token t = take();
    attr.kind = Attr::Int;
    return parseInteger(t, sign + t.text, attr.i);
  }
  case TokenKind::Float: {
    Token t = take();
    attr.kind = Attr::Float;
    return parseFloat(t, sign + t.text, attr.f);
  }
  case TokenKind::String:
    attr.kind = Attr::String;
    attr.s = take().text;
    return true;
  case TokenKind::Ident: {
    Token t = take();
    if (t.text == "true" || t.text == "false") {
      attr.kind = Attr::Bool;
      attr.b = t.text == "true";
    } else {
      attr.kind = Attr::Ident;
      attr.s = t.text;
    }
    return true;
  }
  case TokenKind::LBracket: {
    Location open = take().loc;
    Nested n(nest);
    attr.kind = Attr::List;
    while (!is(TokenKind::RBracket)) {
      attr.list.emplace_back();
      if (!parseAttr(attr.list.back(), level + 1))
        return false;
      if (is(TokenKind::Comma))
        take();
      else if (!is(TokenKind::RBracket))
        return expectedCloser("']' to close the list opened at " + at(open));
    }
    take();
    return true;
  }
  default:
    return expected("an attribute value (number, string, true, false, name "
                    "or [list])");
  }
}

bool Parser::parseInteger(const Token &t, const std::string &spelling,
                          int64_t &out) {
  const char *end = spelling.data() + spelling.size();
  auto [ptr, ec] = std::from_chars(spelling.data(), end, out);
  if (ec != std::errc() || ptr != end)
    return fail(t.loc, "integer literal '" + spelling +
                           "' is out of range (it must fit in 64 bits)");
  return true;
}

bool Parser::parseFloat(const Token &t, const std::string &spelling,
                        double &out) {
  const char *end = spelling.data() + spelling.size();
  auto [ptr, ec] = std::from_chars(spelling.data(), end, out);
  if (ec != std::errc() || ptr != end)
    return fail(t.loc, "number '" + spelling +
                           "' is out of the range of a 64-bit float");
  return true;
}

//===----------------------------------------------------------------------===//
// Expressions. `height` returns the depth of the tree built, which is capped
// so that destroying or dumping the tree cannot exhaust the stack.
//===----------------------------------------------------------------------===//

ExprPtr Parser::binary(Location loc, char op, ExprPtr lhs, int &height,
                       ExprPtr rhs, int rhsHeight) {
  height = std::max(height, rhsHeight) + 1;
  if (height > kMaxNesting) {
    tooDeep(loc);
    return nullptr;
  }
  return std::make_unique<BinaryExpr>(std::move(loc), op, std::move(lhs),
                                      std::move(rhs));
}

/// expr ::= term { ('+' | '-') term }
ExprPtr Parser::parseExpr(int &height) {
  ExprPtr lhs = parseTerm(height);
  while (lhs && (is(TokenKind::Plus) || is(TokenKind::Minus))) {
    Token op = take();
    int rhsHeight = 0;
    ExprPtr rhs = parseTerm(rhsHeight);
    if (!rhs)
      return nullptr;
    lhs = binary(op.loc, op.text[0], std::move(lhs), height, std::move(rhs),
                 rhsHeight);
  }
  return lhs;
}

/// term ::= unary { ('*' | '/' | '@') unary }
ExprPtr Parser::parseTerm(int &height) {
  ExprPtr lhs = parseUnary(height);
  while (lhs && (is(TokenKind::Star) || is(TokenKind::Slash) ||
                 is(TokenKind::At))) {
    Token op = take();
    int rhsHeight = 0;
    ExprPtr rhs = parseUnary(rhsHeight);
    if (!rhs)
      return nullptr;
    lhs = binary(op.loc, op.text[0], std::move(lhs), height, std::move(rhs),
                 rhsHeight);
  }
  return lhs;
}

/// unary ::= { '-' } primary   (iterative, so `- - - x` cannot recurse)
ExprPtr Parser::parseUnary(int &height) {
  std::vector<Location> minus;
  while (is(TokenKind::Minus)) {
    minus.push_back(take().loc);
    if (static_cast<int>(minus.size()) > kMaxNesting) {
      tooDeep(minus.back());
      return nullptr;
    }
  }
  ExprPtr e = parsePrimary(height);
  if (!e)
    return nullptr;
  height += static_cast<int>(minus.size());
  if (height > kMaxNesting) {
    tooDeep(minus.empty() ? e->loc() : minus.front());
    return nullptr;
  }
  for (auto it = minus.rbegin(); it != minus.rend(); ++it)
    e = std::make_unique<UnaryExpr>(*it, '-', std::move(e));
  return e;
}

/// primary ::= IDENT | IDENT '(' args ')' | INTEGER | FLOAT | '(' expr ')'
ExprPtr Parser::parsePrimary(int &height) {
  struct Depth {
    int &d;
    explicit Depth(int &d) : d(d) { ++d; }
    ~Depth() { --d; }
  } guard(depth);
  height = 1;
  if (depth > kMaxNesting) {
    tooDeep(tok().loc);
    return nullptr;
  }
  switch (tok().kind) {
  case TokenKind::Ident: {
    Token name = take();
    if (!is(TokenKind::LParen))
      return std::make_unique<NameExpr>(name.loc, name.text);
    auto call = std::make_unique<CallExpr>(name.loc, name.text);
    bool ok = parseArgList(name.text, call->kwargs, [&]() {
      Location loc = tok().loc;
      int argHeight = 0;
      ExprPtr value = parseExpr(argHeight);
      if (!value)
        return false;
      height = std::max(height, argHeight + 1);
      call->args.push_back(Arg{loc, std::move(value)});
      return true;
    });
    if (!ok)
      return nullptr;
    return call;
  }
  case TokenKind::Integer: {
    Token t = take();
    int64_t value;
    if (!parseInteger(t, t.text, value))
      return nullptr;
    return std::make_unique<NumberExpr>(t.loc, static_cast<double>(value),
                                        true, value);
  }
  case TokenKind::Float: {
    Token t = take();
    double value;
    if (!parseFloat(t, t.text, value))
      return nullptr;
    return std::make_unique<NumberExpr>(t.loc, value, false, 0);
  }
  case TokenKind::LParen: {
    Location open = take().loc;
    Nested n(nest);
    ExprPtr inner = parseExpr(height);
    if (!inner)
      return nullptr;
    if (!is(TokenKind::RParen)) {
      expectedCloser("')' to close the parenthesis opened at " + at(open));
      return nullptr;
    }
    take();
    return inner;
  }
  default:
    expected("an expression");
    return nullptr;
  }
}

} // namespace

std::optional<Module> parseModule(std::string_view source,
                                  std::shared_ptr<const std::string> fileName,
                                  Diagnostic &error) {
  return Parser(source, std::move(fileName)).parseModule(error);
}

std::string renderDiagnostic(const Diagnostic &diag, std::string_view source) {
  std::string out = toString(diag.loc) + ": error: " + diag.message + "\n";
  // Find the line; print it and a caret, keeping tabs so the caret aligns.
  size_t start = 0;
  for (int line = 1; line < diag.loc.line && start != std::string_view::npos;
       ++line) {
    start = source.find('\n', start);
    if (start != std::string_view::npos)
      ++start;
  }
  if (diag.loc.line < 1 || start == std::string_view::npos ||
      start > source.size())
    return out;
  size_t end = source.find('\n', start);
  std::string_view text = source.substr(
      start, end == std::string_view::npos ? std::string_view::npos : end - start);
  if (!text.empty() && text.back() == '\r')
    text.remove_suffix(1);
  out += std::string(text) + "\n";
  for (int i = 1; i < diag.loc.col; ++i)
    out += static_cast<size_t>(i - 1) < text.size() && text[i - 1] == '\t' ? '\t'
                                                                         : ' ';
  return out + "^\n";
}

} // namespace dlg
} // namespace dlc
