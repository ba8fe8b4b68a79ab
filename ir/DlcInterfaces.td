//===- DlcInterfaces.td - what passes ask of a dlc op -------*- tablegen -*-===//
//
// The facts a pass or a code generator needs about an op, declared once, in
// the op's ODS definition, and answered by the op. No pass keeps its own
// list of op types.
//
// Every dlc op implements KernelOpInterface and CostOpInterface: `Dlc_Op`
// (DlcBase.td) adds both to every op, and neither has a default for the
// facts that differ between ops (the role, the FLOPs), so an op whose
// definition does not say what it is does not compile. The answers come
// from the traits below (a role trait, a FLOP-count trait) or from C++ in
// the op family's file (`ir/<Family>Ops.cpp`), beside the op's shape rule.
//
// A new rule set (derivatives, sharding) is one more interface here, with
// its per-op answers again in `ir/<Family>Ops.cpp`: one place per op family
// holds every rule of its ops.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_IR_DLCINTERFACES_TD
#define DLC_IR_DLCINTERFACES_TD

include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//
// Kernel role
//===----------------------------------------------------------------------===//

def Dlc_KernelOpInterface : OpInterface<"KernelOpInterface"> {
  let cppNamespace = "::dlc";
  let description = [{
    The part an op plays in a kernel (`dlc::KernelRole`, ir/DlcInterfaces.h):
    a source of data (`param`, `constant`), an element-wise function, an
    index remap (layout or data movement), or a *stage* computed whole
    (contraction, convolution, pooling, row reduction or normalisation,
    loss). Fusion decides from the roles what may share a kernel; the code
    generators decide from them what is inlined (elemental) and what gets a
    loop nest of its own. Declared by one role trait per op
    (`Dlc_ElementwiseRole`, `Dlc_RowRole`, ...).
  }];
  let methods = [
    StaticInterfaceMethod<"The op's role in a kernel.",
      "::dlc::KernelRole", "getKernelRole">,
  ];
}

// The role traits: exactly one per op.
class Dlc_RoleTrait<string role> : NativeOpTrait<role # "Role"> {
  let cppNamespace = "::dlc::OpTrait";
}
def Dlc_SourceRole : Dlc_RoleTrait<"Source">;
def Dlc_ElementwiseRole : Dlc_RoleTrait<"Elementwise">;
def Dlc_LayoutRole : Dlc_RoleTrait<"Layout">;
def Dlc_DataMovementRole : Dlc_RoleTrait<"DataMovement">;
def Dlc_ContractionRole : Dlc_RoleTrait<"Contraction">;
def Dlc_ConvolutionRole : Dlc_RoleTrait<"Convolution">;
def Dlc_PoolingRole : Dlc_RoleTrait<"Pooling">;
def Dlc_RowRole : Dlc_RoleTrait<"Row">;
def Dlc_LossRole : Dlc_RoleTrait<"Loss">;
def Dlc_StructureRole : Dlc_RoleTrait<"Structure">;
def Dlc_CollectiveRole : Dlc_RoleTrait<"Collective">;

//===----------------------------------------------------------------------===//
// Cost
//===----------------------------------------------------------------------===//

def Dlc_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::dlc";
  let description = [{
    What an op costs: floating-point operations (a multiply-add counts two)
    and bytes read and written when it runs alone. `dlc check` prints the
    sum, the tiler's roofline estimate and the cost model use it. Ops that
    move data but compute nothing count 0 FLOPs.
  }];
  let methods = [
    InterfaceMethod<"Floating-point operations of one evaluation.",
      "int64_t", "getFlops">,
    InterfaceMethod<"Bytes the op reads: its operands, once each.",
      "int64_t", "getBytesRead", (ins), [{}], [{
        return ::dlc::tensorBytes($_op->getOperandTypes());
      }]>,
    InterfaceMethod<"Bytes the op writes: its results.",
      "int64_t", "getBytesWritten", (ins), [{}], [{
        return ::dlc::tensorBytes($_op->getResultTypes());
      }]>,
  ];
}

// FLOPs as a multiple of the elements of the result (element-wise math).
class Dlc_FlopsPerElement<int n>
    : ParamNativeOpTrait<"FlopsPerElement", !cast<string>(n)> {
  let cppNamespace = "::dlc::OpTrait";
}
// FLOPs as a multiple of the elements of the first operand (reductions,
// normalisations, losses: the work is over the input).
class Dlc_FlopsPerInputElement<int n>
    : ParamNativeOpTrait<"FlopsPerInputElement", !cast<string>(n)> {
  let cppNamespace = "::dlc::OpTrait";
}
// FLOPs counted by C++ beside the op's shape rule (`int64_t getFlops()`).
def Dlc_CustomFlops : NativeOpTrait<"CustomFlops", [], [{
  int64_t getFlops();
}]> {
  let cppNamespace = "::dlc::OpTrait";
}
// No arithmetic: the op names, moves or reinterprets data.
def Dlc_NoFlops : NativeOpTrait<"NoFlops"> {
  let cppNamespace = "::dlc::OpTrait";
}

//===----------------------------------------------------------------------===//
// Element-wise semantics and aliasing
//===----------------------------------------------------------------------===//

def Dlc_ElementwiseOpInterface : OpInterface<"ElementwiseOpInterface"> {
  let cppNamespace = "::dlc";
  let description = [{
    An op whose result element at index `i` is a scalar function of the
    operands' elements at `i` (operands broadcast by NumPy's rules). The
    scalar function has a name that the oracle's and the code generators'
    scalar tables share (oracle/kernels/ScalarFunctions.cpp,
    codegen/common/ScalarFunctions.cpp): by default the op's mnemonic; an
    op whose function depends on an attribute (`compare`'s predicate,
    `gelu`'s approximation) names the function it computes.
  }];
  let methods = [
    InterfaceMethod<"The name of the scalar function the op applies.",
      "::llvm::StringRef", "getScalarFunction", (ins), [{}], [{
        return $_op->getName().stripDialect();
      }]>,
  ];
}

//===----------------------------------------------------------------------===//
// Sharding
//===----------------------------------------------------------------------===//

def Dlc_ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::dlc";
  let description = [{
    How the op's dimensions may be split over a device mesh, in the factor
    form of GSPMD/Shardy (ir/ShardingRule.h): each dimension of each operand
    and result is a factor, or whole (-1: it must not be split at this op).
    A factor an operand has and no result has is a reduction: split, it
    leaves the result a partial value (a pending sum, max, ... over the
    mesh axis) that an all_reduce resolves. Element-wise ops share one rule
    (result dimension i is operand dimension i, NumPy-aligned; broadcast
    size-1 dimensions whole); every other op states its own.
  }];
  let methods = [
    InterfaceMethod<"The op's sharding rule.", "::dlc::ShardingRule",
      "getShardingRule", (ins), [{}], [{
        return ::dlc::elementwiseShardingRule($_op);
      }]>,
  ];
}

// Element i of the result reads only element i of each operand that has as
// many elements (others are broadcast), and nothing else of it: the result
// may take such an operand's buffer (the memory planner's in-place rule).
def Dlc_ElementAligned : NativeOpTrait<"ElementAligned"> {
  let cppNamespace = "::dlc::OpTrait";
}

// The op's products may run in reduced precision when `--precision` asks
// (dlc-precision, passes/Precision.cpp): under tf32 its f32 operands are
// rounded to TF32 on tensor cores (its `precision` attribute), under bf16
// and f16 its float operands are cast to that type; its accumulation stays
// f32 and its result is cast back to f32. Ops without the trait compute in
// f32 under every mode: reductions, softmax, norms and losses among them.
def Dlc_ReducedPrecision : NativeOpTrait<"ReducedPrecision"> {
  let cppNamespace = "::dlc::OpTrait";
}

//===----------------------------------------------------------------------===//
// Rows: reductions and normalisations
//===----------------------------------------------------------------------===//

def Dlc_RowOpInterface : OpInterface<"RowOpInterface"> {
  let cppNamespace = "::dlc";
  let description = [{
    An op that reads one operand in *rows*: the elements that differ only
    along some axes (the row axes) combine into one value per row
    (reductions), or every element of a row is computed from the whole row
    (softmax, layer and RMS norm). Fusion keeps a row in one kernel; code
    generators give a row to one thread block or one loop.
  }];
  let methods = [
    InterfaceMethod<"The operand read in rows.", "::mlir::Value", "getRowInput",
      (ins), [{}], [{ return $_op->getOperand(0); }]>,
    InterfaceMethod<"The row axes of `getRowInput()`, non-negative and sorted.",
      "::llvm::SmallVector<int64_t>", "getRowAxes">,
    InterfaceMethod<[{True when the result has one element per row (a
      reduction); false when it has the input's shape (a normalisation).}],
      "bool", "reducesRows">,
  ];
}

def Dlc_ReduceOpInterface : OpInterface<"ReduceOpInterface"> {
  let cppNamespace = "::dlc";
  let description = [{
    The `reduce_*` ops: how their elements combine (`dlc::ReduceKind`).
  }];
  let methods = [
    StaticInterfaceMethod<"How the elements of a row combine.",
      "::dlc::ReduceKind", "getReduceKind">,
  ];
}

//===----------------------------------------------------------------------===//
// Derivatives
//===----------------------------------------------------------------------===//

def Dlc_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::dlc";
  let description = [{
    The op's vector-Jacobian product, for reverse-mode differentiation
    (`dlc-differentiate`): given the gradient of a scalar loss with respect
    to each result, build the ops that compute its gradient with respect to
    each operand. Every dlc op answers (`Dlc_Op` attaches the interface and
    it has no default): with its rule, written beside its shape rule in
    `ir/<Family>Ops.cpp`, or with one of the traits below. A rule is checked
    against central finite differences in float64 on the oracle
    (test/unit/ir/VjpTest.cpp).
  }];
  let methods = [
    InterfaceMethod<[{
      Builds the gradients of the operands from `resultGrads` (one per
      result; null where no gradient reaches that result). Fills
      `operandGrads` with one value per operand, of the operand's type, or
      null where the operand gets no gradient (integer operands, or a
      derivative that is zero). Fails with an error at the op when the op
      has no derivative.
    }], "::mlir::LogicalResult", "buildVjp",
      (ins "::dlc::VjpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

// The derivative is zero wherever it exists (floor, ceil, round) or there
// is nothing to differentiate (sources): gradients stop here, silently.
def Dlc_ZeroDerivative : NativeOpTrait<"ZeroDerivative"> {
  let cppNamespace = "::dlc::OpTrait";
}
// No derivative: comparisons, the compiler's structure. A gradient that
// reaches the op is an error that names it.
def Dlc_NoDerivative : NativeOpTrait<"NoDerivative"> {
  let cppNamespace = "::dlc::OpTrait";
}
// The rule is C++ beside the op's shape rule (`buildVjp`).
def Dlc_VjpRule : NativeOpTrait<"VjpRule", [], [{
  ::mlir::LogicalResult buildVjp(::dlc::VjpBuilder &builder,
      ::mlir::ArrayRef<::mlir::Value> resultGrads,
      ::llvm::SmallVectorImpl<::mlir::Value> &operandGrads);
}]> {
  let cppNamespace = "::dlc::OpTrait";
}

#endif // DLC_IR_DLCINTERFACES_TD
