//===- MLIRGen.h - builds dlc IR from a .dlg AST ----------------*- C++ -*-===//
//
// The graph builder: binds symbolic dimensions, resolves names, checks each
// call against the op vocabulary (arity, keywords, attribute kinds), and
// creates `dlc` ops whose shape inference reports any shape error at the
// `file:line:col` of the call. Weight files named by `load(...)` are opened
// here and their dtype and shape checked against the declaration, so a model
// that builds will load.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_TEXT_MLIRGEN_H
#define DLC_FRONTEND_TEXT_MLIRGEN_H

#include "frontend/text/AST.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
}

namespace dlc::dlg {

struct BuildOptions {
  /// Sizes of symbolic dimensions (`--dim N=64`).
  std::map<std::string, int64_t> dims;
  /// Shapes of inputs the user supplies, by input name: they bind the
  /// symbolic dimensions of those inputs' declared types.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Bind any dimension still unbound to 1 instead of failing (`dlc check`
  /// reports sizes per unit of such dimensions); the names bound this way
  /// are returned in `BuildResult::defaultedDims`.
  bool defaultUnboundDimsToOne = false;
  /// Folder that relative weight paths in `load(...)` are resolved against
  /// (the folder of the .dlg file).
  std::string baseDir;
  /// Also build each train block's loss graph, `@<graph>_train`
  /// (docs/design/2026-11-25-training.md §1), after the graphs.
  bool buildTraining = false;
  /// `--precision` (tf32, bf16, f16): recorded on the module as its
  /// `dlc.precision` string, which dlc-precision reads; empty or f32: none.
  std::string precision;
};

struct BuildResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// Symbolic dimensions and their sizes, in order of first appearance.
  std::vector<std::pair<std::string, int64_t>> dims;
  /// Dimensions bound to 1 because of `defaultUnboundDimsToOne`.
  std::vector<std::string> defaultedDims;
};

/// Builds every graph of `module` as a `func.func` (the first is the entry
/// point), and with `buildTraining` each train block's loss graph. Errors are emitted as MLIR diagnostics at the source location;
/// on failure `result.module` is null.
BuildResult buildModule(const Module &module, mlir::MLIRContext &context,
                        const BuildOptions &options);

/// Registers the dialects the builder creates ops of.
void loadBuilderDialects(mlir::MLIRContext &context);

} // namespace dlc::dlg

#endif // DLC_FRONTEND_TEXT_MLIRGEN_H
