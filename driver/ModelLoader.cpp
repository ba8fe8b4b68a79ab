//===- ModelLoader.cpp - a model file to verified dlc IR ------------------===//

#include "driver/ModelLoader.h"

#include "runtime/format/ModuleFormat.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "frontend/onnx/OnnxImporter.h"
#include "frontend/text/Parser.h"
#include "ir/DlcDialect.h"
#include "ir/ParamSpec.h"
#include "support/weights/WeightFiles.h"

#include "mlir/IR/Builders.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace dlc {

/// Modules and the runtime hold tensors of rank up to kMaxRank (the
/// format's limit, DESIGN §4): a higher one is the model's error, reported
/// at the value that has it before any work (not the module writer's, exit
/// 70). False after reporting the first.
static bool withinRankLimit(ModuleOp module) {
  bool tooHigh = false;
  module.walk<mlir::WalkOrder::PreOrder>([&](Operation *op) {
    auto check = [&](Type type, Location loc, const std::string &what) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tooHigh && tensor && tensor.getRank() > int64_t(format::kMaxRank)) {
        mlir::emitError(loc) << what << " has rank " << tensor.getRank()
                             << ", over dlc's limit of " << format::kMaxRank;
        tooHigh = true;
      }
    };
    if (auto graph = dyn_cast<mlir::func::FuncOp>(op))
      for (auto [i, type] : llvm::enumerate(graph.getArgumentTypes()))
        if (auto name = graph.getArgAttrOfType<StringAttr>(i, "dlc.name"))
          check(type, graph.getArgument(i).getLoc(),
                "input " + std::to_string(i) + " ('" + name.str() + "')");
        else
          check(type, graph.getArgument(i).getLoc(), "input " + std::to_string(i));
    for (Value result : op->getResults())
      check(result.getType(), op->getLoc(),
            "the result of '" + op->getName().stripDialect().str() + "'");
  });
  return !tooHigh;
}

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
        << (ext == ".dlcm" ? " (a compiled module: `dlc check`, `run`, `bench` and `profile` read it)"
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

dlg::BuildOptions buildOptionsFor(const CommonOptions &options) {
  dlg::BuildOptions build;
  build.dims = options.dims;
  build.precision = options.precision;
  return build;
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
  if (!options.precision.empty() && options.precision != "f32")
    (*model.built.module)
        ->setAttr("dlc.precision", mlir::StringAttr::get(&context, options.precision));
  model.built.dims = std::move(imported.dims);
  model.built.defaultedDims = std::move(imported.defaultedDims);
  if (failed(mlir::verify(*model.built.module))) {
    mlir::emitError(UnknownLoc::get(&context))
        << "internal error: the IR imported from '" << path
        << "' does not verify";
    failureCode = kExitInternalError;
    return std::nullopt;
  }
  if (!withinRankLimit(*model.built.module)) {
    failureCode = kExitBadInput;
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
  if (!withinRankLimit(*model.built.module)) {
    failureCode = kExitBadInput;
    return std::nullopt;
  }
  return model;
}

// Every parameter of `module` reads its value from
// FILE under its own name (a checkpoint's other tensors, moments and the
// step counter, are ignored). Every parameter must be there with its
// dtype and shape; the error lists each one that is not.
bool bindParameterFile(ModuleOp module, const std::string &path,
                          std::string &error) {
  std::map<std::string, HostTensor> tensors;
  bool read = llvm::StringRef(path).ends_with(".npz")
                  ? weights::readNpz(path, tensors, error)
                  : weights::readSafetensors(path, tensors, error);
  if (!read)
    return false;
  std::vector<std::string> problems;
  module.walk([&](ParamOp p) {
    std::string name = p.getName().str();
    std::string declared = dtypeName(dtypeOf(p.getType().getElementType())) +
                           formatShape(std::vector<int64_t>(p.getType().getShape()));
    auto found = tensors.find(name);
    if (found == tensors.end()) {
      problems.push_back("'" + name + "' (" + declared + ") is missing");
      return;
    }
    std::string held = dtypeName(found->second.dtype()) + formatShape(found->second.shape());
    if (held != declared) {
      problems.push_back("'" + name + "' is " + held + ", the model declares " + declared);
      return;
    }
    OpBuilder b(p);
    p.setInitAttr(b.getDictionaryAttr({b.getNamedAttr("kind", b.getStringAttr("file")),
                                       b.getNamedAttr("path", b.getStringAttr(path)),
                                       b.getNamedAttr("key", b.getStringAttr(name))}));
  });
  if (problems.empty())
    return true;
  error = "the file does not fit the model: ";
  for (auto [i, p] : llvm::enumerate(problems))
    error += (i ? "; " : "") + p;
  return false;
}

} // namespace dlc
