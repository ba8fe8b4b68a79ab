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
def Dlc_Element : AnyTypeOf<[F64, F32, F16, BF16, I64, I32, I1]>;

def Dlc_Tensor : RankedTensorOf<[F64, F32, F16, BF16, I64, I32, I1]>;
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

//===----------------------------------------------------------------------===//
// Op base classes
//===----------------------------------------------------------------------===//

class Dlc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dlc_Dialect, mnemonic, traits> {
  // Whether a .dlg file may call the op by its mnemonic. The format's op
  // vocabulary is generated from the ops that may (tools/dlc-tblgen); an op
  // that the format writes another way (parameters, numbers) or that only
  // the compiler creates (fusion regions) says 0.
  bit dlgCallable = 1;
}

#endif // DLC_IR_DLCBASE_TD
