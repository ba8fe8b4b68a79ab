//===- Lexer.cpp - Tokens of the .dlg text format -------------------------===//

#include "frontend/text/Lexer.h"

#include <cstdio>

namespace dlc {
namespace dlg {

static bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool isDigit(char c) { return c >= '0' && c <= '9'; }
static bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

/// Quotes a possibly non-printable character for a message: 'x', '\x01', or
/// a whole UTF-8 sequence such as '→'. `len` receives the bytes it spans.
static std::string quoteChar(std::string_view s, size_t pos, size_t &len) {
  auto byte = static_cast<unsigned char>(s[pos]);
  len = 1;
  if (byte >= 0x20 && byte < 0x7f)
    return std::string("'") + static_cast<char>(byte) + "'";
  size_t need = byte >= 0xf0 && byte < 0xf5   ? 4
                : byte >= 0xe0 && byte < 0xf0 ? 3
                : byte >= 0xc2 && byte < 0xe0 ? 2
                                              : 0;
  bool valid = need != 0 && pos + need <= s.size();
  for (size_t i = 1; valid && i < need; ++i)
    valid = (static_cast<unsigned char>(s[pos + i]) & 0xc0) == 0x80;
  if (valid) {
    len = need;
    return "'" + std::string(s.substr(pos, need)) + "'";
  }
  char buf[8];
  std::snprintf(buf, sizeof buf, "'\\x%02x'", byte);
  return buf;
}

std::string describe(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof: return "end of file";
  case TokenKind::Newline: return "newline";
  case TokenKind::Error: return "invalid token";
  case TokenKind::Ident: return "identifier";
  case TokenKind::Integer: return "integer";
  case TokenKind::Float: return "number";
  case TokenKind::String: return "string";
  case TokenKind::LParen: return "'('";
  case TokenKind::RParen: return "')'";
  case TokenKind::LBracket: return "'['";
  case TokenKind::RBracket: return "']'";
  case TokenKind::LBrace: return "'{'";
  case TokenKind::RBrace: return "'}'";
  case TokenKind::Comma: return "','";
  case TokenKind::Colon: return "':'";
  case TokenKind::Equal: return "'='";
  case TokenKind::Arrow: return "'->'";
  case TokenKind::Plus: return "'+'";
  case TokenKind::Minus: return "'-'";
  case TokenKind::Star: return "'*'";
  case TokenKind::Slash: return "'/'";
  case TokenKind::At: return "'@'";
  }
  return "token";
}

std::string describe(const Token &tok) {
  switch (tok.kind) {
  case TokenKind::Ident: return "identifier '" + tok.text + "'";
  case TokenKind::Integer:
  case TokenKind::Float: return "number '" + tok.text + "'";
  case TokenKind::String: {
    std::string shown = tok.text.size() > 20 ? tok.text.substr(0, 20) + "..."
                                             : tok.text;
    for (char &c : shown)
      if (static_cast<unsigned char>(c) < 0x20)
        c = ' ';
    return "string \"" + shown + "\"";
  }
  default: return describe(tok.kind);
  }
}

Lexer::Lexer(std::string_view source, std::shared_ptr<const std::string> file)
    : src(source), file(std::move(file)) {}

char Lexer::peek(size_t ahead) const {
  return pos + ahead < src.size() ? src[pos + ahead] : '\0';
}

void Lexer::advance() {
  if (pos >= src.size())
    return;
  if (src[pos] == '\n') {
    ++line;
    col = 1;
  } else {
    ++col;
  }
  ++pos;
}

Location Lexer::here() const { return Location{file, line, col}; }

Token Lexer::make(TokenKind kind, Location loc, std::string text) const {
  return Token{kind, std::move(loc), std::move(text)};
}

Token Lexer::next() {
  if (done)
    return make(TokenKind::Eof, here(), "");
  // Skip blanks and comments; a comment ends before its newline.
  for (;;) {
    char c = peek();
    if (pos < src.size() && (c == ' ' || c == '\t' || c == '\r')) {
      advance();
    } else if (c == '#') {
      while (pos < src.size() && peek() != '\n')
        advance();
    } else {
      break;
    }
  }
  Location loc = here();
  if (pos >= src.size()) {
    done = true;
    return make(TokenKind::Eof, loc, "");
  }
  char c = peek();
  if (c == '\n') {
    advance();
    return make(TokenKind::Newline, loc, "\n");
  }
  if (isIdentStart(c)) {
    size_t start = pos;
    while (isIdentChar(peek()))
      advance();
    return make(TokenKind::Ident, loc, std::string(src.substr(start, pos - start)));
  }
  if (isDigit(c))
    return lexNumber();
  if (c == '"')
    return lexString();
  if (c == '-' && peek(1) == '>') {
    advance();
    advance();
    return make(TokenKind::Arrow, loc, "->");
  }
  TokenKind kind;
  switch (c) {
  case '(': kind = TokenKind::LParen; break;
  case ')': kind = TokenKind::RParen; break;
  case '[': kind = TokenKind::LBracket; break;
  case ']': kind = TokenKind::RBracket; break;
  case '{': kind = TokenKind::LBrace; break;
  case '}': kind = TokenKind::RBrace; break;
  case ',': kind = TokenKind::Comma; break;
  case ':': kind = TokenKind::Colon; break;
  case '=': kind = TokenKind::Equal; break;
  case '+': kind = TokenKind::Plus; break;
  case '-': kind = TokenKind::Minus; break;
  case '*': kind = TokenKind::Star; break;
  case '/': kind = TokenKind::Slash; break;
  case '@': kind = TokenKind::At; break;
  default: {
    size_t len;
    std::string shown = quoteChar(src, pos, len);
    done = true;
    return make(TokenKind::Error, loc, "unexpected character " + shown);
  }
  }
  advance();
  return make(kind, loc, std::string(1, c));
}

/// integer ::= digit+ ; float ::= digit+ ('.' digit+)? ([eE] [+-]? digit+)?
/// with at least one of the fraction or the exponent.
Token Lexer::lexNumber() {
  Location loc = here();
  size_t start = pos;
  auto spelled = [&] { return std::string(src.substr(start, pos - start)); };
  auto fail = [&](std::string msg) {
    done = true;
    return make(TokenKind::Error, loc, std::move(msg));
  };
  bool isFloat = false;
  while (isDigit(peek()))
    advance();
  if (peek() == '.') {
    advance();
    if (!isDigit(peek()))
      return fail("expected a digit after the '.' in number '" + spelled() + "'");
    while (isDigit(peek()))
      advance();
    isFloat = true;
  }
  if (peek() == 'e' || peek() == 'E') {
    advance();
    if (peek() == '+' || peek() == '-')
      advance();
    if (!isDigit(peek()))
      return fail("expected digits in the exponent of number '" + spelled() + "'");
    while (isDigit(peek()))
      advance();
    isFloat = true;
  }
  if (isIdentChar(peek()) || peek() == '.') {
    std::string number = spelled();
    size_t suffixStart = pos;
    while (isIdentChar(peek()) || peek() == '.')
      advance();
    return fail("invalid suffix '" +
                std::string(src.substr(suffixStart, pos - suffixStart)) +
                "' on number '" + number + "'");
  }
  return make(isFloat ? TokenKind::Float : TokenKind::Integer, loc, spelled());
}

/// string ::= '"' { char | '\"' | '\\' | '\n' | '\t' } '"' on one line.
Token Lexer::lexString() {
  Location loc = here();
  advance(); // opening quote
  std::string value;
  for (;;) {
    if (pos >= src.size() || peek() == '\n') {
      done = true;
      return make(TokenKind::Error, loc, "unterminated string");
    }
    char c = peek();
    if (c == '"') {
      advance();
      return make(TokenKind::String, loc, std::move(value));
    }
    if (c == '\\') {
      Location escLoc = here();
      advance();
      char e = peek();
      if (e == '"' || e == '\\') {
        value += e;
      } else if (e == 'n') {
        value += '\n';
      } else if (e == 't') {
        value += '\t';
      } else if (pos >= src.size() || e == '\n') {
        done = true;
        return make(TokenKind::Error, loc, "unterminated string");
      } else {
        size_t len;
        std::string shown = quoteChar(src, pos, len);
        done = true;
        return make(TokenKind::Error, escLoc,
                    "unknown escape sequence '\\" +
                        shown.substr(1, shown.size() - 2) +
                        "' in string (use \\\" \\\\ \\n or \\t)");
      }
      advance();
      continue;
    }
    value += c;
    advance();
  }
}

std::vector<Token> tokenize(std::string_view source,
                            std::shared_ptr<const std::string> file) {
  Lexer lexer(source, std::move(file));
  std::vector<Token> tokens;
  for (;;) {
    tokens.push_back(lexer.next());
    TokenKind k = tokens.back().kind;
    if (k == TokenKind::Eof || k == TokenKind::Error)
      return tokens;
  }
}

} // namespace dlg
} // namespace dlc
