//===- ModelLoader.cpp - a model file to verified dlc IR ------------------===//

#include "driver/ModelLoader.h"

#include "frontend/onnx/OnnxImporter.h"
#include "frontend/text/Parser.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace dlc {

std::optional<dlg::Module> parseModelFile(const std::string &path,
                                          MLIRContext &context,
                                          llvm::SourceMgr &sourceMgr,
                                          ExitCode &failureCode) {
  failureCode = kExitBadInput;
  StringRef ext = llvm::sys::path::extension(path);
  if (ext == ".onnx") {
    mlir::emitError(UnknownLoc::get(&context))
        << "'" << path << "' is an ONNX model, which has no .dlg AST (use "
        << "--emit=mlir)";
    return std::nullopt;
  }
  if (ext != ".dlg") {
    mlir::emitError(UnknownLoc::get(&context))
        << "cannot read '" << path << "': dlc reads .dlg and .onnx models"
        << (ext == ".dlcm" ? " (a compiled module: only `dlc run` reads it)"
                           : std::string());
    return std::nullopt;
  }
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    mlir::emitError(UnknownLoc::get(&context))
        << "cannot open '" << path << "': " << buffer.getError().message();
    return std::nullopt;
  }
  std::string_view source((*buffer)->getBufferStart(),
                          (*buffer)->getBufferSize());
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  dlg::Diagnostic diagnostic;
  auto fileName = std::make_shared<const std::string>(path);
  std::optional<dlg::Module> module =
      dlg::parseModule(source, fileName, diagnostic);
  if (!module) {
    mlir::emitError(FileLineColLoc::get(&context, path, diagnostic.loc.line,
                                        diagnostic.loc.col))
        << diagnostic.message;
    return std::nullopt;
  }
  if (module->graphs.empty()) {
    mlir::emitError(FileLineColLoc::get(&context, path, 1, 1))
        << "the file defines no graph";
    return std::nullopt;
  }
  return module;
}

/// Imports an ONNX model with the same options as a .dlg build.
static std::optional<LoadedModel> loadOnnxModel(const std::string &path,
                                                MLIRContext &context,
                                                const dlg::BuildOptions &options,
                                                ExitCode &failureCode) {
  onnximport::ImportOptions importOptions;
  importOptions.dims = options.dims;
  importOptions.inputShapes = options.inputShapes;
  importOptions.defaultUnboundDimsToOne = options.defaultUnboundDimsToOne;
  onnximport::ImportResult imported =
      onnximport::importModel(path, context, importOptions);
  if (!imported.module) {
    failureCode = kExitBadInput;
    return std::nullopt;
  }
  LoadedModel model;
  model.built.module = std::move(imported.module);
  model.built.dims = std::move(imported.dims);
  model.built.defaultedDims = std::move(imported.defaultedDims);
  if (failed(mlir::verify(*model.built.module))) {
    mlir::emitError(UnknownLoc::get(&context))
        << "internal error: the IR imported from '" << path
        << "' does not verify";
    failureCode = kExitInternalError;
    return std::nullopt;
  }
  return model;
}

std::optional<LoadedModel> loadModel(const std::string &path,
                                     MLIRContext &context,
                                     llvm::SourceMgr &sourceMgr,
                                     dlg::BuildOptions options,
                                     ExitCode &failureCode) {
  if (llvm::sys::path::extension(path) == ".onnx")
    return loadOnnxModel(path, context, options, failureCode);
  std::optional<dlg::Module> ast =
      parseModelFile(path, context, sourceMgr, failureCode);
  if (!ast)
    return std::nullopt;
  options.baseDir = llvm::sys::path::parent_path(path).str();
  LoadedModel model{std::move(*ast), {}};
  model.built = dlg::buildModule(model.ast, context, options);
  if (!model.built.module) {
    failureCode = kExitBadInput;
    return std::nullopt;
  }
  // What the builder made must verify; if not, dlc has a bug.
  if (failed(mlir::verify(*model.built.module))) {
    mlir::emitError(UnknownLoc::get(&context))
        << "internal error: the IR built from '" << path
        << "' does not verify";
    failureCode = kExitInternalError;
    return std::nullopt;
  }
  return model;
}

} // namespace dlc
