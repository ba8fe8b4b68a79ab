//===- dlg.cpp - Fuzz target: .dlg parse, build, verify, shape inference --===//
//
// What `dlc check` does with a .dlg file: parse, then build the IR (names,
// the op vocabulary, shape inference at every call, the train block's loss
// graph) with unbound dimensions taken as 1, then verify what was built.
// A failure must be a diagnostic with a location; a built module must
// verify. Weight files named by load(...) resolve against an empty folder.

#include "fuzz/CompilerFuzz.h"
#include "frontend/text/Parser.h"

using namespace dlc;

static fuzz::StageCounts counts("dlg", {"inputs", "parsed", "built", "training built"});

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  counts.hit(0);
  std::string_view source(reinterpret_cast<const char *>(data), size);
  dlg::Diagnostic diagnostic;
  auto fileName = std::make_shared<const std::string>("fuzz.dlg");
  std::optional<dlg::Module> module = dlg::parseModule(source, fileName, diagnostic);
  if (!module) {
    if (diagnostic.message.empty() || diagnostic.loc.line < 1 || diagnostic.loc.col < 1)
      fuzz::contractBroken("a syntax error without a message or a location");
    (void)dlg::renderDiagnostic(diagnostic, source);
    return 0;
  }
  counts.hit(1);
  (void)dlg::dumpModule(*module); // --emit=ast
  if (module->graphs.empty())
    return 0;
  for (bool training : {false, true}) {
    fuzz::FuzzContext fc;
    dlg::BuildOptions options;
    options.defaultUnboundDimsToOne = true;
    options.baseDir = fuzz::scratchDir() + "/empty";
    options.buildTraining = training;
    dlg::BuildResult built = dlg::buildModule(*module, fc.context(), options);
    if (!built.module) {
      if (fc.errors() == 0)
        fuzz::contractBroken("the build failed without an error");
      return 0; // the training build fails where this one did
    }
    fc.mustVerify(*built.module);
    counts.hit(training ? 3 : 2);
    if (module->trains.empty())
      break;
  }
  return 0;
}
