//===- Passes.h - the passes of dlc -----------------------------*- C++ -*-===//

#ifndef DLC_PASSES_PASSES_H
#define DLC_PASSES_PASSES_H

#include "ir/DlcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace dlc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// The `--precision` mode `op`'s module records (`dlc.precision`, set by the
/// driver): "tf32", "bf16", "f16", or "f32" when absent.
llvm::StringRef modulePrecision(mlir::Operation *op);

/// The graph → kernels half of the compile pipeline, on a func.func pass
/// manager: canonicalise, fold constants, CSE, fuse. `dlc run --stage=fused`
/// evaluates its output.
void buildFusionPipeline(mlir::OpPassManager &graph);

/// The graph → planned-kernels pipeline that `dlc compile` runs: canonicalise,
/// fold constants, CSE, fuse, schedule, plan memory, verify the plan. With a
/// positive `memoryBudget` (bytes), dlc-rematerialize runs on train steps
/// between CSE and fusion. `cpuLayout`: for the CPU, dlc-cpu-layout (and
/// CSE again) before fusion.
void buildCompilePipeline(mlir::OpPassManager &pm, int64_t memoryBudget = 0,
                          bool cpuLayout = false);

/// Registers every dlc pass and the `dlc-compile` pipeline with the global
/// registry (for dlc-opt).
void registerDlcPassesAndPipelines();

} // namespace dlc

#endif // DLC_PASSES_PASSES_H
