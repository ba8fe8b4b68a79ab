//===- DlcOps.td - the dlc dialect's operations -------------*- tablegen -*-===//
//
// Ops grouped by family under banners, alphabetical within a family. Every
// op states its shape rule in its description; the rule is implemented once,
// in the op's `inferReturnTypes`, which is also its verifier.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_IR_DLCOPS_TD
#define DLC_IR_DLCOPS_TD

include "ir/DlcBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// What every element-wise op is to the passes (DlcInterfaces.td): a scalar
// function per element, one FLOP each, safe to compute in place.
defvar Dlc_ElementwiseBase = [Pure, Dlc_ElementwiseRole, Dlc_FlopsPerElement<1>,
    Dlc_ElementAligned, Dlc_ShardingRuleOpInterface];
defvar Dlc_ElementwiseTraits =
    !listconcat(Dlc_ElementwiseBase, [Dlc_ElementwiseOpInterface]);
// An element-wise op whose scalar function depends on an attribute names it.
defvar Dlc_ElementwiseNamedTraits = !listconcat(Dlc_ElementwiseBase,
    [DeclareOpInterfaceMethods<Dlc_ElementwiseOpInterface, ["getScalarFunction"]>]);

//===----------------------------------------------------------------------===//
// Sources: parameters, constants, iota
//===----------------------------------------------------------------------===//

def Dlc_ConstantOp : Dlc_Op<"constant", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, ConstantLike, Pure, InferTypeOpAdaptor,
    Dlc_SourceRole, Dlc_NoFlops, Dlc_ZeroDerivative]> {
  let summary = "A tensor whose elements are known at compile time.";
  let description = [{
    Scalar literals of the source program (`x * 0.5`) become rank-0
    constants that broadcast against the other operand.

    ```mlir
    %half = dlc.constant dense<5.000000e-01> : tensor<f32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Dlc_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
  let hasVerifier = 1;
  // Numbers in a .dlg expression become constants.
  let dlgCallable = 0;
}

def Dlc_IotaOp : Dlc_Op<"iota", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, Dlc_ElementwiseRole, Dlc_NoFlops,
    Dlc_ZeroDerivative]> {
  let summary = "A tensor whose elements are their index along one axis.";
  let description = [{
    Element `[i0, i1, ...]` of the result is `i_axis`. Used to build masks,
    e.g. the causal mask of attention: `iota(axis=0) >= iota(axis=1)`.

    ```mlir
    %rows = dlc.iota 0 : tensor<128x128xi32>
    ```
  }];
  let arguments = (ins I64Attr:$axis);
  let results = (outs Dlc_NumericTensor:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dlc_ParamOp : Dlc_Op<"param", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Dlc_SourceRole, Dlc_NoFlops,
    Dlc_ZeroDerivative]> {
  let summary = "A named, trainable model parameter.";
  let description = [{
    A parameter's value is given by its initialiser, a dictionary with a
    `kind`: `zeros`, `ones`, `normal` (`mean`, `std`, `seed`), `uniform`
    (`low`, `high`, `seed`), `xavier` (`seed`), `he` (`seed`), or `file`
    (`path`, and `key` inside an `.npz`/`.safetensors` archive). Random
    initialisers are deterministic on every platform for a given seed
    (SplitMix64, Box–Muller; see `support/Init.h`). Kind `data`
    holds the value itself in `value`, an elements attribute of exactly the
    parameter's type: a `DenseElementsAttr`, or a `DenseResourceElementsAttr`
    for large tensors so that printed IR stays small (ONNX initializers
    become parameters of this kind).

    ```mlir
    %w1 = dlc.param "w1" {init = {kind = "he", seed = 1 : i64}} : tensor<784x128xf32>
    %b1 = dlc.param "b1" {init = {kind = "data", value = dense<[0.5, -1.0]> : tensor<2xf32>}} : tensor<2xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, DictionaryAttr:$init);
  let results = (outs Dlc_Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
  // A .dlg file declares parameters with a `param` statement.
  let dlgCallable = 0;
}

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

class Dlc_UnaryOp<string mnemonic, Type operandType, string what,
                  Trait derivative = Dlc_VjpRule>
    : Dlc_Op<mnemonic, !listconcat(Dlc_ElementwiseTraits,
                                   [InferTypeOpAdaptor, derivative])> {
  let summary = "Element-wise " # what # ".";
  let description = [{
    The result has the operand's shape and element type.

    ```mlir
    %y = dlc.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins operandType:$x);
  let results = (outs operandType:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  // The shape rule of the family (ir/ElementwiseOps.cpp): the operand's type;
  // float-only ops reject integers with a message that says so.
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::dlc::inferUnaryType(loc, getOperationName(), adaptor.getX(),
          /*floatOnly=*/}] # !if(!eq(operandType, Dlc_FloatTensor), "true", "false") # [{,
          types);
    }
  }];
}

def Dlc_AbsOp : Dlc_UnaryOp<"abs", Dlc_NumericTensor, "absolute value">;
def Dlc_AtanOp : Dlc_UnaryOp<"atan", Dlc_FloatTensor,
    "arc tangent, in (-pi/2, pi/2)">;
def Dlc_CeilOp : Dlc_UnaryOp<"ceil", Dlc_FloatTensor,
    "rounding up to an integral value",
    Dlc_ZeroDerivative>;
def Dlc_CosOp : Dlc_UnaryOp<"cos", Dlc_FloatTensor, "cosine">;
def Dlc_ErfOp : Dlc_UnaryOp<"erf", Dlc_FloatTensor, "Gauss error function">;
def Dlc_ExpOp : Dlc_UnaryOp<"exp", Dlc_FloatTensor, "exponential">;
def Dlc_FloorOp : Dlc_UnaryOp<"floor", Dlc_FloatTensor,
    "rounding down to an integral value",
    Dlc_ZeroDerivative>;
def Dlc_LogOp : Dlc_UnaryOp<"log", Dlc_FloatTensor, "natural logarithm">;
def Dlc_NegOp : Dlc_UnaryOp<"neg", Dlc_NumericTensor, "negation">;
def Dlc_ReluOp : Dlc_UnaryOp<"relu", Dlc_NumericTensor, "max(x, 0)">;
def Dlc_RoundOp : Dlc_UnaryOp<"round", Dlc_FloatTensor,
    "rounding to the nearest integral value, halves to even",
    Dlc_ZeroDerivative>;
def Dlc_RsqrtOp : Dlc_UnaryOp<"rsqrt", Dlc_FloatTensor, "1 / sqrt(x)">;
def Dlc_SigmoidOp : Dlc_UnaryOp<"sigmoid", Dlc_FloatTensor, "1 / (1 + exp(-x))">;
def Dlc_SiluOp : Dlc_UnaryOp<"silu", Dlc_FloatTensor, "x * sigmoid(x)">;
def Dlc_SinOp : Dlc_UnaryOp<"sin", Dlc_FloatTensor, "sine">;
def Dlc_SoftplusOp : Dlc_UnaryOp<"softplus", Dlc_FloatTensor,
    "log(1 + exp(x)), computed stably">;
def Dlc_SqrtOp : Dlc_UnaryOp<"sqrt", Dlc_FloatTensor, "square root">;
def Dlc_TanhOp : Dlc_UnaryOp<"tanh", Dlc_FloatTensor, "hyperbolic tangent">;

def Dlc_GeluOp : Dlc_Op<"gelu", !listconcat(Dlc_ElementwiseNamedTraits,
    [InferTypeOpAdaptor, Dlc_VjpRule])> {
  let summary = "Element-wise Gaussian error linear unit.";
  let description = [{
    `approximation = none` computes `0.5 x (1 + erf(x / sqrt(2)))`;
    `tanh` computes GPT-2's `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.

    ```mlir
    %y = dlc.gelu %x {approximation = #dlc<approximation tanh>} : tensor<4x3072xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$x,
      DefaultValuedAttr<Dlc_GeluApproximationAttr,
                        "GeluApproximation::none">:$approximation);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

class Dlc_BinaryOp<string mnemonic, Type operandType, string what>
    : Dlc_Op<mnemonic, !listconcat(Dlc_ElementwiseTraits,
                                   [InferTypeOpAdaptor, Dlc_VjpRule])> {
  let summary = "Element-wise " # what # ", with NumPy broadcasting.";
  let description = [{
    Both operands have the same element type; their shapes broadcast by
    NumPy's rules (aligned at the trailing dimension; a dimension of size 1
    stretches) and the result has the broadcast shape.

    ```mlir
    %y = dlc.}] # mnemonic # [{ %a, %b : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  // Identities (x + 0, x * 1, ...) and broadcast_to operands that the op's
  // own broadcasting makes redundant; ir/Canonicalize.cpp.
  let hasCanonicalizer = 1;
}

def Dlc_AddOp : Dlc_BinaryOp<"add", Dlc_NumericTensor, "addition">;
def Dlc_DivOp : Dlc_BinaryOp<"div", Dlc_NumericTensor,
    "division (integers truncate toward zero)">;
def Dlc_MaxOp : Dlc_BinaryOp<"max", Dlc_NumericTensor, "maximum">;
def Dlc_MinOp : Dlc_BinaryOp<"min", Dlc_NumericTensor, "minimum">;
def Dlc_MulOp : Dlc_BinaryOp<"mul", Dlc_NumericTensor, "multiplication">;
def Dlc_PowOp : Dlc_BinaryOp<"pow", Dlc_NumericTensor, "power">;
def Dlc_SubOp : Dlc_BinaryOp<"sub", Dlc_NumericTensor, "subtraction">;

def Dlc_CastOp : Dlc_Op<"cast", !listconcat(Dlc_ElementwiseTraits, [Dlc_VjpRule])> {
  let summary = "Element-wise conversion to another element type.";
  let description = [{
    Floats round to nearest-even; float to integer truncates toward zero
    and wraps; anything to `i1` is `x != 0`. The shape is unchanged.

    ```mlir
    %y = dlc.cast %x : tensor<4xf32> -> tensor<4xf16>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$x);
  let results = (outs Dlc_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dlc_CompareOp : Dlc_Op<"compare", !listconcat(Dlc_ElementwiseNamedTraits,
    [InferTypeOpAdaptor, Dlc_NoDerivative])> {
  let summary = "Element-wise comparison, with NumPy broadcasting, to i1.";
  let description = [{
    ```mlir
    %m = dlc.compare ge, %rows, %cols : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    ```
  }];
  let arguments = (ins Dlc_ComparePredicateAttr:$predicate,
      Dlc_Tensor:$lhs, Dlc_Tensor:$rhs);
  let results = (outs Dlc_BoolTensor:$result);
  let assemblyFormat = "$predicate `,` $lhs `,` $rhs attr-dict `:` "
                       "functional-type(operands, results)";
  let hasCanonicalizer = 1;
}

def Dlc_SelectOp : Dlc_Op<"select", !listconcat(Dlc_ElementwiseTraits,
    [InferTypeOpAdaptor, Dlc_VjpRule])> {
  let summary = "Element-wise choice: `cond ? on_true : on_false`.";
  let description = [{
    The three operands broadcast together; the branches share an element
    type, which is the result's.

    ```mlir
    %y = dlc.select %m, %s, %neg : (tensor<8x8xi1>, tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
    ```
  }];
  let arguments = (ins Dlc_BoolTensor:$cond, Dlc_Tensor:$on_true,
      Dlc_Tensor:$on_false);
  let results = (outs Dlc_Tensor:$result);
  let assemblyFormat = "$cond `,` $on_true `,` $on_false attr-dict `:` "
                       "functional-type(operands, results)";
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Contraction, convolution and pooling
//===----------------------------------------------------------------------===//

def Dlc_Conv2dOp : Dlc_Op<"conv2d", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor,
    Dlc_ConvolutionRole, Dlc_CustomFlops, Dlc_VjpRule, Dlc_ReducedPrecision]> {
  let summary = "2-D convolution over NCHW inputs with OIHW weights.";
  let description = [{
    `x: [N, C, H, W]`, `w: [O, C / groups, KH, KW]`, optional `bias: [O]`.
    `padding` is `[top, left, bottom, right]`. The result is
    `[N, O, OH, OW]` with `OH = (H + top + bottom - dh (KH - 1) - 1) / sh + 1`
    (and likewise `OW`), which must be at least 1.

    `channels_last`: x is `[N, H, W, C]` and the result `[N, OH, OW, O]`
    (the weights stay OIHW). Only the CPU's layout pass (dlc-cpu-layout,
    for inference) makes it: it is not differentiated, partitioned or
    compiled for CUDA.

    ```mlir
    %y = dlc.conv2d %x, %w, %b {strides = array<i64: 1, 1>, padding = array<i64: 2, 2, 2, 2>,
        dilations = array<i64: 1, 1>, groups = 1 : i64}
        : (tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>, tensor<6xf32>) -> tensor<1x6x28x28xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$x, Dlc_FloatTensor:$w,
      Optional<Dlc_FloatTensor>:$bias,
      DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
      DenseI64ArrayAttr:$dilations, I64Attr:$groups,
      OptionalAttr<Dlc_ContractionPrecisionAttr>:$precision,
      UnitAttr:$channels_last);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$x `,` $w (`,` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
}

def Dlc_MatmulOp : Dlc_Op<"matmul", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor,
    Dlc_ContractionRole, Dlc_CustomFlops, Dlc_VjpRule, Dlc_ReducedPrecision]> {
  let summary = "Batched matrix product, with broadcast batch dimensions.";
  let description = [{
    Both operands have rank at least 2. `transpose_a`/`transpose_b` swap the
    last two dimensions of that operand first. Then `[..., M, K] x
    [..., K, N] -> [..., M, N]`, where the batch dimensions (all but the last
    two) broadcast by NumPy's rules. `precision = #dlc<precision tensorfloat32>`
    lets f32 products round their operands to TF32 (tensor cores, f32
    accumulation; set by `--precision tf32`); absent, products are f32.

    ```mlir
    %s = dlc.matmul %q, %k {transpose_b = true}
        : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x128xf32>
    ```
  }];
  let arguments = (ins Dlc_NumericTensor:$lhs, Dlc_NumericTensor:$rhs,
      DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
      DefaultValuedAttr<BoolAttr, "false">:$transpose_b,
      OptionalAttr<Dlc_ContractionPrecisionAttr>:$precision);
  let results = (outs Dlc_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` "
                       "functional-type(operands, results)";
}

class Dlc_Pool2dOp<string mnemonic, string what>
    : Dlc_Op<mnemonic, [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor, Dlc_PoolingRole,
                        Dlc_CustomFlops, Dlc_VjpRule]> {
  let summary = "2-D " # what # " pooling over NCHW inputs.";
  let description = [{
    Windows of `kernel = [KH, KW]` moved by `strides`; `padding` is
    `[top, left, bottom, right]`. The result is `[N, C, OH, OW]` with
    `OH = (H + top + bottom - KH) / sh + 1`. `channels_last`: x is
    `[N, H, W, C]` and the result `[N, OH, OW, C]`, made only by the CPU's
    layout pass (dlc-cpu-layout) and, as for conv2d, not differentiated,
    partitioned or compiled for CUDA.

    ```mlir
    %y = dlc.}] # mnemonic # [{ %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
        padding = array<i64: 0, 0, 0, 0>} : tensor<1x6x28x28xf32> -> tensor<1x6x14x14xf32>
    ```
  }];
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
}

def Dlc_AvgPool2dOp : Dlc_Pool2dOp<"avg_pool2d", "average"> {
  let arguments = (ins Dlc_FloatTensor:$x, DenseI64ArrayAttr:$kernel,
      DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
      DefaultValuedAttr<BoolAttr, "false">:$count_include_pad,
      UnitAttr:$channels_last);
}
def Dlc_MaxPool2dOp : Dlc_Pool2dOp<"max_pool2d", "maximum"> {
  let arguments = (ins Dlc_FloatTensor:$x, DenseI64ArrayAttr:$kernel,
      DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
      UnitAttr:$channels_last);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Dlc_ReduceOp<string mnemonic, string what, string kind>
    : Dlc_Op<mnemonic, [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor, Dlc_RowRole,
                        Dlc_FlopsPerInputElement<1>,
                        DeclareOpInterfaceMethods<Dlc_RowOpInterface>,
                        Dlc_ReduceOpInterface, Dlc_VjpRule]> {
  let summary = "Reduction by " # what # " over the given axes.";
  let description = [{
    `axes` are distinct, in `[-rank, rank)`; an empty list reduces nothing
    (NumPy's `axis=()`). With `keepdims` the reduced dimensions stay as size
    1, otherwise they are removed.

    ```mlir
    %y = dlc.}] # mnemonic # [{ %x {axes = array<i64: -1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins Dlc_NumericTensor:$x, DenseI64ArrayAttr:$axes,
      DefaultValuedAttr<BoolAttr, "false">:$keepdims);
  let results = (outs Dlc_NumericTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let extraClassDeclaration = [{
    static ::dlc::ReduceKind getReduceKind() { return ::dlc::ReduceKind::}] # kind # [{; }
  }];
}

def Dlc_ReduceMaxOp : Dlc_ReduceOp<"reduce_max", "maximum", "Max">;
def Dlc_ReduceMeanOp : Dlc_ReduceOp<"reduce_mean", "mean", "Mean">;
def Dlc_ReduceMinOp : Dlc_ReduceOp<"reduce_min", "minimum", "Min">;
def Dlc_ReduceProdOp : Dlc_ReduceOp<"reduce_prod", "product", "Prod">;
def Dlc_ReduceSumOp : Dlc_ReduceOp<"reduce_sum", "sum", "Sum">;

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

def Dlc_LayerNormOp : Dlc_Op<"layer_norm", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor, Dlc_RowRole,
    Dlc_FlopsPerInputElement<8>, DeclareOpInterfaceMethods<Dlc_RowOpInterface>,
    Dlc_VjpRule]> {
  let summary = "Layer normalisation over the trailing dimensions from `axis`.";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * scale + bias`, with mean and biased
    variance over dimensions `[axis, rank)`; `scale` and the optional `bias`
    have exactly the shape of those dimensions.

    ```mlir
    %y = dlc.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f64}
        : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$x, Dlc_FloatTensor:$scale,
      Optional<Dlc_FloatTensor>:$bias,
      DefaultValuedAttr<I64Attr, "-1">:$axis,
      DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$x `,` $scale (`,` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
}

def Dlc_LogSoftmaxOp : Dlc_Op<"log_softmax", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor, Dlc_RowRole,
    Dlc_FlopsPerInputElement<5>, DeclareOpInterfaceMethods<Dlc_RowOpInterface>,
    Dlc_VjpRule]> {
  let summary = "Logarithm of the softmax along one axis, computed stably.";
  let description = [{
    ```mlir
    %y = dlc.log_softmax %x {axis = -1 : i64} : tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$x,
      DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def Dlc_RmsNormOp : Dlc_Op<"rms_norm", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor, Dlc_RowRole,
    Dlc_FlopsPerInputElement<4>, DeclareOpInterfaceMethods<Dlc_RowOpInterface>,
    Dlc_VjpRule]> {
  let summary = "Root-mean-square normalisation over the trailing dimensions.";
  let description = [{
    `x / sqrt(mean(x^2) + epsilon) * scale`, the mean over dimensions
    `[axis, rank)`; `scale` has exactly the shape of those dimensions.

    ```mlir
    %y = dlc.rms_norm %x, %g {axis = -1 : i64, epsilon = 1.0e-06 : f64}
        : (tensor<2x16x512xf32>, tensor<512xf32>) -> tensor<2x16x512xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$x, Dlc_FloatTensor:$scale,
      DefaultValuedAttr<I64Attr, "-1">:$axis,
      DefaultValuedAttr<F64Attr, "1e-6">:$epsilon);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$x `,` $scale attr-dict `:` "
                       "functional-type(operands, results)";
}

def Dlc_SoftmaxOp : Dlc_Op<"softmax", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor, Dlc_RowRole,
    Dlc_FlopsPerInputElement<5>, DeclareOpInterfaceMethods<Dlc_RowOpInterface>,
    Dlc_VjpRule]> {
  let summary = "Softmax along one axis, computed stably.";
  let description = [{
    `exp(x - max(x)) / sum(exp(x - max(x)))` along `axis`.

    ```mlir
    %p = dlc.softmax %s {axis = -1 : i64} : tensor<1x12x128x128xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$x,
      DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// Communication between the ranks of a device mesh (docs/design/
// 2026-11-26-partitioning.md). Every rank runs the same program (SPMD); a
// collective combines the values of the ranks that differ only in
// `mesh_axes` (its group of `group_size` ranks, ordered by their
// coordinates on those axes, row-major). `group_size` is stated on the op
// so that its shape rule is local; the verifier checks it against the
// module's `dlc.mesh` when there is one. Communication is an effect: no
// generic pass moves, merges or drops a collective. The oracle simulates
// them for every rank in one process (oracle/Spmd.h); a group of 1 is the
// identity.
class Dlc_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Dlc_Op<mnemonic, !listconcat([Dlc_CollectiveRole, DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Dlc_NoFlops,
                                    Dlc_NoDerivative,
                                    MemoryEffects<[MemRead, MemWrite]>],
                                   traits)> {
  let hasVerifier = 1;
  // The partitioner inserts collectives; a .dlg file says how values are
  // sharded (@shard), not how ranks talk.
  let dlgCallable = 0;
}

def Dlc_AllReduceOp : Dlc_CollectiveOp<"all_reduce", [SameOperandsAndResultType]> {
  let summary = "Combines a tensor over the ranks of a group; every rank gets the result.";
  let description = [{
    Element-wise `kind` (sum, max, min, avg) of the operand over the
    group; the result has the operand's type.

    ```mlir
    %y = dlc.all_reduce %x {kind = #dlc<collective_reduction sum>, mesh_axes = ["data"], group_size = 4 : i64} : tensor<784x128xf32>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$x, Dlc_CollectiveReductionAttr:$kind,
      StrArrayAttr:$mesh_axes, I64Attr:$group_size);
  let results = (outs Dlc_Tensor:$result);
  // A group of one rank: the operand itself.
  let hasFolder = 1;
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def Dlc_AllGatherOp : Dlc_CollectiveOp<"all_gather"> {
  let summary = "Concatenates the ranks' tensors along an axis; every rank gets the whole.";
  let description = [{
    The result's dimension `axis` is `group_size` times the operand's, the
    ranks' blocks in group order; other dimensions and the element type are
    the operand's.

    ```mlir
    %y = dlc.all_gather %x {axis = 1 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<64x64xf32> -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$x, I64Attr:$axis, StrArrayAttr:$mesh_axes,
      I64Attr:$group_size);
  let results = (outs Dlc_Tensor:$result);
  // A group of one rank: the operand itself.
  let hasFolder = 1;
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
}

def Dlc_ReduceScatterOp : Dlc_CollectiveOp<"reduce_scatter"> {
  let summary = "Combines the ranks' tensors and leaves each rank its block of the result.";
  let description = [{
    As `all_reduce` with `kind`, then rank `i` of the group keeps block
    `i` of dimension `axis`, which `group_size` divides: the result's
    dimension `axis` is the operand's divided by `group_size`.

    ```mlir
    %y = dlc.reduce_scatter %x {kind = #dlc<collective_reduction sum>, axis = 0 : i64, mesh_axes = ["data"], group_size = 2 : i64} : tensor<8x4xf32> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$x, Dlc_CollectiveReductionAttr:$kind,
      I64Attr:$axis, StrArrayAttr:$mesh_axes, I64Attr:$group_size);
  let results = (outs Dlc_Tensor:$result);
  // A group of one rank: the operand itself.
  let hasFolder = 1;
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
}

def Dlc_AllToAllOp : Dlc_CollectiveOp<"all_to_all"> {
  let summary = "Each rank sends block j of one axis to rank j and concatenates what it receives along another.";
  let description = [{
    `split_axis` is cut into `group_size` blocks; rank `i` receives block
    `i` of every rank and concatenates them, in group order, along
    `concat_axis`. The result's `split_axis` is the operand's divided by
    `group_size`, its `concat_axis` multiplied (the same axis: unchanged).

    ```mlir
    %y = dlc.all_to_all %x {split_axis = 1 : i64, concat_axis = 0 : i64, mesh_axes = ["model"], group_size = 2 : i64} : tensor<4x8xf32> -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$x, I64Attr:$split_axis, I64Attr:$concat_axis,
      StrArrayAttr:$mesh_axes, I64Attr:$group_size);
  let results = (outs Dlc_Tensor:$result);
  // A group of one rank: the operand itself.
  let hasFolder = 1;
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
}

def Dlc_BroadcastOp : Dlc_CollectiveOp<"broadcast", [SameOperandsAndResultType]> {
  let summary = "Every rank of a group gets the tensor of the group's rank `root`.";
  let description = [{
    `0 <= root < group_size`; the result has the operand's type.

    ```mlir
    %y = dlc.broadcast %x {root = 0 : i64, mesh_axes = ["data"], group_size = 4 : i64} : tensor<10xf32>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$x, I64Attr:$root, StrArrayAttr:$mesh_axes,
      I64Attr:$group_size);
  let results = (outs Dlc_Tensor:$result);
  // A group of one rank: the operand itself.
  let hasFolder = 1;
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def Dlc_ShardOp : Dlc_CollectiveOp<"shard"> {
  let summary = "Keeps this rank's block of a tensor every rank of the group holds whole.";
  let description = [{
    Rank `i` of the group keeps block `i` of dimension `axis`, which
    `group_size` divides; no communication (a rank-dependent slice: how a
    replicated value becomes a sharded one).

    ```mlir
    %y = dlc.shard %x {axis = 0 : i64, mesh_axes = ["data"], group_size = 2 : i64} : tensor<64x784xf32> -> tensor<32x784xf32>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$x, I64Attr:$axis, StrArrayAttr:$mesh_axes,
      I64Attr:$group_size);
  let results = (outs Dlc_Tensor:$result);
  // A group of one rank: the operand itself.
  let hasFolder = 1;
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
}

def Dlc_SendOp : Dlc_CollectiveOp<"send"> {
  let summary = "Sends a tensor to the rank `shift` places further along the group.";
  let description = [{
    Rank `i` of each group sends its operand to rank `i + shift` of the
    group when there is one (`0 <= i + shift < group_size`); the others
    send nothing. It pairs with the next `dlc.recv` of the same
    `mesh_axes` and `shift`, which the receiving rank runs (sends and
    receives of one pair are matched in program order). With `shift` 1
    over a `pipe` axis, each pipeline stage hands its activations to the
    next.

    ```mlir
    dlc.send %x {shift = 1 : i64, mesh_axes = ["pipe"], group_size = 4 : i64} : tensor<8x128xf32>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$x, I64Attr:$shift, StrArrayAttr:$mesh_axes,
      I64Attr:$group_size);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def Dlc_RecvOp : Dlc_CollectiveOp<"recv"> {
  let summary = "Receives the tensor the rank `shift` places back along the group sent.";
  let description = [{
    Rank `i` of each group receives what rank `i - shift` sent by the
    matching `dlc.send` (same `mesh_axes` and `shift`), which must have the
    result's type; a rank with no such peer (`i - shift` outside the
    group) gets zeros.

    ```mlir
    %y = dlc.recv {shift = 1 : i64, mesh_axes = ["pipe"], group_size = 4 : i64} : tensor<8x128xf32>
    ```
  }];
  let arguments = (ins I64Attr:$shift, StrArrayAttr:$mesh_axes, I64Attr:$group_size);
  let results = (outs Dlc_Tensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Dlc_BroadcastToOp : Dlc_Op<"broadcast_to", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, Dlc_LayoutRole,
    Dlc_NoFlops, Dlc_ElementAligned, Dlc_VjpRule]> {
  let summary = "Broadcasts a tensor to the result's shape (NumPy rules).";
  let description = [{
    The result type is the target; the operand's shape must broadcast to
    it and the element types match.

    ```mlir
    %y = dlc.broadcast_to %b : tensor<128xf32> -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$x);
  let results = (outs Dlc_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dlc_ConcatOp : Dlc_Op<"concat", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor,
    Dlc_DataMovementRole, Dlc_NoFlops, Dlc_VjpRule]> {
  let summary = "Joins tensors along one axis.";
  let description = [{
    All operands have the same rank and element type and agree on every
    dimension but `axis`, whose sizes add up.

    ```mlir
    %y = dlc.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Dlc_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Dlc_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

def Dlc_EmbeddingOp : Dlc_Op<"embedding", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor,
    Dlc_DataMovementRole, Dlc_NoFlops, Dlc_VjpRule]> {
  let summary = "Looks up rows of an embedding table.";
  let description = [{
    `table: [V, D]`, integer `ids` of any shape with values in `[0, V)`;
    the result is `ids.shape + [D]`.

    ```mlir
    %e = dlc.embedding %wte, %ids : (tensor<50257x768xf32>, tensor<1x128xi32>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$table, Dlc_IndexTensor:$ids);
  let results = (outs Dlc_Tensor:$result);
  let assemblyFormat = "$table `,` $ids attr-dict `:` "
                       "functional-type(operands, results)";
}

def Dlc_GatherOp : Dlc_Op<"gather", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor,
    Dlc_DataMovementRole, Dlc_NoFlops, Dlc_VjpRule]> {
  let summary = "Takes slices along one axis at the given indices (NumPy `take`).";
  let description = [{
    The result is `x.shape[:axis] + indices.shape + x.shape[axis+1:]`.
    Negative indices count from the end; others out of range are an error
    when the graph runs.

    ```mlir
    %y = dlc.gather %x, %i {axis = 1 : i64} : (tensor<4x10xf32>, tensor<3xi64>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$x, Dlc_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Dlc_Tensor:$result);
  let assemblyFormat = "$x `,` $indices attr-dict `:` "
                       "functional-type(operands, results)";
}

def Dlc_PadOp : Dlc_Op<"pad", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor,
    Dlc_DataMovementRole, Dlc_NoFlops, Dlc_VjpRule]> {
  let summary = "Pads each dimension with a constant value.";
  let description = [{
    `low[i]` and `high[i]` (non-negative) elements are added before and
    after dimension `i`.

    ```mlir
    %y = dlc.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 2>, value = 0.0 : f64}
        : tensor<2x3xf32> -> tensor<2x6xf32>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$x, DenseI64ArrayAttr:$low,
      DenseI64ArrayAttr:$high, DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Dlc_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
}

def Dlc_ReshapeOp : Dlc_Op<"reshape", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, Dlc_LayoutRole, Dlc_NoFlops,
    Dlc_ElementAligned, Dlc_VjpRule]> {
  let summary = "Reinterprets a tensor's elements in row-major order as another shape.";
  let description = [{
    The result type is the target; it has the operand's element type and
    number of elements.

    ```mlir
    %y = dlc.reshape %x : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$x);
  let results = (outs Dlc_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dlc_SliceOp : Dlc_Op<"slice", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor,
    Dlc_DataMovementRole, Dlc_NoFlops, Dlc_VjpRule]> {
  let summary = "Takes a strided rectangular slice.";
  let description = [{
    Per dimension, `0 <= start <= limit <= size` and `stride >= 1`; the
    result has `ceil((limit - start) / stride)` elements along it. (The
    `.dlg` frontend turns Python-style slices with negative indices into
    this form.)

    ```mlir
    %y = dlc.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 4, 8>, strides = array<i64: 1, 2>}
        : tensor<4x8xf32> -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$x, DenseI64ArrayAttr:$starts,
      DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$strides);
  let results = (outs Dlc_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
}

def Dlc_TransposeOp : Dlc_Op<"transpose", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor,
    Dlc_LayoutRole, Dlc_NoFlops, Dlc_VjpRule]> {
  let summary = "Permutes dimensions: result dimension i is operand dimension perm[i].";
  let description = [{
    ```mlir
    %y = dlc.transpose %x {perm = array<i64: 0, 2, 1, 3>}
        : tensor<1x128x12x64xf32> -> tensor<1x12x128x64xf32>
    ```
  }];
  let arguments = (ins Dlc_Tensor:$x, DenseI64ArrayAttr:$perm);
  let results = (outs Dlc_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Dlc_CrossEntropyOp : Dlc_Op<"cross_entropy", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor,
    Dlc_LossRole, Dlc_FlopsPerInputElement<5>, Dlc_VjpRule]> {
  let summary = "Softmax cross-entropy against integer class labels.";
  let description = [{
    `logits: [..., C]`, integer `labels: [...]` with values in `[0, C)`; per
    position the cross-entropy of `softmax(logits)` against a target
    distribution, then `mean` (the default) or `sum` to a scalar, or `none`
    to keep `labels.shape`. As PyTorch's `F.cross_entropy`:

    - `label_smoothing` `ε` in `[0, 1)` (default 0): the target is
      `(1 - ε) · onehot(label) + ε / C`, so the loss of a position is
      `(1 - ε) · -log_softmax[label] + ε · mean_c(-log_softmax[c])`;
      with `ε = 0`, `-log_softmax(logits)[label]`.
    - `ignore_index` (default -100): a position whose label equals it has
      loss 0 and is not counted, so `mean` divides the sum by the number of
      the other positions (NaN when every position is ignored). Any other
      label outside `[0, C)` is an error of the data (the oracle reports
      it; compiled kernels clamp it into range).

    ```mlir
    %l = dlc.cross_entropy %logits, %labels : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
    %s = dlc.cross_entropy %logits, %labels {label_smoothing = 1.0e-01 : f64, ignore_index = 0 : i64}
        : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$logits, Dlc_IndexTensor:$labels,
      DefaultValuedAttr<Dlc_LossReductionAttr,
                        "LossReduction::mean">:$reduction,
      DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing,
      DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$logits `,` $labels attr-dict `:` "
                       "functional-type(operands, results)";
}

def Dlc_MseOp : Dlc_Op<"mse", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor, Dlc_LossRole,
    Dlc_FlopsPerInputElement<3>, Dlc_VjpRule]> {
  let summary = "Squared error between predictions and targets.";
  let description = [{
    `(pred - target)^2` for operands of one shape and type, then `mean` (the
    default) or `sum` to a scalar, or `none`.

    ```mlir
    %l = dlc.mse %p, %t : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$pred, Dlc_FloatTensor:$target,
      DefaultValuedAttr<Dlc_LossReductionAttr,
                        "LossReduction::mean">:$reduction);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$pred `,` $target attr-dict `:` "
                       "functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Kernels: fusion regions
//===----------------------------------------------------------------------===//

def Dlc_FusionOp : Dlc_Op<"fusion", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, IsolatedFromAbove, Dlc_StructureRole,
    Dlc_NoDerivative,
    Dlc_CustomFlops,
    SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "A group of ops that becomes one kernel.";
  let description = [{
    The body computes the results from the block arguments, which stand for
    the operands (the region is isolated from above: everything it reads is
    an operand). One fusion region is one kernel launch: the values inside
    never reach memory. `kind` names the pattern that formed it
    (`elementwise`, `reduction`, `contraction`, `attention`, ...), and later
    stages attach the kernel's schedule as attributes.

    A region may have several results when a value it computes is also
    needed outside (a multi-output kernel).

    ```mlir
    %y = dlc.fusion %x, %b {kind = "elementwise"} : (tensor<4x128xf32>, tensor<128xf32>) -> tensor<4x128xf32> {
    ^bb0(%a: tensor<4x128xf32>, %c: tensor<128xf32>):
      %0 = dlc.add %a, %c : (tensor<4x128xf32>, tensor<128xf32>) -> tensor<4x128xf32>
      %1 = dlc.relu %0 : tensor<4x128xf32>
      dlc.yield %1 : tensor<4x128xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Dlc_Tensor>:$inputs,
      DefaultValuedAttr<StrAttr, "\"elementwise\"">:$kind);
  let results = (outs Variadic<Dlc_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $results) $body";
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
                   "::mlir::ValueRange":$inputs, "::llvm::StringRef":$kind)>
  ];
  // Created by dlc-fuse, never written in a .dlg file.
  let dlgCallable = 0;
}

def Dlc_YieldOp : Dlc_Op<"yield", [DeclareOpInterfaceMethods<Dlc_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, Terminator, Dlc_StructureRole, Dlc_NoFlops,
    Dlc_NoDerivative,
                                   HasParent<"FusionOp">]> {
  let summary = "Returns the results of a fusion region.";
  let description = [{
    ```mlir
    dlc.yield %1 : tensor<4x128xf32>
    ```
  }];
  let arguments = (ins Variadic<Dlc_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ /* nothing */ }]>];
  // Created by dlc-fuse, never written in a .dlg file.
  let dlgCallable = 0;
}

#endif // DLC_IR_DLCOPS_TD
