//===- Passes.td - the passes of dlc ------------------------*- tablegen -*-===//
//
// Every pass of the compiler, in pipeline order. Each is runnable alone from
// `dlc-opt --<flag>` and has a lit test named after its flag in test/passes/.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_PASSES_TD
#define DLC_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def DlcPipelineStages : Pass<"dlc-pipeline-stages", "mlir::func::FuncOp"> {
  let summary = "Gives every op its pipeline stage (`dlc.stage`).";
  let description = [{
    On a loss graph (a function with `dlc.optimizer`, before
    `dlc-differentiate`): cuts its ops that read a value into `stages`
    contiguous runs of program order, balanced by their predicted time, or
    where the model's `@stage` lines put them (passes/partition/Pipeline.h).
    `dlc-differentiate` then gives each op of a vector-Jacobian product its
    forward op's stage. On a train step (after it): every op without a
    stage gets the latest stage among the ops it reads, or -1 (replicated:
    computed by every stage that needs it) when it reads none. Other
    functions are left alone.
  }];
  let options = [
    Option<"stages", "stages", "int64_t", "2", "The number of pipeline stages.">,
  ];
}

def DlcDifferentiate : Pass<"dlc-differentiate", "mlir::func::FuncOp"> {
  let summary = "Turns a loss graph into its train step: forward, backward, update.";
  let description = [{
    A function with a `dlc.optimizer` dictionary (a `.dlg` train block's
    loss graph, frontend/text/TrainGraph.cpp) and one scalar float result,
    the loss, becomes one train step (docs/design/2026-11-25-training.md):
    the forward ops, the gradient of the loss with respect to every float
    parameter by reverse-mode differentiation (each op's rule through
    `DifferentiableOpInterface`; an op without a derivative on the path is
    an error naming it), optional global-norm clipping, and the
    optimizer's update (SGD with momentum and Nesterov, Adam, AdamW, with
    PyTorch's formulas). Parameters become arguments marked `dlc.state`
    (with their initialiser as `dlc.init`), followed by the optimizer's
    moments (`<param>.m`, `<param>.v`, `<param>.momentum`) and the step
    counter `step`; an `lr` argument (f32) carries the step's learning
    rate. The results are the loss and the new value of every state
    argument, in the same order. Other functions are left alone.

    With `gradients-only`, the function instead returns the loss and the
    gradient of every float parameter (`dlc.name = "grad.<param>"`), with
    no update and no state: what `dlc run --gradients` evaluates.

    Before:
    ```mlir
    func.func @f_train(%x: tensor<4x3xf32>, %t: tensor<4x2xf32>) -> tensor<f32>
        attributes {dlc.optimizer = {kind = "sgd", lr = 1.0e-01 : f64}} {
      %w = dlc.param "w" {init = {kind = "he", seed = 1 : i64}} : tensor<3x2xf32>
      %y = dlc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
      %l = dlc.mse %y, %t : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<f32>
      return %l : tensor<f32>
    }
    ```
    After (abridged):
    ```mlir
    func.func @f_train(%x, %t, %lr {dlc.name = "lr"},
        %w {dlc.state = "w", dlc.init = {...}}, %step {dlc.state = "step", ...})
        -> (tensor<f32> {dlc.name = "loss"}, tensor<3x2xf32> {dlc.state = "w"},
            tensor<i64> {dlc.state = "step"}) {
      ... forward ...
      %dw = dlc.matmul %x, %dy {transpose_a = true} ...
      %w2 = dlc.sub %w, (lr * %dw) ...
      return %l, %w2, %step1
    }
    ```
  }];
  let dependentDialects = ["::dlc::DlcDialect"];
  let options = [
    Option<"gradientsOnly", "gradients-only", "bool", /*default=*/"false",
           "Return the parameters' gradients instead of updating them">,
  ];
}

def DlcPrecision : Pass<"dlc-precision", "mlir::func::FuncOp"> {
  let summary = "Runs contractions in reduced precision: tf32, bf16 or f16 (`--precision`).";
  let description = [{
    The per-op policy of mixed precision, read from the ops
    (`Dlc_ReducedPrecision`: matmul and conv2d). Under `tf32`, each such op
    with f32 operands gets `precision = #dlc<precision tensorfloat32>`: its products
    may round the operands to TF32 (tensor cores, f32 accumulation). Under
    `bf16` or `f16`, its f32 operands are cast to that type, the op computes
    in it (f32 accumulation in every kernel) and its result is cast back to
    f32 for its users. Every other op (reductions, softmax, norms, losses,
    the optimizer's update) computes in f32, so a train step keeps f32
    master weights and f32 gradients. `mode` empty reads the enclosing
    module's `dlc.precision` string (the driver's `--precision`); absent or
    `f32`, nothing changes.

    Before (`--dlc-precision=mode=bf16`):
    ```mlir
    %y = dlc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
    ```
    After:
    ```mlir
    %0 = dlc.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
    %1 = dlc.cast %w : tensor<8x2xf32> -> tensor<8x2xbf16>
    %2 = dlc.matmul %0, %1 : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
    %y = dlc.cast %2 : tensor<4x2xbf16> -> tensor<4x2xf32>
    ```
  }];
  let dependentDialects = ["::dlc::DlcDialect"];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"\"",
           "f32, tf32, bf16 or f16; empty: the module's dlc.precision">,
  ];
}

def DlcFoldConstants : Pass<"dlc-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluates parameter-free subgraphs at compile time.";
  let description = [{
    An op whose operands are all compile-time constants (`dlc.constant`,
    `dlc.iota`, or the results of ops folded before it) is evaluated with
    the oracle's kernels and replaced by a `dlc.constant` of the op's type
    (the kernels round to that type once, as at run time, so folding never
    changes a value). Parameters and inputs are never folded; an iota is
    only materialised when an op reading it folds. Results larger than
    `max-elements` stay computed, so constants do not bloat the module, and
    an evaluation that fails (integer division by zero, an index out of
    range) leaves the op for the run to report.

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

def DlcRematerialize : Pass<"dlc-rematerialize", "mlir::ModuleOp"> {
  let summary = "Recomputes saved activations in the backward pass to fit a memory budget.";
  let description = [{
    On every train step (a function with `dlc.train_step`, from
    `dlc-differentiate`), after CSE and before `dlc-fuse`: while the arena
    that the rest of `dlc-compile` would plan (`dlc-fuse`, `dlc-schedule`,
    `dlc-plan-memory`, measured on a copy of the function) exceeds
    `budget` bytes, frees a *saved activation* (a forward value that the
    backward pass reads, passes/analysis/TrainStep.h) by cloning the forward
    ops that compute it just before its first backward reader and giving
    the clone to every backward reader, so that the forward value dies with
    its last forward reader. A clone reads what the backward has anyway:
    inputs, state, constants, and saved activations that stay saved; a
    forward value that is neither is recomputed too, or read where it was
    (then kept alive, which counts against the bytes freed).

    The rule: candidates are tried cheapest first, in three tiers, by the
    most expensive op they recompute: (1) element-wise and layout ops only,
    (2) reductions, normalisations, pooling, data movement and losses as
    well, (3) matmul and conv2d too, which are recomputed only when the
    cheaper tiers cannot meet the budget. Within a tier, by recomputed
    FLOPs per byte freed. A candidate is kept when the measured arena
    shrinks (or, at an equal arena, the largest sum of live bytes or the
    live bytes summed over the steps do); once the budget is met or every
    candidate is tried, the kept ones are undone one by one, latest first,
    where undoing grows neither the arena nor that largest sum. An op two
    recomputations need is cloned once. The clones carry `dlc.recompute`,
    and `dlc-fuse` never puts one in the kernel of the forward op it reads.
    Recomputing runs the same ops on the same operands, so no value
    changes. (The measurements are nested pipelines on the copies: MLIR's
    IR printing shows them.)

    The function records what was done in `dlc.rematerialization`:
    `{budget, arena_before, arena_after, peak_before, peak_after, met,
    values, ops, flops}` (the arenas and the largest sums of live bytes at
    one step, values freed, ops cloned, FLOPs added); a budget that cannot
    be met is a warning giving the smallest arena reached. A budget of 0
    leaves the graph alone.

    Before (`budget=600000`; the derivatives of exp and mul read %a and
    %e, and w2's gradient reads %m: all three are saved):
    ```mlir
    %a = dlc.matmul %x, %w1 : (tensor<1024x16xf32>, tensor<16x64xf32>) -> tensor<1024x64xf32>
    %e = dlc.exp %a : tensor<1024x64xf32>
    %m = dlc.mul %a, %e : (tensor<1024x64xf32>, tensor<1024x64xf32>) -> tensor<1024x64xf32>
    ...
    %dm = dlc.matmul %dy, %w2 {transpose_b = true} : ...
    %da = dlc.mul %dm, %e : (tensor<1024x64xf32>, tensor<1024x64xf32>) -> tensor<1024x64xf32>
    ```
    After (%a stays saved; %e now dies in the forward pass, and fusion
    computes %e2 inside the kernel that reads it):
    ```mlir
    %dm = dlc.matmul %dy, %w2 {transpose_b = true} : ...
    %e2 = dlc.exp %a {dlc.recompute} : tensor<1024x64xf32>
    %da = dlc.mul %dm, %e2 : (tensor<1024x64xf32>, tensor<1024x64xf32>) -> tensor<1024x64xf32>
    ```
  }];
  let dependentDialects = ["::dlc::DlcDialect"];
  let options = [
    Option<"budget", "budget", "int64_t", /*default=*/"0",
           "The arena to fit in, in bytes (0: leave the graph alone)">,
  ];
}

def DlcCpuLayout : Pass<"dlc-cpu-layout", "mlir::func::FuncOp"> {
  let summary = "Channels-last convolutions for the CPU, their transposes cancelled.";
  let description = [{
    The CPU's convolution kernels (oneDNN's brgconv on AVX-512) want NHWC
    activations. Each f32 convolution the CPU runs on oneDNN (one group,
    weights a `dlc.param` or `dlc.constant`, so a module weight, and at
    least 4 MFLOP an image) becomes a `channels_last` one between two
    transposes; transposes then move below the element-wise ops that read
    them (relu, a residual add: each operand transposed alike, or a scalar)
    and cancel against the next convolution's, so a chain of convolutions
    keeps NHWC and pays for a layout change only at its ends (a pooling,
    the head). Inference only: a train step's parameters are state, never
    weights. `DLC_CPU_CONV=gemm` (the code generator's switch) leaves the
    graph as it is.

    Before:
    ```mlir
    %c = dlc.conv2d %x, %w {...} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
    %r = dlc.relu %c : tensor<1x64x56x56xf32> -> tensor<1x64x56x56xf32>
    ```
    After:
    ```mlir
    %t = dlc.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x64x56x56xf32> -> tensor<1x56x56x64xf32>
    %c = dlc.conv2d %t, %w {channels_last, ...} : (tensor<1x56x56x64xf32>, tensor<64x64x3x3xf32>) -> tensor<1x56x56x64xf32>
    %r = dlc.relu %c : tensor<1x56x56x64xf32> -> tensor<1x56x56x64xf32>
    %y = dlc.transpose %r {perm = array<i64: 0, 3, 1, 2>} : tensor<1x56x56x64xf32> -> tensor<1x64x56x56xf32>
    ```
  }];
}

def DlcFuse : Pass<"dlc-fuse", "mlir::func::FuncOp"> {
  let summary = "Groups ops into dlc.fusion regions, one region per kernel.";
  let description = [{
    Every op of the graph but `dlc.param`, `dlc.constant` and the return
    ends up in exactly one `dlc.fusion` (a lone op is a one-op region), so
    the regions are the kernels. Regions are formed from (a) element-wise
    chains of one shape, (b) reductions and normalisations over one set of
    rows with their element-wise prologue and epilogue (softmax,
    log_softmax, layer_norm, rms_norm, and their decomposed forms, each
    become one kernel), (c) matmul and conv2d with their epilogue (bias,
    activation, residual add, scale), (d) attention (matmul, scale,
    mask, softmax over the last axis, matmul) when the score matrix is not
    needed outside, and (e) a conv2d, its epilogue and the pooling of its
    activations when those are not needed outside (inference: a train step
    keeps them for the backward pass). `kind` is `elementwise`, `reduction`,
    `contraction`, `convolution`, `attention` or `data_movement`.

    Legality (passes/fusion/Legality.h): one expensive anchor per region
    (matmul, conv2d, pooling; two matmuls only in attention, a conv2d and a
    pooling only in (e)); nothing is
    recomputed (no element-wise prologue into a matmul or conv, no
    element-wise op of another shape); a reduced value meets a full one only
    broadcast along its own rows; reshape, transpose and broadcast_to join a
    region only as a remapping of its loads or stores. Regions never form
    cycles and never duplicate an op; a value needed both inside and
    outside becomes an extra result of its region. Merges are tried in a
    fixed order (attention, contraction epilogues, row kernels, the rest),
    each in program order, so the output is deterministic.

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
    Reorders the kernels of a graph (its top-level ops but parameters,
    constants and the return: every op before fusion, the `dlc.fusion`
    regions after) into a topological order chosen by memory-aware list
    scheduling. Three heuristics repeatedly run, of the kernels whose
    inputs are ready, the one that leaves the fewest live bytes after it
    (or while it runs, or that continues the branch just computed); a
    fourth builds the order backward from the outputs. The order whose
    peak of live arena bytes (as `dlc-plan-memory` counts them, in-place
    reuse included) is smallest wins, the program order on ties.
    Parameters and constants move to just before their first reader.

    Before (both large intermediates live at once):
    ```mlir
    %a = dlc.exp %x : tensor<1024x1024xf32>
    %b = dlc.tanh %x : tensor<1024x1024xf32>
    %sa = dlc.reduce_sum %a {axes = array<i64: 0, 1>} : tensor<1024x1024xf32> -> tensor<f32>
    %sb = dlc.reduce_sum %b {axes = array<i64: 0, 1>} : tensor<1024x1024xf32> -> tensor<f32>
    ```
    After (one at a time):
    ```mlir
    %a = dlc.exp %x : tensor<1024x1024xf32>
    %sa = dlc.reduce_sum %a {axes = array<i64: 0, 1>} : tensor<1024x1024xf32> -> tensor<f32>
    %b = dlc.tanh %x : tensor<1024x1024xf32>
    %sb = dlc.reduce_sum %b {axes = array<i64: 0, 1>} : tensor<1024x1024xf32> -> tensor<f32>
    ```
  }];
  let dependentDialects = ["::dlc::DlcDialect"];
}

def DlcPlanMemory : Pass<"dlc-plan-memory", "mlir::func::FuncOp"> {
  let summary = "Assigns every intermediate tensor an offset in one arena.";
  let description = [{
    Computes liveness over the current kernel order (a kernel result lives
    from its kernel to its last reader; graph outputs to the end) and packs
    every kernel result into one arena at 256-byte aligned offsets.
    Parameters, constants and graph inputs are not in the arena. An
    element-wise kernel writes its result over an operand that dies there
    when both have the same element count and byte size (in place). The
    `best` packer keeps the smallest arena of TFLite's greedy-by-size,
    other orders and gap rules, a local search and, for at most
    `exact-limit` buffers, an exact branch and bound.

    Records `dlc.offsets` (one per result) and, where a result reuses an
    operand, `dlc.inplace` (the operand index per result, -1 for none) on
    each kernel, and `dlc.arena_size`, `dlc.peak_live_bytes` (the largest
    sum of live bytes at one step: no arena is smaller) and `dlc.packer` on
    the function; `dlc-verify-memory-plan` checks them.

    Before:
    ```mlir
    %0 = dlc.matmul %x, %w : (tensor<64x784xf32>, tensor<784x128xf32>) -> tensor<64x128xf32>
    %1 = dlc.relu %0 : tensor<64x128xf32>
    ```
    After:
    ```mlir
    func.func @f(...) attributes {dlc.arena_size = 32768 : i64, dlc.packer = "greedy-by-size",
                                  dlc.peak_live_bytes = 32768 : i64} {
      %0 = dlc.matmul %x, %w {dlc.offsets = array<i64: 0>} : ...
      %1 = dlc.relu %0 {dlc.inplace = array<i64: 0>, dlc.offsets = array<i64: 0>} : tensor<64x128xf32>
    ```
  }];
  let dependentDialects = ["::dlc::DlcDialect"];
  let options = [
    Option<"packer", "packer", "std::string", /*default=*/"\"best\"",
           "Which packer places the buffers: best (the smallest of all) or "
           "greedy-by-size (TFLite's, the baseline)">,
    Option<"inPlace", "in-place", "bool", /*default=*/"true",
           "Let element-wise kernels write over an operand that dies there">,
    Option<"exactLimit", "exact-limit", "unsigned", /*default=*/"12",
           "Largest number of allocations packed by exact search as well">,
    Option<"localSearch", "local-search", "unsigned", /*default=*/"200",
           "Perturbations of the best heuristic order that are tried">,
  ];
}

def DlcVerifyMemoryPlan : Pass<"dlc-verify-memory-plan", "mlir::func::FuncOp"> {
  let summary = "Proves a memory plan: no two live buffers overlap.";
  let description = [{
    Recomputes liveness from the IR as it is (not from the planner) and
    checks that every kernel result has an offset that is 256-byte aligned
    with its bytes inside `dlc.arena_size`; that every `dlc.inplace` reuse
    is one the op allows, of an operand buffer read for the last time by
    that kernel, not returned, given to one result, at the same offset; that
    any two buffers live at a common step occupy disjoint byte ranges
    unless they are such a pair; and that `dlc.peak_live_bytes` is the
    recomputed peak. Each failure is an error at the kernel's location; an
    overlap names both values, with a note at the other's location:

    ```
    error: 'dlc.tanh' op buffer of %1 (dlc.tanh) at [0, 4096) overlaps the
           buffer of %0 (dlc.exp) at [0, 4096) while both are live at step 1
    note: %0 (dlc.exp) is defined here
    ```
  }];
}

def DlcTile : Pass<"dlc-tile", "mlir::func::FuncOp"> {
  let summary = "Chooses each kernel's CUDA schedule: strategy, tiles, threads, grid.";
  let description = [{
    For each kernel (a `dlc.fusion` region or a lone op) and a CUDA target
    (`cuda:sm_80`, `cuda:sm_90`), records in a `dlc.schedule` dictionary
    what the CUDA code generator does and nothing else decides: the
    strategy (`elementwise`: a grid-stride loop over the result elements;
    `matmul`: a shared-memory tiled GEMM with the kernel's epilogue fused;
    `rows`: one block per row of the kernel's parallel split, its threads
    cooperating through warp shuffles and shared memory), library call or
    generated code, the block tile and thread tile of a GEMM, threads per
    block, elements per thread (vector width), shared-memory staging and
    the grid. The rules are a small cost model: FLOPs and bytes of the
    kernel against the architecture's peak rates, and occupancy from
    estimated registers and shared memory per block. Other targets are
    left alone.

    Before:
    ```mlir
    %1 = dlc.fusion %x, %w, %b {kind = "contraction"} : ... -> tensor<128x768xf32> {...}
    ```
    After (`--dlc-tile=target=cuda:sm_90`):
    ```mlir
    %1 = dlc.fusion %x, %w, %b {dlc.schedule = {arch = "sm_90", block = array<i64: 256, 1, 1>,
        grid = array<i64: 12, 2, 1>, impl = "generated", smem = 8192 : i64,
        strategy = "matmul", tile = array<i64: 64, 64, 16>, ...}, kind = "contraction"} ...
    ```
  }];
  let dependentDialects = ["::dlc::DlcDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cuda:sm_90\"",
           "The target the schedules are for: cuda:sm_80, cuda:sm_90 or cpu">,
    Option<"allowLibrary", "allow-library", "bool", /*default=*/"true",
           "Run GEMMs whose epilogue cuBLASLt applies itself as library calls "
           "(passes/LibraryGemm.h; the generated kernel stays their fallback)">,
  ];
}

#endif // DLC_PASSES_PASSES_TD
