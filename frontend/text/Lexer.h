//===- Lexer.h - Tokens of the .dlg text format -----------------*- C++ -*-===//
//
// Splits a .dlg source into tokens, as the Toy tutorial's Lexer.h, but over
// a string_view and without LLVM. Comments (`#` to end of line), spaces, tabs
// and carriage returns are skipped; every line end becomes a Newline token
// (the parser decides where newlines matter). A lexical error becomes an
// Error token carrying its message, so that the parser reports whichever error
// comes first in the file.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_TEXT_LEXER_H
#define DLC_FRONTEND_TEXT_LEXER_H

#include "frontend/text/Location.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dlc {
namespace dlg {

enum class TokenKind {
  Eof,
  Newline,
  Error,   ///< Lexical error; `text` holds the message.
  Ident,   ///< [A-Za-z_][A-Za-z0-9_]*; keywords are identifiers too.
  Integer, ///< Digits only, e.g. `784`. `text` is the spelling.
  Float,   ///< With a '.' or an exponent, e.g. `0.5`, `1e-5`.
  String,  ///< `text` holds the contents with escapes resolved.
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Equal,
  Arrow, ///< ->
  Plus,
  Minus,
  Star,
  Slash,
  At,
};

struct Token {
  TokenKind kind = TokenKind::Eof;
  Location loc;     ///< Position of the token's first character.
  std::string text; ///< Spelling (contents for String, message for Error).
};

/// Describes a token for "found ..." in error messages: "identifier 'x'",
/// "number '0.5'", "string \"a\"", "'('", "newline", "end of file".
std::string describe(const Token &tok);

/// Spelling of a punctuation kind in quotes, e.g. "')'" for RParen.
std::string describe(TokenKind kind);

class Lexer {
public:
  Lexer(std::string_view source, std::shared_ptr<const std::string> file);

  /// Returns the next token. After Eof or Error, keeps returning Eof.
  Token next();

private:
  char peek(size_t ahead = 0) const;
  void advance();
  Location here() const;
  Token make(TokenKind kind, Location loc, std::string text) const;
  Token lexNumber();
  Token lexString();

  std::string_view src;
  std::shared_ptr<const std::string> file;
  size_t pos = 0;
  int line = 1, col = 1;
  bool done = false;
};

/// Lexes the whole source. The last token is Eof or Error.
std::vector<Token> tokenize(std::string_view source,
                            std::shared_ptr<const std::string> file);

} // namespace dlg
} // namespace dlc

#endif // DLC_FRONTEND_TEXT_LEXER_H
