//===- DlcBase.td - the dlc dialect, its types and attributes -*- tablegen -*-===//
//
// The dialect definition and the pieces every op definition shares: element
// type constraints, enum attributes and the op base classes.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_IR_DLCBASE_TD
#define DLC_IR_DLCBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "ir/DlcInterfaces.td"

def Dlc_Dialect : Dialect {
  let name = "dlc";
  let cppNamespace = "::dlc";
  let summary = "A dataflow graph of tensor operations, from model to kernels.";
  let description = [{
    The `dlc` dialect holds a deep-learning model at every stage of the
    compiler, from the graph a frontend builds to the plan the runtime runs.

    **A graph** is a `func.func` whose arguments are the model's inputs and
    whose results are its outputs (each carries its user-facing name in a
    `dlc.name` argument/result attribute). Its body is a straight-line list of
    `dlc` ops on ranked, statically shaped tensors of `f64`, `f32`, `f16`,
    `bf16`, `i64`, `i32` or `i1`. Symbolic dimensions of the source program
    (`f32[N, 784]`) are bound before the graph is built, so every shape in the
    IR is static. Parameters are `dlc.param` ops: a name, a type and an
    initialiser (a seeded random distribution or a weight file); they have no
    operands and are defined once per graph.

    **Invariants that hold for a graph**, checked by the op verifiers:
    * every op's result type is the one its shape-inference rule computes
      from its operands and attributes (ops implement
      `InferTypeOpInterface`, except `reshape` and `broadcast_to` whose result
      type is the spec and is checked for consistency);
    * operands that combine element-wise share an element type (no implicit
      promotion; `dlc.cast` converts), and their shapes broadcast by NumPy's
      rules;
    * axes are in `[-rank, rank)`; negative axes count from the end.

    Every op carries the location of the source construct it came from: a
    `file:line:col` of the `.dlg` file or the name of the ONNX node, so that
    an error found by any later stage points at the user's program.

    Later stages add structure to the same dialect rather than new
    languages: fusion regions (one region = one kernel), schedules and buffer
    offsets as attributes, and shardings over a named device mesh.
  }];
  let useDefaultAttributePrinterParser = 1;
  // Inherent attributes live in the attribute dictionary, so that the
  // frontends can run an op's shape inference on a plain DictionaryAttr
  // before creating it (and report a failure as a diagnostic, not a crash).
  let usePropertiesForAttributes = 0;
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Element types and tensor constraints
//===----------------------------------------------------------------------===//

def Dlc_FloatElement : AnyTypeOf<[F64, F32, F16, BF16]>;
def Dlc_IntElement : AnyTypeOf<[I64, I32]>;
// i8 and u8 hold data as it comes (images, quantised values): they are
// moved, selected and cast, not computed with.
def Dlc_Element : AnyTypeOf<[F64, F32, F16, BF16, I64, I32, I8, UI8, I1]>;

def Dlc_Tensor : RankedTensorOf<[F64, F32, F16, BF16, I64, I32, I8, UI8, I1]>;
def Dlc_FloatTensor : RankedTensorOf<[F64, F32, F16, BF16]>;
def Dlc_NumericTensor : RankedTensorOf<[F64, F32, F16, BF16, I64, I32]>;
def Dlc_IndexTensor : RankedTensorOf<[I64, I32]>;
def Dlc_BoolTensor : RankedTensorOf<[I1]>;

//===----------------------------------------------------------------------===//
// Enum attributes
//===----------------------------------------------------------------------===//

def Dlc_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "element-wise comparison", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::dlc";
  let genSpecializedAttr = 0;
}
def Dlc_ComparePredicateAttr
    : EnumAttr<Dlc_Dialect, Dlc_ComparePredicate, "predicate">;

def Dlc_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how gelu computes the Gaussian CDF", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::dlc";
  let genSpecializedAttr = 0;
}
def Dlc_GeluApproximationAttr
    : EnumAttr<Dlc_Dialect, Dlc_GeluApproximation, "approximation">;

def Dlc_LossReduction : I32EnumAttr<"LossReduction",
    "how a loss combines its per-example values", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"mean", 1>,
      I32EnumAttrCase<"sum", 2>]> {
  let cppNamespace = "::dlc";
  let genSpecializedAttr = 0;
}
def Dlc_LossReductionAttr
    : EnumAttr<Dlc_Dialect, Dlc_LossReduction, "reduction">;

def Dlc_CollectiveReduction : I32EnumAttr<"CollectiveReduction",
    "how a collective combines the ranks' values", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"min", 2>, I32EnumAttrCase<"avg", 3>]> {
  let cppNamespace = "::dlc";
  let genSpecializedAttr = 0;
}
def Dlc_CollectiveReductionAttr
    : EnumAttr<Dlc_Dialect, Dlc_CollectiveReduction, "collective_reduction">;

//===----------------------------------------------------------------------===//
// Kernel schedules
//===----------------------------------------------------------------------===//

def Dlc_KernelStrategy : I32EnumAttr<"KernelStrategy",
    "the template a CUDA kernel is generated from", [
      I32EnumAttrCase<"elementwise", 0>, I32EnumAttrCase<"matmul", 1>,
      I32EnumAttrCase<"rows", 2>, I32EnumAttrCase<"warp_rows", 3>]> {
  let cppNamespace = "::dlc";
  let genSpecializedAttr = 0;
}

def Dlc_KernelImpl : I32EnumAttr<"KernelImpl",
    "whether a kernel is generated or a library call", [
      I32EnumAttrCase<"generated", 0>, I32EnumAttrCase<"library", 1>]> {
  let cppNamespace = "::dlc";
  let genSpecializedAttr = 0;
}

def Dlc_ContractionPrecision : I32EnumAttr<"ContractionPrecision",
    "the arithmetic of a contraction's products on f32 operands", [
      I32EnumAttrCase<"exact", 0>, I32EnumAttrCase<"tensorfloat32", 1>]> {
  let cppNamespace = "::dlc";
  let genSpecializedAttr = 0;
}
def Dlc_ContractionPrecisionAttr
    : EnumAttr<Dlc_Dialect, Dlc_ContractionPrecision, "precision">;

def Dlc_ScheduleAttr : AttrDef<Dlc_Dialect, "Schedule"> {
  let mnemonic = "schedule";
  let summary = "How one kernel runs on one CUDA architecture.";
  let description = [{
    Set by `dlc-tile` on every kernel of a planned graph (a `dlc.fusion`
    region or a lone op) as its `dlc.schedule` attribute; the CUDA code
    generator reads it and decides nothing itself. `strategy` names the
    kernel template; `block` and `grid` are the launch dimensions;
    `vector` the elements per thread and iteration of an element-wise
    kernel; `smem` static shared memory in bytes; `registers` and
    `blocks_per_sm` the occupancy estimate; `flops`, `bytes`, `bound` and
    `estimate_ns` the roofline estimate; `reason` says why. A `matmul`
    schedule has its block `tile` (BM, BN, BK) and either a `thread_tile`
    (TM, TN: SIMT FMAs, each thread a TM x TN register tile) or, on tensor
    cores, the `mma` instruction (`m16n8k8.tf32`, `m16n8k16.bf16`,
    `m16n8k16.f16`: PTX `mma.sync` with f32 accumulation) and the
    `warp_tile` (WM, WN) each warp computes with it; `staging` says where
    operands are staged (`shared`); `split_k` (a SIMT matmul with few
    tiles and a long K) gives each tile that many blocks, each a slice of
    K, the tile's last block combining their partial sums in slice order.
    `rows` gives each block a row at a
    time; `warp_rows` gives each warp of the block its own row (short rows
    of softmax, norms and reductions: shuffles, no block barriers).

    ```mlir
    dlc.matmul %a, %b {dlc.schedule = #dlc.schedule<arch = "sm_90",
        strategy = matmul, implementation = generated, block = array<i64: 256, 1, 1>,
        grid = array<i64: 1, 1, 1>, vector = 1, smem = 8192, registers = 102,
        blocks_per_sm = 2, flops = 2097152, bytes = 196608, bound = "memory",
        estimate_ns = 59, reason = "tiled GEMM", tile = array<i64: 128, 128, 8>,
        thread_tile = array<i64: 8, 8>, staging = "shared">} : ...
    ```
  }];
  let parameters = (ins
    StringRefParameter<"CUDA architecture (sm_XY)">:$arch,
    EnumParameter<Dlc_KernelStrategy>:$strategy,
    EnumParameter<Dlc_KernelImpl>:$implementation,
    "::mlir::DenseI64ArrayAttr":$block,
    "::mlir::DenseI64ArrayAttr":$grid,
    "int64_t":$vector,
    "int64_t":$smem,
    "int64_t":$registers,
    "int64_t":$blocks_per_sm,
    "int64_t":$flops,
    "int64_t":$bytes,
    StringRefParameter<"compute or memory">:$bound,
    "int64_t":$estimate_ns,
    StringRefParameter<"why this schedule">:$reason,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$tile,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$thread_tile,
    StringRefParameter<"where operands are staged", "\"\"">:$staging,
    StringRefParameter<"the tensor-core instruction (mma.sync shape.type)", "\"\"">:$mma,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$warp_tile,
    DefaultValuedParameter<"int64_t", "1", "slices of K (split-K)">:$split_k
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Op base classes
//===----------------------------------------------------------------------===//

// Every op says what it is to the passes (DlcInterfaces.td): its definition
// must give a role trait, a FLOP count and its derivative (a rule, or a
// trait saying there is none), or it does not compile.
class Dlc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dlc_Dialect, mnemonic,
         !listconcat(traits, [Dlc_KernelOpInterface, Dlc_CostOpInterface,
                              Dlc_DifferentiableOpInterface])> {
  // Whether a .dlg file may call the op by its mnemonic. The format's op
  // vocabulary is generated from the ops that may (tools/dlc-tblgen); an op
  // that the format writes another way (parameters, numbers) or that only
  // the compiler creates (fusion regions) says 0.
  bit dlgCallable = 1;
}

#endif // DLC_IR_DLCBASE_TD
