//===- DriverSupport.h - what the dlc verbs share ---------------*- C++ -*-===//
//
// Internal to driver/. Errors without a source location, the entry graph
// and its argument names, and the pipelines more than one verb runs: the
// plan report, the fusion pipeline and the CUDA build.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_DRIVERSUPPORT_H
#define DLC_DRIVER_DRIVERSUPPORT_H

#include "codegen/cuda/CudaBackend.h"
#include "driver/Commands.h"
#include "passes/partition/Partition.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace dlc {

/// An error with no source location (a command-line or file problem).
ExitCode fail(mlir::MLIRContext &context, ExitCode code,
              const llvm::Twine &message);

/// The graph a model file builds: the module's first function.
mlir::func::FuncOp entryGraph(mlir::ModuleOp module);

/// The `dlc.name` of argument (or result) `i` of `func`, else `argI`
/// (`resultI`).
std::string argName(mlir::func::FuncOp func, unsigned i, bool result);

/// Builds the model, runs the dlc-compile pipeline and prints the plan
/// report; `defaultDims` binds unbound dimensions to 1 (and says so).
/// `dlc plan`, and `dlc compile --stats` (Plan.cpp).
ExitCode planAndReport(const CommonOptions &options, bool defaultDims,
                       mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
                       llvm::raw_ostream &os);

/// Runs the graph → kernels passes (buildFusionPipeline) on `module`, with
/// MLIR's pass-manager flags; errors go to the diagnostic handler.
mlir::LogicalResult runFusionPipeline(mlir::ModuleOp module);

/// dlc-tile for `arch` on every function: the CUDA schedules.
mlir::LogicalResult runCudaTile(mlir::ModuleOp module, const std::string &arch);

/// `graph`'s train block differentiated (dlc-differentiate): the train step,
/// or with `gradientsOnly` the loss and the parameters' gradients. The
/// module must have been built with `buildTraining`; every other function
/// is erased. An error at the graph when it has no train block.
mlir::FailureOr<mlir::func::FuncOp>
trainingFunction(mlir::ModuleOp module, mlir::func::FuncOp graph,
                 bool gradientsOnly);

/// Builds the CUDA module of a planned `func`: sources for the newest of
/// `archs` (NVRTC compiles them for each), plus the cuda-emu object when
/// `emulation`.
mlir::FailureOr<codegen::CudaModule>
buildCuda(mlir::MLIRContext &context, mlir::ModuleOp module,
          mlir::func::FuncOp func, const std::vector<std::string> &archs,
          bool emulation, ExitCode &code);

/// `--mesh`/`--parallel` as the partitioner's options (mesh and preset);
/// a bad one is reported, exit 2.
ExitCode parseMeshOptions(mlir::MLIRContext &context, const MeshOptions &options,
                          PartitionOptions &out);

/// Partitions `func` for `--mesh`/`--parallel` (passes/partition), and sets
/// `mesh` (when given) to the parsed mesh; errors (a bad mesh or preset, an
/// op without a rule) are reported, exit 2. With `localArguments`, split
/// arguments are given as each rank's block; with `splitParameterState`
/// too, the parameters the tensor preset splits stay split between steps
/// (PartitionOptions).
ExitCode partitionForMesh(mlir::MLIRContext &context, mlir::func::FuncOp func,
                          const MeshOptions &options, Mesh *mesh = nullptr,
                          bool localArguments = false, bool splitParameterState = false);

} // namespace dlc

#endif // DLC_DRIVER_DRIVERSUPPORT_H
