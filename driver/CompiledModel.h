//===- CompiledModel.h - a model ready to run on a device -------*- C++ -*-===//
//
// What run, bench, profile and verify start from: a .dlcm loaded, or a
// .dlg/.onnx built (its symbolic dimensions bound by --dim and the given
// inputs' shapes, its parameters by --params) and compiled in memory for
// the device, exactly the module `dlc compile` would write. For a source,
// the planned function stays: its kernel ops are the module's kernels, in
// order (codegen names them dlc_kernel_<index>).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_DRIVER_COMPILEDMODEL_H
#define DLC_DRIVER_COMPILEDMODEL_H

#include "driver/Commands.h"
#include "driver/ModelLoader.h"
#include "driver/ModuleRunner.h"
#include "oracle/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <functional>
#include <map>

namespace dlc {

struct CompiledModel {
  bool isModule = false;
  LoadedModule module;
  /// A source's IR (empty for a .dlcm).
  std::optional<LoadedModel> model;
  /// The planned graph function (null for a .dlcm).
  mlir::func::FuncOp planned;
  /// The parameters' values the module was compiled with.
  ParamStore params;
  std::vector<ModuleTensorInfo> inputs, outputs;
  /// "the module" or "the graph", for messages.
  std::string what() const { return isModule ? "the module" : "the graph"; }
};

/// The op of the module kernel called `name` among `kernels` (kernelsOf the
/// planned function: codegen calls kernel i dlc_kernel_<i>), or null.
mlir::Operation *kernelNamed(llvm::StringRef name, llvm::ArrayRef<mlir::Operation *> kernels);

struct CompileForDevice {
  /// cpu, cuda-emu, cuda[:N].
  std::string device = "cpu";
  /// `--params FILE`.
  std::string params;
  /// Called on the graph function after the fusion pipeline and before the
  /// rest of dlc-compile (scheduling, memory planning): verify adds every
  /// kernel's results to the function's outputs there.
  std::function<mlir::LogicalResult(mlir::func::FuncOp)> afterFusion;
  /// Called on the model as built (its parameters bound), before any pass:
  /// verify keeps the graph as written there, to measure --precision
  /// against f32.
  std::function<void(mlir::ModuleOp)> afterLoad;
};

/// For a compiled module (.dlcm): exit 2 when --dim is given, since its
/// shapes were fixed when it was compiled.
ExitCode refuseDimsForModule(mlir::MLIRContext &context, const CommonOptions &options);

/// A module compiled for a range of one dimension (`dlc compile --dim
/// N=1..64`) runs at the size --dim gives, else the size the given inputs
/// have, else its largest: sets it on `module`. Any other module refuses
/// --dim (refuseDimsForModule).
ExitCode chooseDynamicExtent(mlir::MLIRContext &context, const CommonOptions &options,
                             const std::map<std::string, oracle::Tensor> &given,
                             LoadedModule &module);

/// Loads or compiles `options.modelPath` for `compile.device`; the shapes
/// of `given` bind symbolic dimensions. A .dlcm refuses --dim and --params.
ExitCode compileForDevice(const CommonOptions &options, const CompileForDevice &compile,
                          const std::map<std::string, oracle::Tensor> &given,
                          mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                          CompiledModel &out);

/// The module of a planned `func` (dlc-compile has run on `module`) for
/// `device`, loaded; the parameters' values it was compiled with.
ExitCode buildAndLoad(mlir::MLIRContext &context, mlir::ModuleOp module, mlir::func::FuncOp func,
                      const std::string &device, LoadedModule &loaded, ParamStore &params);

/// The arguments' (or results') names, dtypes and shapes of `func`.
std::vector<ModuleTensorInfo> signatureOf(mlir::func::FuncOp func, bool results);

/// Whether `device` names a CUDA device (cuda, cuda:N, cuda-emu).
bool isCudaDevice(llvm::StringRef device);

/// The progress line's last stage of a compile (Progress.h).
std::string kernelStage(mlir::func::FuncOp planned, bool cuda);

/// The ops fused in a kernel op ("matmul,add,relu"), in order.
std::string fusedOpNames(mlir::Operation *kernel);

} // namespace dlc

#endif // DLC_DRIVER_COMPILEDMODEL_H
