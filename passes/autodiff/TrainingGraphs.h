//===- TrainingGraphs.h - the functions training compiles -------*- C++ -*-===//
//
// Beside the train step (dlc-differentiate), `dlc train` compiles an
// evaluation function from the same loss graph, and both read the model's
// parameters as state (docs/design/2026-11-25-training.md §3). These build
// them.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_AUTODIFF_TRAININGGRAPHS_H
#define DLC_PASSES_AUTODIFF_TRAININGGRAPHS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace dlc {

/// A state argument: its value inside the function, and its name.
struct StateArgument {
  mlir::BlockArgument arg;
  std::string name;
};

/// Replaces every float `dlc.param` of `func` by an argument appended to its
/// arguments, marked `dlc.state = <name>` and `dlc.init = <initialiser>`;
/// returns them in program order.
llvm::SmallVector<StateArgument> paramsToState(mlir::func::FuncOp func);

/// A copy of the loss graph `loss` named `<graph>_eval`, without the
/// optimizer, whose parameters are (read-only) state starting at zero (the
/// training loop loads the train step's values into it), and which returns the
/// loss and, when the loss is a `cross_entropy` over class logits, the
/// number of examples whose label has the largest logit (`correct`, f32).
mlir::func::FuncOp buildEvalGraph(mlir::func::FuncOp loss);

} // namespace dlc

#endif // DLC_PASSES_AUTODIFF_TRAININGGRAPHS_H
