//===- dlc-opt.cpp - mlir-opt for the dlc dialect -------------------------===//
//
// Runs any registered pass or pipeline on textual IR; the lit tests drive it.
// Only the dialects that are *parsed* need registering.
//
//===----------------------------------------------------------------------===//

#include "ir/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  dlc::registerDlcPassesAndPipelines();
  mlir::DialectRegistry registry;
  registry.insert<dlc::DlcDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dlc optimizer driver\n", registry));
}
