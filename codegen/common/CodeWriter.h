//===- CodeWriter.h - indented C-like source text ---------------*- C++ -*-===//

#ifndef DLC_CODEGEN_COMMON_CODEWRITER_H
#define DLC_CODEGEN_COMMON_CODEWRITER_H

#include "llvm/ADT/Twine.h"

#include <string>

namespace dlc::codegen {

class CodeWriter {
public:
  /// One line at the current indentation.
  void line(const llvm::Twine &text) {
    text_.append(2 * depth_, ' ');
    text_ += text.str();
    text_ += '\n';
  }
  void blank() { text_ += '\n'; }
  /// `head {` and one level deeper.
  void open(const llvm::Twine &head) {
    line(head + " {");
    ++depth_;
  }
  /// `}` one level up.
  void close(const llvm::Twine &tail = "") {
    --depth_;
    line("}" + tail);
  }
  /// `} head {`: closes a block and opens the next (`else`, `else if`).
  void reopen(const llvm::Twine &head) {
    --depth_;
    line("} " + head + " {");
    ++depth_;
  }
  /// A fresh name: prefix + a number unique in this writer.
  std::string fresh(const char *prefix) {
    return prefix + std::to_string(counter_++);
  }
  const std::string &text() const { return text_; }
  void append(const std::string &raw) { text_ += raw; }

private:
  std::string text_;
  unsigned depth_ = 0;
  unsigned counter_ = 0;
};

} // namespace dlc::codegen

#endif // DLC_CODEGEN_COMMON_CODEWRITER_H
