//===- ModelImporter.h - the steps of one ONNX model's import -*- C++ -*-===//
//
// Internal to frontend/onnx. OnnxImporter.cpp runs the steps: parse, bind
// the inputs, import the nodes, build the outputs. ModelChecks.cpp holds
// the checks made before any node is imported: the opset upgrade, external
// data paths, op coverage, attributes and libonnx's checker.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_ONNX_MODELIMPORTER_H
#define DLC_FRONTEND_ONNX_MODELIMPORTER_H

#include "frontend/onnx/NodeImporter.h"
#include "frontend/onnx/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <memory>
#include <string>

namespace dlc::onnximport {

/// The opsets of the default domain dlc imports (below 7 through ONNX's
/// version converter; opset 6 also without it).
constexpr int64_t kMinOpset = 1, kMaxOpset = 21;


/// Imports one model; each step returns failure after emitting an error.
class ModelImporter {
public:
  ModelImporter(mlir::MLIRContext &context, const std::string &path,
                const ImportOptions &options)
      : context(context), path(path), options(options),
        fileLoc(mlir::FileLineColLoc::get(&context, path, 0, 0)) {}

  ImportResult run();

private:
  mlir::LogicalResult parse();
  mlir::LogicalResult upgradeLegacyOpset();
  mlir::LogicalResult checkExternalData();
  mlir::LogicalResult checkSupportedOps();
  mlir::LogicalResult checkAttributes();
  mlir::LogicalResult runChecker();
  /// strides, dilations and kernel_shape at least 1, pads at least 0.
  mlir::LogicalResult checkWindowAttributes();
  mlir::LogicalResult bindInputs(ImportResult &result);
  mlir::LogicalResult importNodes();
  /// Every node output's type against libonnx's shape inference (when
  /// libonnx knows the model's IR version and opset): a disagreement is an
  /// importer bug, reported as one.
  mlir::LogicalResult crossCheckShapes();
  mlir::LogicalResult buildOutputs();

  std::string nodeName(const ::onnx::NodeProto &node, size_t index) const {
    return node.name().empty()
               ? node.op_type() + " #" + std::to_string(index)
               : node.name();
  }

  mlir::MLIRContext &context;
  std::string path;
  const ImportOptions &options;
  mlir::Location fileLoc;
  ::onnx::ModelProto model;
  int64_t opset = 0;
  /// The opset the file declares (before any upgrade).
  int64_t fileOpset = 0;
  /// Whether the opset-6 attributes are read by the importer (the version
  /// converter could not upgrade the model).
  bool legacy = false;
  std::unique_ptr<GraphState> graph;
  mlir::func::FuncOp func;
  llvm::SmallVector<mlir::Type> inputTypes;
  /// runChecker ran libonnx's checker (the model's versions are known to it).
  bool checked = false;
};

} // namespace dlc::onnximport

#endif // DLC_FRONTEND_ONNX_MODELIMPORTER_H
