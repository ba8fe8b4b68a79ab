//===- CommandLine.cpp - dlc's verbs before llvm::cl sees them ------------===//

#include "CommandLine.h"

#include "driver/ExitCodes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"

namespace dlc {

const std::vector<Verb> &verbs() {
  static const std::vector<Verb> all = {
      {"check", "inputs, outputs, parameters and FLOPs of a model"},
      {"compile", "compile a model into a module (.dlcm), or print a stage (--emit)"},
      {"plan", "memory plan; with --mesh or --device-spec, the predicted step time"},
      {"run", "run a model on given or seeded random inputs; print, save, check"},
      {"train", "train a model's train block on a dataset (mpirun for ranks)"},
      {"bench", "measure latency percentiles, throughput and what bounds them"},
      {"profile", "time every kernel; a Chrome trace with --trace"},
      {"verify", "run kernel by kernel against the float64 oracle; name the first off"},
  };
  return all;
}

void printTopLevelHelp(llvm::raw_ostream &os) {
  os << "dlc: a dataflow graph compiler for deep-learning models\n\n"
        "USAGE: dlc VERB MODEL [options]     MODEL: .dlg, .onnx or .dlcm\n\n"
        "VERBS:\n";
  for (const Verb &verb : verbs())
    os << "  " << llvm::left_justify(verb.name, 9) << verb.summary << "\n";
  os << "\n"
        "EXAMPLES:\n"
        "  dlc run examples/mnist_mlp.dlg --dim N=4 --random-inputs\n"
        "  dlc compile examples/mnist_mlp.dlg --dim N=64 -o mlp.dlcm\n"
        "  dlc run mlp.dlcm --input x=@x.npy --output logits=@y.npy\n"
        "  dlc train examples/fashion_mnist/mlp.dlg --data "
        "/usr/share/datasets/fashion-mnist\n"
        "  mpirun -np 2 dlc train M.dlg --data D --mesh data=2 --parallel data\n"
        "  dlc bench examples/gpt2_block.dlg --dim B=1 --dim T=128\n"
        "  dlc profile examples/lenet.dlg --dim N=8 --trace trace.json\n"
        "  dlc plan M.dlg --train --parallel auto --devices 8 --device-spec v100\n\n"
        "MORE:\n"
        "  dlc VERB --help     that verb's options, grouped, with defaults\n"
        "  dlc --version       dlc's version and what it was built with\n"
        "  dlc --help-hidden   every option, LLVM's and MLIR's included\n"
        "  docs/cli.md (this tool), docs/format.md (.dlg), docs/parallelism.md\n";
}

/// The verb nearest to `word` by edit distance, if it is near enough to be
/// a typo.
static const char *nearestVerb(llvm::StringRef word) {
  const char *best = nullptr;
  unsigned bestDistance = 3;
  for (const Verb &verb : verbs()) {
    unsigned d = word.edit_distance(verb.name, /*AllowReplacements=*/true, bestDistance);
    if (d < bestDistance) {
      bestDistance = d;
      best = verb.name;
    }
  }
  return best;
}

static bool isVerb(llvm::StringRef word) {
  for (const Verb &verb : verbs())
    if (word == verb.name)
      return true;
  return false;
}

std::optional<int> prepareArguments(int argc, char **argv,
                                    std::vector<std::string> &arguments,
                                    llvm::raw_ostream &errs) {
  std::vector<std::string> in(argv, argv + argc);
  if (in.size() < 2 || in[1] == "--help" || in[1] == "-help" || in[1] == "-h" ||
      (in[1] == "help" && in.size() == 2)) {
    printTopLevelHelp(llvm::outs());
    return kExitSuccess;
  }
  if (in[1] == "help") { // `dlc help run`: `dlc run --help`
    in.erase(in.begin() + 1);
    in.insert(in.begin() + 2, "--help");
  }
  llvm::StringRef first = in[1];
  bool generic = first == "--version" || first == "-version" ||
                 first == "--help-hidden" || first == "--help-list" ||
                 first == "--help-list-hidden";
  if (!generic && !isVerb(first)) {
    if (first.starts_with("-")) {
      errs << "dlc: error: the verb comes first: dlc VERB MODEL [options] "
              "(see dlc --help)\n";
    } else {
      errs << "dlc: error: unknown verb '" << first << "'";
      if (const char *near = nearestVerb(first))
        errs << "; did you mean '" << near << "'?";
      errs << " (verbs: ";
      llvm::ListSeparator comma;
      for (const Verb &verb : verbs())
        errs << comma << verb.name;
      errs << ")\n";
    }
    return kExitBadInput;
  }
  arguments.clear();
  // llvm::cl's messages and usage lines name the program by argv[0]: "dlc",
  // not the path it was started by.
  arguments.push_back("dlc");
  for (size_t i = 1; i < in.size(); ++i) {
    const std::string &argument = in[i];
    if (argument.empty() || argument[0] != '@') {
      arguments.push_back(argument);
      continue;
    }
    llvm::StringRef previous = arguments.back();
    if (i > 1 && previous.starts_with("-") && previous != "--" &&
        !previous.contains('='))
      arguments.back() += "=" + argument;
    else
      arguments.push_back("./" + argument);
  }
  return std::nullopt;
}

} // namespace dlc
