//===- Location.h - Source positions in .dlg files --------------*- C++ -*-===//
//
// A position in a .dlg source file. Every AST node carries one, so that the
// graph builder can report `file:line:col: error: ...` for semantic errors
// exactly as the parser does for syntax errors. Plain C++17: no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_TEXT_LOCATION_H
#define DLC_FRONTEND_TEXT_LOCATION_H

#include <memory>
#include <string>

namespace dlc {
namespace dlg {

/// A position in a source file. `line` and `col` are 1-based; `col` counts
/// bytes (a tab is one column). A default-constructed Location (line 0) is
/// "unknown". `file` is shared by every location of one parse.
struct Location {
  std::shared_ptr<const std::string> file;
  int line = 0;
  int col = 0;
};

/// "file:line:col", or "line:col" when the file name is unknown or empty.
inline std::string toString(const Location &loc) {
  std::string s;
  if (loc.file && !loc.file->empty())
    s = *loc.file + ":";
  return s + std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

} // namespace dlg
} // namespace dlc

#endif // DLC_FRONTEND_TEXT_LOCATION_H
