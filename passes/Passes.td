//===- Passes.td - the passes of dlc ------------------------*- tablegen -*-===//
//
// Every pass of the compiler, in pipeline order. Each is runnable alone from
// `dlc-opt --<flag>` and has a lit test named after its flag in test/passes/.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_PASSES_TD
#define DLC_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def DlcFoldConstants : Pass<"dlc-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluates parameter-free subgraphs at compile time.";
  let description = [{
    An op whose operands are all compile-time constants (`dlc.constant`,
    `dlc.iota`, or the results of ops folded before it) is evaluated with
    the oracle's kernels and replaced by a `dlc.constant`. Parameters and
    inputs are never folded. Tensors larger than `max-elements` stay
    computed, so constants do not bloat the module.

    Before:
    ```mlir
    %r = dlc.iota 0 : tensor<4x4xi32>
    %c = dlc.iota 1 : tensor<4x4xi32>
    %m = dlc.compare ge, %r, %c : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
    ```
    After:
    ```mlir
    %m = dlc.constant dense<[[true, false, false, false], ...]> : tensor<4x4xi1>
    ```
  }];
  let dependentDialects = ["::dlc::DlcDialect"];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1 << 20",
           "Largest constant (in elements) the pass creates">,
  ];
}

def DlcFuse : Pass<"dlc-fuse", "mlir::func::FuncOp"> {
  let summary = "Groups ops into dlc.fusion regions, one region per kernel.";
  let description = [{
    Forms fusion regions from (a) element-wise and broadcast chains, (b)
    reductions with their element-wise prologue and epilogue (softmax,
    log_softmax, layer_norm and rms_norm each become one kernel), (c)
    matmul and conv2d with their epilogue (bias, activation, residual add,
    scale), and (d) the attention pattern (matmul, scale, mask, softmax,
    matmul). Regions never form cycles and never duplicate expensive
    producers; a value needed both inside and outside becomes an extra
    result of its region.

    Before:
    ```mlir
    %0 = dlc.add %x, %b : (tensor<4x128xf32>, tensor<128xf32>) -> tensor<4x128xf32>
    %1 = dlc.relu %0 : tensor<4x128xf32>
    ```
    After:
    ```mlir
    %1 = dlc.fusion %x, %b {kind = "elementwise"} : (tensor<4x128xf32>, tensor<128xf32>) -> tensor<4x128xf32> {
    ^bb0(%a: tensor<4x128xf32>, %c: tensor<128xf32>):
      %0 = dlc.add %a, %c : (tensor<4x128xf32>, tensor<128xf32>) -> tensor<4x128xf32>
      %r = dlc.relu %0 : tensor<4x128xf32>
      dlc.yield %r : tensor<4x128xf32>
    }
    ```
  }];
  let dependentDialects = ["::dlc::DlcDialect"];
}

def DlcSchedule : Pass<"dlc-schedule", "mlir::func::FuncOp"> {
  let summary = "Orders the graph's kernels to minimise peak memory.";
  let description = [{
    Reorders the top-level ops of a graph into a topological order chosen
    by memory-aware list scheduling (not the program order), so that the
    largest sum of live intermediate bytes at any step is as small as the
    heuristic can make it.
  }];
  let dependentDialects = ["::dlc::DlcDialect"];
}

def DlcPlanMemory : Pass<"dlc-plan-memory", "mlir::func::FuncOp"> {
  let summary = "Assigns every intermediate tensor an offset in one arena.";
  let description = [{
    Computes liveness over the current op order and packs every
    intermediate buffer into one arena (256-byte aligned offsets), reusing
    an element-wise kernel's dying input in place. Several packers run
    (TFLite's greedy-by-size and better ones) and the smallest arena wins.
    Offsets and the arena size are recorded as attributes that
    `dlc-verify-memory-plan` checks.
  }];
  let dependentDialects = ["::dlc::DlcDialect"];
}

def DlcVerifyMemoryPlan : Pass<"dlc-verify-memory-plan", "mlir::func::FuncOp"> {
  let summary = "Proves a memory plan: no two live buffers overlap.";
  let description = [{
    Recomputes liveness from the IR and checks that the buffers live at the
    same step occupy disjoint byte ranges of the arena (in-place reuse
    only where the plan says so and the op allows it), that every offset is
    aligned and inside the arena. Fails with the two conflicting values
    named at their locations.
  }];
}

#endif // DLC_PASSES_PASSES_TD
