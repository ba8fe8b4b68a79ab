//===- OnnxImporter.h - ONNX models to dlc IR -------------------*- C++ -*-===//
//
// The ONNX frontend: reads a model with Debian's libonnx (protobuf parsing,
// the checker, shape inference), checks the paths of external data files,
// and builds one `func.func` of `dlc` ops. Every op is located at its node
// (`NameLoc(<node name>, <model path>:0:0)`), so that an error anywhere
// later names the node. Opsets 1 to 21 of the default domain (below 7
// upgraded by ONNX's version converter); every error names the file's IR
// version and opset.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_ONNX_ONNXIMPORTER_H
#define DLC_FRONTEND_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class MLIRContext;
}

namespace dlc::onnximport {

struct ImportOptions {
  /// Sizes of the model's named dimensions (`dim_param`), from `--dim`.
  std::map<std::string, int64_t> dims;
  /// Shapes of the inputs the user supplies, by input name: they bind the
  /// named (and unnamed) dimensions of those inputs.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Bind any dimension still unbound to 1 instead of failing (`dlc check`).
  bool defaultUnboundDimsToOne = false;
};

struct ImportResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// Named dimensions and their sizes, in order of first appearance.
  std::vector<std::pair<std::string, int64_t>> dims;
  /// Dimensions bound to 1 because of `defaultUnboundDimsToOne`.
  std::vector<std::string> defaultedDims;
};

/// Imports the model at `path`. Errors are emitted as MLIR diagnostics
/// (naming the node and its op type where there is one); on failure
/// `result.module` is null. A model using ops dlc does not support gets one
/// error listing every such op type with the nodes that use it.
ImportResult importModel(const std::string &path, mlir::MLIRContext &context,
                         const ImportOptions &options);

/// Resolves the `location` of an external data file against `modelDir`.
/// Rejects absolute paths, `..` components, and anything (a symbolic link
/// included) whose real path is outside the model's folder. On success
/// returns true and sets `resolved`; otherwise sets `error`.
bool resolveExternalDataPath(const std::string &modelDir,
                             const std::string &location,
                             std::string &resolved, std::string &error);

/// The op types the importer supports (default domain), sorted.
std::vector<std::string> supportedOpTypes();

} // namespace dlc::onnximport

#endif // DLC_FRONTEND_ONNX_ONNXIMPORTER_H
