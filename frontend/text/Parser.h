//===- Parser.h - Parser of the .dlg text format ----------------*- C++ -*-===//
//
// A recursive-descent parser for .dlg files (grammar: docs/format.md),
// building the AST of AST.h. It stops at the first syntax error and reports
// it with a location and a message that says what was expected and what was
// found. It never crashes, loops or recurses without bound, whatever the
// input: nesting deeper than kMaxNesting is an error. Plain C++17: no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_TEXT_PARSER_H
#define DLC_FRONTEND_TEXT_PARSER_H

#include "frontend/text/AST.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace dlc {
namespace dlg {

/// A syntax error: where, and what was expected and found, in words.
struct Diagnostic {
  Location loc;
  std::string message;
};

/// The deepest nesting of parentheses, calls, lists, unary minus signs and
/// operators in one expression or attribute.
constexpr int kMaxNesting = 256;

/// Parses a whole .dlg file. `fileName` is shared by the locations of every
/// node (it may be null). On a syntax error returns nullopt and fills `error`.
std::optional<Module> parseModule(std::string_view source,
                                  std::shared_ptr<const std::string> fileName,
                                  Diagnostic &error);

/// Formats a diagnostic as the tools print it: `file:line:col: error: msg`,
/// then the source line and a caret under the column. Ends with a newline.
std::string renderDiagnostic(const Diagnostic &diag, std::string_view source);

} // namespace dlg
} // namespace dlc

#endif // DLC_FRONTEND_TEXT_PARSER_H
