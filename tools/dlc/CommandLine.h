//===- CommandLine.h - dlc's verbs before llvm::cl sees them ----*- C++ -*-===//
//
// What `dlc` does with its command line before llvm::cl parses it: the
// top-level help (the verbs, one line each), `help VERB`, an unknown verb
// named with the nearest one, and `@` arguments kept as they are (llvm::cl
// would read `--input @x` as a response file named x).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_DLC_COMMANDLINE_H
#define DLC_TOOLS_DLC_COMMANDLINE_H

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace dlc {

struct Verb {
  const char *name;
  /// One line, for `dlc --help`.
  const char *summary;
};

/// dlc's verbs, in the order `dlc --help` lists them.
const std::vector<Verb> &verbs();

/// `dlc --help`: the verbs, examples and where to look next.
void printTopLevelHelp(llvm::raw_ostream &os);

/// The "--version" text.
void printVersion(llvm::raw_ostream &os);

/// The arguments llvm::cl should parse, or an exit code when the command line
/// is answered (top-level help) or refused (no verb, an unknown verb: the
/// message is printed to `errs`). `help VERB` becomes `VERB --help`; an
/// argument starting with `@` joins the option before it (`--input @x` to
/// `--input=@x`), or, as a model path, becomes `./@x`: dlc never reads
/// response files.
std::optional<int> prepareArguments(int argc, char **argv,
                                    std::vector<std::string> &arguments,
                                    llvm::raw_ostream &errs);

} // namespace dlc

#endif // DLC_TOOLS_DLC_COMMANDLINE_H
