//===- ModelLoader.h - a model file to verified dlc IR ----------*- C++ -*-===//
//
// What every `dlc` verb does first: read the file, parse it, bind its
// dimensions and build the IR, reporting the first error at its source
// location through the context's diagnostic handler.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_MODELLOADER_H
#define DLC_DRIVER_MODELLOADER_H

#include "driver/Commands.h"
#include "driver/ExitCodes.h"
#include "frontend/text/AST.h"
#include "frontend/text/MLIRGen.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"

#include <optional>

namespace dlc {

struct LoadedModel {
  dlg::Module ast;
  dlg::BuildResult built;
};

/// What every verb builds a model with: --dim's sizes and --precision.
dlg::BuildOptions buildOptionsFor(const CommonOptions &options);

/// Parses `path` (a .dlg file). The file is added to `sourceMgr` so that
/// diagnostics show its lines. On failure the error has been reported and
/// the exit code to return is given.
std::optional<dlg::Module> parseModelFile(const std::string &path,
                                          mlir::MLIRContext &context,
                                          llvm::SourceMgr &sourceMgr,
                                          ExitCode &failureCode);

/// Parses and builds `path`; `options.baseDir` is set from the path. An
/// `.onnx` file is imported by the ONNX frontend instead (with the same
/// dimensions and input shapes; its `ast` stays empty).
std::optional<LoadedModel> loadModel(const std::string &path,
                                     mlir::MLIRContext &context,
                                     llvm::SourceMgr &sourceMgr,
                                     dlg::BuildOptions options,
                                     ExitCode &failureCode);

/// `--params FILE` (dlc run, dlc compile): every parameter of `module`
/// takes its value from FILE (.safetensors or .npz: a dlc train checkpoint,
/// or --save-params) under its own name; a checkpoint's other tensors
/// (optimizer moments, the step) are ignored. Every parameter must be there
/// with its dtype and shape: `error` lists each one that is not.
bool bindParameterFile(mlir::ModuleOp module, const std::string &path,
                       std::string &error);

} // namespace dlc

#endif // DLC_DRIVER_MODELLOADER_H
