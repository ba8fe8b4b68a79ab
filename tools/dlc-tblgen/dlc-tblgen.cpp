//===- dlc-tblgen.cpp - TableGen backends of the dlc project --------------===//
//
// Reads the dialect's ODS files, as mlir-tblgen does, and emits what the
// project generates from them beyond MLIR's own backends: for now the op
// vocabulary of the .dlg format (-gen-dlg-vocabulary).
//
//===----------------------------------------------------------------------===//

#include "tools/dlc-tblgen/Backends.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/TableGen/Main.h"
#include "llvm/TableGen/Record.h"

namespace {
enum class Action { GenDlgVocabulary };

llvm::cl::opt<Action> action(
    llvm::cl::desc("Action to perform:"),
    llvm::cl::values(clEnumValN(Action::GenDlgVocabulary,
                                "gen-dlg-vocabulary",
                                "The ops a .dlg file may call")));
llvm::cl::opt<std::string>
    dialect("dialect", llvm::cl::desc("The dialect whose ops to read"),
            llvm::cl::init("dlc"));
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv);
  return llvm::TableGenMain(
      argv[0], [](llvm::raw_ostream &os, llvm::RecordKeeper &records) {
        switch (action) {
        case Action::GenDlgVocabulary:
          return dlc::tblgen::emitDlgVocabulary(records, dialect, os);
        }
        return true;
      });
}
