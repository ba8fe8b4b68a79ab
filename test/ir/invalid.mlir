// RUN: dlc-opt %s --split-input-file --verify-diagnostics

// One case per verifier rule of every op. When an op's shape rule fails
// while the op is verified, InferTypeOpInterface's verifier adds "failed to
// infer returned types" on the same op. Ops whose custom form has no result
// type (unary ops, softmax, constant) run their shape rule while parsing, so
// they report a single error. ODS operand and attribute constraints are
// checked before the shape rule.

//===----------------------------------------------------------------------===//
// Sources: constant, iota, param
//===----------------------------------------------------------------------===//

func.func @constant_value_is_not_a_tensor() {
  // expected-error @+1 {{'dlc.constant' op value must be a ranked tensor}}
  %0 = dlc.constant dense<1.0> : vector<2xf32>
  return
}

// -----

func.func @constant_result_type_differs_from_value() {
  // expected-error @+2 {{'dlc.constant' op inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<2xf64>'}}
  // expected-error @+1 {{'dlc.constant' op failed to infer returned types}}
  %0 = "dlc.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf64>
  return
}

// -----

func.func @constant_element_type_unsupported() {
  // expected-error @+1 {{'dlc.constant' op result #0 must be ranked tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer or 8-bit signless integer or 8-bit unsigned integer or 1-bit signless integer values, but got 'tensor<2xi16>'}}
  %0 = dlc.constant dense<1> : tensor<2xi16>
  return
}

// -----

func.func @iota_rank_zero() {
  // expected-error @+1 {{'dlc.iota' op needs a result of rank at least 1}}
  %0 = dlc.iota 0 : tensor<i32>
  return
}

// -----

func.func @iota_axis_out_of_range() {
  // expected-error @+1 {{'dlc.iota' op axis 2 is out of range for i32[4, 4]}}
  %0 = dlc.iota 2 : tensor<4x4xi32>
  return
}

// -----

func.func @iota_bool_result() {
  // expected-error @+1 {{'dlc.iota' op result #0 must be ranked tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = dlc.iota 0 : tensor<4xi1>
  return
}

// -----

func.func @param_empty_name() {
  // expected-error @+1 {{'dlc.param' op needs a non-empty name}}
  %0 = dlc.param "" {init = {kind = "zeros"}} : tensor<4xf32>
  return
}

// -----

func.func @param_init_without_kind() {
  // expected-error @+1 {{'dlc.param' op initialiser needs a string 'kind'}}
  %0 = dlc.param "w" {init = {seed = 1 : i64}} : tensor<4xf32>
  return
}

// -----

func.func @param_init_kind_not_a_string() {
  // expected-error @+1 {{'dlc.param' op initialiser needs a string 'kind'}}
  %0 = dlc.param "w" {init = {kind = 3 : i64}} : tensor<4xf32>
  return
}

// -----

func.func @param_unknown_initialiser() {
  // expected-error @+1 {{'dlc.param' op unknown initialiser 'glorot' (expected zeros, ones, normal, uniform, xavier, he, file or data)}}
  %0 = dlc.param "w" {init = {kind = "glorot"}} : tensor<4xf32>
  return
}

// -----

func.func @param_random_init_on_integers() {
  // expected-error @+1 {{'dlc.param' op random initialiser 'normal' needs a floating-point parameter, not i32[4]}}
  %0 = dlc.param "w" {init = {kind = "normal", seed = 1 : i64}} : tensor<4xi32>
  return
}

// -----

func.func @param_random_init_std_not_a_number() {
  // expected-error @+1 {{'dlc.param' op initialiser entry 'std' must be a number}}
  %0 = dlc.param "w" {init = {kind = "normal", std = "wide"}} : tensor<4xf32>
  return
}

// -----

func.func @param_random_init_seed_not_an_integer() {
  // expected-error @+1 {{'dlc.param' op initialiser entry 'seed' must be an integer seed}}
  %0 = dlc.param "w" {init = {kind = "he", seed = 1.5 : f64}} : tensor<4x4xf32>
  return
}

// -----

func.func @param_file_without_path() {
  // expected-error @+1 {{'dlc.param' op initialiser 'file' needs 'path' (a file path)}}
  %0 = dlc.param "w" {init = {kind = "file", key = "fc1.weight"}} : tensor<4xf32>
  return
}

// -----

func.func @param_file_key_not_a_string() {
  // expected-error @+1 {{'dlc.param' op initialiser entry 'key' must be an archive key}}
  %0 = dlc.param "w" {init = {kind = "file", path = "w.npz", key = 0 : i64}} : tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

// The custom form infers the result type while parsing, so the op's own
// shape rule reports the integer operand.
func.func @exp_of_integers(%x: tensor<4xi32>) {
  // expected-error @+1 {{'dlc.exp' op needs a floating-point operand, got i32[4]}}
  %0 = dlc.exp %x : tensor<4xi32>
  return
}

// -----

// The generic form names the result type, so the ODS operand constraint
// reports it first.
func.func @exp_of_integers_generic(%x: tensor<4xi32>) {
  // expected-error @+1 {{'dlc.exp' op operand #0 must be ranked tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = "dlc.exp"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @relu_of_booleans(%x: tensor<4xi1>) {
  // expected-error @+1 {{'dlc.relu' op does not take i1 operands, got i1[4]}}
  %0 = dlc.relu %x : tensor<4xi1>
  return
}

// -----

func.func @tanh_result_type_differs(%x: tensor<4xf32>) {
  // expected-error @+2 {{'dlc.tanh' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<2x2xf32>'}}
  // expected-error @+1 {{'dlc.tanh' op failed to infer returned types}}
  %0 = "dlc.tanh"(%x) : (tensor<4xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @gelu_of_integers(%x: tensor<4xi64>) {
  // expected-error @+1 {{'dlc.gelu' op needs a floating-point operand, got i64[4]}}
  %0 = dlc.gelu %x : tensor<4xi64>
  return
}

// -----

func.func @gelu_unknown_approximation(%x: tensor<4xf32>) {
  // expected-error @+2 {{expected ::dlc::GeluApproximation to be one of: none, tanh}}
  // expected-error @+1 {{failed to parse Dlc_GeluApproximationAttr parameter 'value' which is to be a `::dlc::GeluApproximation`}}
  %0 = dlc.gelu %x {approximation = #dlc<approximation sigmoid>} : tensor<4xf32>
  return
}

// -----

func.func @add_element_types_differ(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+2 {{'dlc.add' op element types differ: lhs is f32[4], rhs is f16[4] (use cast to convert)}}
  // expected-error @+1 {{'dlc.add' op failed to infer returned types}}
  %0 = dlc.add %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @mul_shapes_do_not_broadcast(%a: tensor<4x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'dlc.mul' op cannot broadcast f32[4, 3] and f32[4]}}
  // expected-error @+1 {{'dlc.mul' op failed to infer returned types}}
  %0 = dlc.mul %a, %b : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @add_result_type_differs(%a: tensor<4x1xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{'dlc.add' op inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<4x1xf32>'}}
  // expected-error @+1 {{'dlc.add' op failed to infer returned types}}
  %0 = dlc.add %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x1xf32>
  return
}

// -----

func.func @sub_of_booleans(%a: tensor<4xi1>) {
  // expected-error @+1 {{'dlc.sub' op operand #0 must be ranked tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = dlc.sub %a, %a : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return
}

// -----

func.func @compare_element_types_differ(%a: tensor<4xi32>, %b: tensor<4xi64>) {
  // expected-error @+2 {{'dlc.compare' op element types differ: lhs is i32[4], rhs is i64[4] (use cast to convert)}}
  // expected-error @+1 {{'dlc.compare' op failed to infer returned types}}
  %0 = dlc.compare lt, %a, %b : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi1>
  return
}

// -----

func.func @compare_shapes_do_not_broadcast(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  // expected-error @+2 {{'dlc.compare' op cannot broadcast f32[2, 3] and f32[2]}}
  // expected-error @+1 {{'dlc.compare' op failed to infer returned types}}
  %0 = dlc.compare eq, %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xi1>
  return
}

// -----

func.func @compare_result_not_bool(%a: tensor<4xf32>) {
  // expected-error @+1 {{'dlc.compare' op result #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = dlc.compare gt, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @compare_unknown_predicate(%a: tensor<4xf32>) {
  // expected-error @+2 {{custom op 'dlc.compare' expected ::dlc::ComparePredicate to be one of: eq, ne, lt, le, gt, ge}}
  // expected-error @+1 {{custom op 'dlc.compare' failed to parse Dlc_ComparePredicateAttr parameter 'value' which is to be a `::dlc::ComparePredicate`}}
  %0 = dlc.compare neq, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @select_condition_not_bool(%c: tensor<4xi32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'dlc.select' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xi32>'}}
  %0 = dlc.select %c, %a, %a : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @select_branch_element_types_differ(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+2 {{'dlc.select' op element types differ: on_true is f32[4], on_false is f16[4] (use cast to convert)}}
  // expected-error @+1 {{'dlc.select' op failed to infer returned types}}
  %0 = dlc.select %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @select_branches_do_not_broadcast(%c: tensor<i1>, %a: tensor<2xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{'dlc.select' op cannot broadcast f32[2] and f32[3]}}
  // expected-error @+1 {{'dlc.select' op failed to infer returned types}}
  %0 = dlc.select %c, %a, %b : (tensor<i1>, tensor<2xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @select_condition_does_not_broadcast(%c: tensor<4xi1>, %a: tensor<3xf32>) {
  // expected-error @+2 {{'dlc.select' op cannot broadcast the condition i1[4] with the branches' shape [3]}}
  // expected-error @+1 {{'dlc.select' op failed to infer returned types}}
  %0 = dlc.select %c, %a, %a : (tensor<4xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @cast_changes_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dlc.cast' op changes the shape: f32[4] to f16[2, 2]}}
  %0 = dlc.cast %x : tensor<4xf32> -> tensor<2x2xf16>
  return
}

// -----

func.func @cast_to_unsupported_element_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dlc.cast' op result #0 must be ranked tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer or 8-bit signless integer or 8-bit unsigned integer or 1-bit signless integer values, but got 'tensor<4xi16>'}}
  %0 = dlc.cast %x : tensor<4xf32> -> tensor<4xi16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Contraction, convolution and pooling
//===----------------------------------------------------------------------===//

func.func @matmul_contracting_dims_differ(%x: tensor<4x784xf32>, %w: tensor<100x10xf32>) {
  // expected-error @+2 {{'dlc.matmul' op contracting dimensions differ: 784 vs 100 in f32[4, 784] @ f32[100, 10]}}
  // expected-error @+1 {{'dlc.matmul' op failed to infer returned types}}
  %0 = dlc.matmul %x, %w : (tensor<4x784xf32>, tensor<100x10xf32>) -> tensor<4x10xf32>
  return
}

// -----

// The message shows the operands as given, before transpose_b swaps the
// last two dimensions of %k.
func.func @matmul_transposed_contracting_dims_differ(%q: tensor<2x8x16xf32>, %k: tensor<2x16x8xf32>) {
  // expected-error @+2 {{'dlc.matmul' op contracting dimensions differ: 16 vs 8 in f32[2, 8, 16] @ transpose(f32[2, 16, 8])}}
  // expected-error @+1 {{'dlc.matmul' op failed to infer returned types}}
  %0 = dlc.matmul %q, %k {transpose_b = true} : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

func.func @matmul_element_types_differ(%a: tensor<4x8xf32>, %b: tensor<8x2xbf16>) {
  // expected-error @+2 {{'dlc.matmul' op element types differ: f32[4, 8] @ bf16[8, 2] (use cast to convert)}}
  // expected-error @+1 {{'dlc.matmul' op failed to infer returned types}}
  %0 = dlc.matmul %a, %b : (tensor<4x8xf32>, tensor<8x2xbf16>) -> tensor<4x2xf32>
  return
}

// -----

func.func @matmul_vector_operand(%a: tensor<4x8xf32>, %v: tensor<8xf32>) {
  // expected-error @+2 {{'dlc.matmul' op needs operands of rank at least 2, got f32[4, 8] @ f32[8] (reshape a vector to a 1-row or 1-column matrix)}}
  // expected-error @+1 {{'dlc.matmul' op failed to infer returned types}}
  %0 = dlc.matmul %a, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @matmul_batch_dims_do_not_broadcast(%a: tensor<2x4x8xf32>, %b: tensor<3x8x5xf32>) {
  // expected-error @+2 {{'dlc.matmul' op batch dimensions do not broadcast: f32[2, 4, 8] @ f32[3, 8, 5]}}
  // expected-error @+1 {{'dlc.matmul' op failed to infer returned types}}
  %0 = dlc.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x5xf32>) -> tensor<3x4x5xf32>
  return
}

// -----

func.func @matmul_result_ignores_transpose(%a: tensor<8x4xf32>, %b: tensor<8x5xf32>) {
  // expected-error @+2 {{'dlc.matmul' op inferred type(s) 'tensor<4x5xf32>' are incompatible with return type(s) of operation 'tensor<8x5xf32>'}}
  // expected-error @+1 {{'dlc.matmul' op failed to infer returned types}}
  %0 = dlc.matmul %a, %b {transpose_a = true} : (tensor<8x4xf32>, tensor<8x5xf32>) -> tensor<8x5xf32>
  return
}

// -----

func.func @conv2d_input_not_nchw(%x: tensor<28x28xf32>, %w: tensor<6x1x5x5xf32>) {
  // expected-error @+2 {{'dlc.conv2d' op needs x as [N, C, H, W] and w as [O, I, KH, KW], got f32[28, 28] and f32[6, 1, 5, 5]}}
  // expected-error @+1 {{'dlc.conv2d' op failed to infer returned types}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<28x28xf32>, tensor<6x1x5x5xf32>) -> tensor<1x6x24x24xf32>
  return
}

// -----

func.func @conv2d_element_types_differ(%x: tensor<1x1x28x28xf32>, %w: tensor<6x1x5x5xf16>) {
  // expected-error @+2 {{'dlc.conv2d' op element types differ: x is f32[1, 1, 28, 28], w is f16[6, 1, 5, 5]}}
  // expected-error @+1 {{'dlc.conv2d' op failed to infer returned types}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x28x28xf32>, tensor<6x1x5x5xf16>) -> tensor<1x6x24x24xf32>
  return
}

// -----

func.func @conv2d_missing_groups(%x: tensor<1x1x28x28xf32>, %w: tensor<6x1x5x5xf32>) {
  // expected-error @+1 {{'dlc.conv2d' op requires attribute 'groups'}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>) -> tensor<1x6x24x24xf32>
  return
}

// -----

func.func @conv2d_strides_count(%x: tensor<1x1x28x28xf32>, %w: tensor<6x1x5x5xf32>) {
  // expected-error @+2 {{'dlc.conv2d' op strides needs 2 values, got 1}}
  // expected-error @+1 {{'dlc.conv2d' op failed to infer returned types}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>) -> tensor<1x6x24x24xf32>
  return
}

// -----

func.func @conv2d_padding_count(%x: tensor<1x1x28x28xf32>, %w: tensor<6x1x5x5xf32>) {
  // expected-error @+2 {{'dlc.conv2d' op padding needs 4 values, got 2}}
  // expected-error @+1 {{'dlc.conv2d' op failed to infer returned types}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 2, 2>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>) -> tensor<1x6x28x28xf32>
  return
}

// -----

func.func @conv2d_negative_padding(%x: tensor<1x1x28x28xf32>, %w: tensor<6x1x5x5xf32>) {
  // expected-error @+2 {{'dlc.conv2d' op padding values must be at least 0, got [0, -1, 0, 0]}}
  // expected-error @+1 {{'dlc.conv2d' op failed to infer returned types}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, -1, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>) -> tensor<1x6x24x23xf32>
  return
}

// -----

func.func @conv2d_zero_dilation(%x: tensor<1x1x28x28xf32>, %w: tensor<6x1x5x5xf32>) {
  // expected-error @+2 {{'dlc.conv2d' op dilations values must be at least 1, got [1, 0]}}
  // expected-error @+1 {{'dlc.conv2d' op failed to infer returned types}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 0>, groups = 1 : i64} : (tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>) -> tensor<1x6x24x28xf32>
  return
}

// -----

func.func @conv2d_groups_do_not_divide_channels(%x: tensor<1x6x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+2 {{'dlc.conv2d' op groups = 3 must divide the input channels (6) and the output channels (4)}}
  // expected-error @+1 {{'dlc.conv2d' op failed to infer returned types}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 3 : i64} : (tensor<1x6x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_zero_groups(%x: tensor<1x6x8x8xf32>, %w: tensor<6x6x3x3xf32>) {
  // expected-error @+2 {{'dlc.conv2d' op groups = 0 must divide the input channels (6) and the output channels (6)}}
  // expected-error @+1 {{'dlc.conv2d' op failed to infer returned types}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 0 : i64} : (tensor<1x6x8x8xf32>, tensor<6x6x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv2d_weight_channels_differ(%x: tensor<1x3x8x8xf32>, %w: tensor<6x1x3x3xf32>) {
  // expected-error @+2 {{'dlc.conv2d' op the weights take 1 input channel(s) but x has 3: x is f32[1, 3, 8, 8], w is f32[6, 1, 3, 3] with groups = 1}}
  // expected-error @+1 {{'dlc.conv2d' op failed to infer returned types}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv2d_grouped_weight_channels_differ(%x: tensor<1x8x8x8xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+2 {{'dlc.conv2d' op the weights take 4 input channel(s) but x has 8: x is f32[1, 8, 8, 8], w is f32[8, 2, 3, 3] with groups = 2}}
  // expected-error @+1 {{'dlc.conv2d' op failed to infer returned types}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x8x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv2d_bias_shape(%x: tensor<1x1x28x28xf32>, %w: tensor<6x1x5x5xf32>, %b: tensor<1x6xf32>) {
  // expected-error @+2 {{'dlc.conv2d' op bias must be f32[6], got f32[1, 6]}}
  // expected-error @+1 {{'dlc.conv2d' op failed to infer returned types}}
  %0 = dlc.conv2d %x, %w, %b {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>, tensor<1x6xf32>) -> tensor<1x6x24x24xf32>
  return
}

// -----

func.func @conv2d_window_larger_than_input(%x: tensor<1x1x4x4xf32>, %w: tensor<6x1x5x5xf32>) {
  // expected-error @+2 {{'dlc.conv2d' op a window of 5 does not fit the height of the input, 4 padded to 4}}
  // expected-error @+1 {{'dlc.conv2d' op failed to infer returned types}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<6x1x5x5xf32>) -> tensor<1x6x1x1xf32>
  return
}

// -----

func.func @conv2d_dilated_window_larger_than_input(%x: tensor<1x1x8x8xf32>, %w: tensor<6x1x3x3xf32>) {
  // expected-error @+2 {{'dlc.conv2d' op a window of 9 does not fit the height of the input, 8 padded to 8}}
  // expected-error @+1 {{'dlc.conv2d' op failed to infer returned types}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 4, 1>, groups = 1 : i64} : (tensor<1x1x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x1x6xf32>
  return
}

// -----

func.func @conv2d_result_type_differs(%x: tensor<1x1x28x28xf32>, %w: tensor<6x1x5x5xf32>) {
  // expected-error @+2 {{'dlc.conv2d' op inferred type(s) 'tensor<1x6x24x24xf32>' are incompatible with return type(s) of operation 'tensor<1x6x28x28xf32>'}}
  // expected-error @+1 {{'dlc.conv2d' op failed to infer returned types}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>) -> tensor<1x6x28x28xf32>
  return
}

// -----

func.func @max_pool2d_input_not_nchw(%x: tensor<6x28x28xf32>) {
  // expected-error @+2 {{'dlc.max_pool2d' op needs x as [N, C, H, W], got f32[6, 28, 28]}}
  // expected-error @+1 {{'dlc.max_pool2d' op failed to infer returned types}}
  %0 = dlc.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : tensor<6x28x28xf32> -> tensor<6x14x14xf32>
  return
}

// -----

func.func @max_pool2d_kernel_count(%x: tensor<1x6x28x28xf32>) {
  // expected-error @+2 {{'dlc.max_pool2d' op kernel needs 2 values, got 3}}
  // expected-error @+1 {{'dlc.max_pool2d' op failed to infer returned types}}
  %0 = dlc.max_pool2d %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : tensor<1x6x28x28xf32> -> tensor<1x6x14x14xf32>
  return
}

// -----

func.func @max_pool2d_zero_kernel(%x: tensor<1x6x28x28xf32>) {
  // expected-error @+2 {{'dlc.max_pool2d' op kernel values must be at least 1, got [0, 2]}}
  // expected-error @+1 {{'dlc.max_pool2d' op failed to infer returned types}}
  %0 = dlc.max_pool2d %x {kernel = array<i64: 0, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : tensor<1x6x28x28xf32> -> tensor<1x6x14x14xf32>
  return
}

// -----

func.func @avg_pool2d_zero_stride(%x: tensor<1x6x28x28xf32>) {
  // expected-error @+2 {{'dlc.avg_pool2d' op strides values must be at least 1, got [2, 0]}}
  // expected-error @+1 {{'dlc.avg_pool2d' op failed to infer returned types}}
  %0 = dlc.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 0>, padding = array<i64: 0, 0, 0, 0>} : tensor<1x6x28x28xf32> -> tensor<1x6x14x14xf32>
  return
}

// -----

func.func @max_pool2d_padding_not_smaller_than_kernel(%x: tensor<1x6x28x28xf32>) {
  // expected-error @+2 {{'dlc.max_pool2d' op padding [0, 0, 0, 2] must be smaller than the kernel [3, 2]}}
  // expected-error @+1 {{'dlc.max_pool2d' op failed to infer returned types}}
  %0 = dlc.max_pool2d %x {kernel = array<i64: 3, 2>, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 2>} : tensor<1x6x28x28xf32> -> tensor<1x6x26x29xf32>
  return
}

// -----

func.func @avg_pool2d_window_larger_than_input(%x: tensor<1x6x2x8xf32>) {
  // expected-error @+2 {{'dlc.avg_pool2d' op a window of 3 does not fit the height of the input, 2 padded to 2}}
  // expected-error @+1 {{'dlc.avg_pool2d' op failed to infer returned types}}
  %0 = dlc.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>} : tensor<1x6x2x8xf32> -> tensor<1x6x1x6xf32>
  return
}

// -----

func.func @avg_pool2d_of_integers(%x: tensor<1x6x28x28xi32>) {
  // expected-error @+1 {{'dlc.avg_pool2d' op operand #0 must be ranked tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x6x28x28xi32>'}}
  %0 = dlc.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : tensor<1x6x28x28xi32> -> tensor<1x6x14x14xi32>
  return
}

// -----

func.func @max_pool2d_result_type_differs(%x: tensor<1x6x28x28xf32>) {
  // expected-error @+2 {{'dlc.max_pool2d' op inferred type(s) 'tensor<1x6x14x14xf32>' are incompatible with return type(s) of operation 'tensor<1x6x28x28xf32>'}}
  // expected-error @+1 {{'dlc.max_pool2d' op failed to infer returned types}}
  %0 = dlc.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : tensor<1x6x28x28xf32> -> tensor<1x6x28x28xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

func.func @reduce_sum_axis_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'dlc.reduce_sum' op axis 2 is out of range for f32[4, 8]}}
  // expected-error @+1 {{'dlc.reduce_sum' op failed to infer returned types}}
  %0 = dlc.reduce_sum %x {axes = array<i64: 2>} : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce_mean_negative_axis_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'dlc.reduce_mean' op axis -3 is out of range for f32[4, 8]}}
  // expected-error @+1 {{'dlc.reduce_mean' op failed to infer returned types}}
  %0 = dlc.reduce_mean %x {axes = array<i64: -3>} : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @reduce_max_axis_listed_twice(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'dlc.reduce_max' op axis -1 is listed twice in [1, -1]}}
  // expected-error @+1 {{'dlc.reduce_max' op failed to infer returned types}}
  %0 = dlc.reduce_max %x {axes = array<i64: 1, -1>} : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce_min_result_ignores_keepdims(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'dlc.reduce_min' op inferred type(s) 'tensor<4x1xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{'dlc.reduce_min' op failed to infer returned types}}
  %0 = dlc.reduce_min %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce_sum_missing_axes(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dlc.reduce_sum' op requires attribute 'axes'}}
  %0 = dlc.reduce_sum %x : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_sum_of_booleans(%x: tensor<4xi1>) {
  // expected-error @+1 {{'dlc.reduce_sum' op operand #0 must be ranked tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = dlc.reduce_sum %x {axes = array<i64: 0>} : tensor<4xi1> -> tensor<i1>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

func.func @softmax_of_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'dlc.softmax' op needs an operand of rank at least 1, got f32[]}}
  %0 = dlc.softmax %x {axis = 0 : i64} : tensor<f32>
  return
}

// -----

func.func @softmax_axis_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dlc.softmax' op axis 2 is out of range for f32[4, 8]}}
  %0 = dlc.softmax %x {axis = 2 : i64} : tensor<4x8xf32>
  return
}

// -----

func.func @log_softmax_negative_axis_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dlc.log_softmax' op axis -3 is out of range for f32[4, 8]}}
  %0 = dlc.log_softmax %x {axis = -3 : i64} : tensor<4x8xf32>
  return
}

// -----

func.func @log_softmax_of_integers(%x: tensor<4x8xi32>) {
  // expected-error @+1 {{'dlc.log_softmax' op operand #0 must be ranked tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xi32>'}}
  %0 = "dlc.log_softmax"(%x) {axis = 1 : i64} : (tensor<4x8xi32>) -> tensor<4x8xi32>
  return
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+2 {{'dlc.layer_norm' op scale must be f32[8] to normalise f32[4, 8] from axis -1, got f32[4]}}
  // expected-error @+1 {{'dlc.layer_norm' op failed to infer returned types}}
  %0 = dlc.layer_norm %x, %g : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_scale_element_type(%x: tensor<4x8xf32>, %g: tensor<8xf16>) {
  // expected-error @+2 {{'dlc.layer_norm' op scale must be f32[8] to normalise f32[4, 8] from axis -1, got f16[8]}}
  // expected-error @+1 {{'dlc.layer_norm' op failed to infer returned types}}
  %0 = dlc.layer_norm %x, %g : (tensor<4x8xf32>, tensor<8xf16>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_bias_shape(%x: tensor<2x4x8xf32>, %g: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+2 {{'dlc.layer_norm' op bias must be f32[4, 8] to normalise f32[2, 4, 8] from axis 1, got f32[8]}}
  // expected-error @+1 {{'dlc.layer_norm' op failed to infer returned types}}
  %0 = dlc.layer_norm %x, %g, %b {axis = 1 : i64} : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @layer_norm_axis_out_of_range(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{'dlc.layer_norm' op axis 2 is out of range for f32[4, 8]}}
  // expected-error @+1 {{'dlc.layer_norm' op failed to infer returned types}}
  %0 = dlc.layer_norm %x, %g {axis = 2 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_negative_epsilon(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{'dlc.layer_norm' op epsilon must be non-negative, got -1.000000e-05}}
  // expected-error @+1 {{'dlc.layer_norm' op failed to infer returned types}}
  %0 = dlc.layer_norm %x, %g {epsilon = -1.0e-05 : f64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_of_scalar(%x: tensor<f32>, %g: tensor<f32>) {
  // expected-error @+2 {{'dlc.layer_norm' op needs an operand of rank at least 1, got f32[]}}
  // expected-error @+1 {{'dlc.layer_norm' op failed to infer returned types}}
  %0 = dlc.layer_norm %x, %g : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @rms_norm_scale_shape(%x: tensor<2x16x512xf32>, %g: tensor<512xf32>) {
  // expected-error @+2 {{'dlc.rms_norm' op scale must be f32[16, 512] to normalise f32[2, 16, 512] from axis -2, got f32[512]}}
  // expected-error @+1 {{'dlc.rms_norm' op failed to infer returned types}}
  %0 = dlc.rms_norm %x, %g {axis = -2 : i64} : (tensor<2x16x512xf32>, tensor<512xf32>) -> tensor<2x16x512xf32>
  return
}

// -----

func.func @rms_norm_negative_epsilon(%x: tensor<2x512xf32>, %g: tensor<512xf32>) {
  // expected-error @+2 {{'dlc.rms_norm' op epsilon must be non-negative, got -1.000000e+00}}
  // expected-error @+1 {{'dlc.rms_norm' op failed to infer returned types}}
  %0 = dlc.rms_norm %x, %g {epsilon = -1.0 : f64} : (tensor<2x512xf32>, tensor<512xf32>) -> tensor<2x512xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

func.func @reshape_element_count_differs(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dlc.reshape' op cannot reshape f32[4, 8] (32 elements) to f32[4, 4] (16 elements)}}
  %0 = dlc.reshape %x : tensor<4x8xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @reshape_changes_element_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dlc.reshape' op changes the element type: f32[4, 8] to i32[32]}}
  %0 = dlc.reshape %x : tensor<4x8xf32> -> tensor<32xi32>
  return
}

// -----

func.func @broadcast_to_incompatible(%x: tensor<3xf32>) {
  // expected-error @+1 {{'dlc.broadcast_to' op cannot broadcast f32[3] to f32[4, 4]}}
  %0 = dlc.broadcast_to %x : tensor<3xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @broadcast_to_lower_rank(%x: tensor<1x4xf32>) {
  // expected-error @+1 {{'dlc.broadcast_to' op cannot broadcast f32[1, 4] to f32[4]}}
  %0 = dlc.broadcast_to %x : tensor<1x4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @broadcast_to_changes_element_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dlc.broadcast_to' op changes the element type: f32[4] to f64[2, 4]}}
  %0 = dlc.broadcast_to %x : tensor<4xf32> -> tensor<2x4xf64>
  return
}

// -----

func.func @concat_dimension_differs(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{'dlc.concat' op operand 1 is f32[3, 5], operand 0 is f32[2, 3]: they differ in dimension 0, which is not the concatenation axis 1}}
  // expected-error @+1 {{'dlc.concat' op failed to infer returned types}}
  %0 = dlc.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @concat_third_operand_rank_differs(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  // expected-error @+2 {{'dlc.concat' op operand 2 is f32[2, 3, 1], operand 0 is f32[2, 3]: concatenated tensors need one rank and element type}}
  // expected-error @+1 {{'dlc.concat' op failed to infer returned types}}
  %0 = dlc.concat %a, %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3x1xf32>) -> tensor<6x3xf32>
  return
}

// -----

func.func @concat_element_types_differ(%a: tensor<2x3xf32>, %b: tensor<2x3xbf16>) {
  // expected-error @+2 {{'dlc.concat' op operand 1 is bf16[2, 3], operand 0 is f32[2, 3]: concatenated tensors need one rank and element type}}
  // expected-error @+1 {{'dlc.concat' op failed to infer returned types}}
  %0 = dlc.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xbf16>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_axis_out_of_range(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'dlc.concat' op axis 2 is out of range for f32[2, 3]}}
  // expected-error @+1 {{'dlc.concat' op failed to infer returned types}}
  %0 = dlc.concat %a, %a {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_of_scalars(%a: tensor<f32>) {
  // expected-error @+2 {{'dlc.concat' op needs operands of rank at least 1}}
  // expected-error @+1 {{'dlc.concat' op failed to infer returned types}}
  %0 = dlc.concat %a, %a {axis = 0 : i64} : (tensor<f32>, tensor<f32>) -> tensor<2xf32>
  return
}

// -----

func.func @concat_of_nothing() {
  // expected-error @+2 {{'dlc.concat' op needs at least one operand}}
  // expected-error @+1 {{'dlc.concat' op failed to infer returned types}}
  %0 = dlc.concat {axis = 0 : i64} : () -> tensor<2xf32>
  return
}

// -----

func.func @embedding_table_not_a_matrix(%t: tensor<100xf32>, %ids: tensor<4xi32>) {
  // expected-error @+2 {{'dlc.embedding' op needs a table of shape [V, D], got f32[100]}}
  // expected-error @+1 {{'dlc.embedding' op failed to infer returned types}}
  %0 = dlc.embedding %t, %ids : (tensor<100xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @embedding_float_ids(%t: tensor<100x16xf32>, %ids: tensor<4xf32>) {
  // expected-error @+1 {{'dlc.embedding' op operand #1 must be ranked tensor of 64-bit signless integer or 32-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = dlc.embedding %t, %ids : (tensor<100x16xf32>, tensor<4xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @gather_axis_out_of_range(%x: tensor<4x8xf32>, %i: tensor<3xi64>) {
  // expected-error @+2 {{'dlc.gather' op axis 2 is out of range for f32[4, 8]}}
  // expected-error @+1 {{'dlc.gather' op failed to infer returned types}}
  %0 = dlc.gather %x, %i {axis = 2 : i64} : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  return
}

// -----

func.func @gather_float_indices(%x: tensor<4x8xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{'dlc.gather' op operand #1 must be ranked tensor of 64-bit signless integer or 32-bit signless integer values, but got 'tensor<3xf32>'}}
  %0 = dlc.gather %x, %i {axis = 0 : i64} : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @gather_result_type_differs(%x: tensor<4x8xf32>, %i: tensor<2x3xi32>) {
  // expected-error @+2 {{'dlc.gather' op inferred type(s) 'tensor<4x2x3xf32>' are incompatible with return type(s) of operation 'tensor<4x6xf32>'}}
  // expected-error @+1 {{'dlc.gather' op failed to infer returned types}}
  %0 = dlc.gather %x, %i {axis = 1 : i64} : (tensor<4x8xf32>, tensor<2x3xi32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @pad_negative(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'dlc.pad' op paddings must be non-negative, got low [0, -1] and high [0, 2]}}
  // expected-error @+1 {{'dlc.pad' op failed to infer returned types}}
  %0 = dlc.pad %x {low = array<i64: 0, -1>, high = array<i64: 0, 2>} : tensor<2x3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @pad_count_differs_from_rank(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'dlc.pad' op needs one low and one high padding per dimension of f32[2, 3], got low [1] and high [1, 1]}}
  // expected-error @+1 {{'dlc.pad' op failed to infer returned types}}
  %0 = dlc.pad %x {low = array<i64: 1>, high = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<4x5xf32>
  return
}

// -----

func.func @slice_limit_past_end(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'dlc.slice' op dimension 1 of f32[4, 8]: needs 0 <= start <= limit <= 8 and stride >= 1, got start 0, limit 9, stride 1}}
  // expected-error @+1 {{'dlc.slice' op failed to infer returned types}}
  %0 = dlc.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 9>, strides = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<4x9xf32>
  return
}

// -----

func.func @slice_start_after_limit(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'dlc.slice' op dimension 0 of f32[4, 8]: needs 0 <= start <= limit <= 4 and stride >= 1, got start 3, limit 2, stride 1}}
  // expected-error @+1 {{'dlc.slice' op failed to infer returned types}}
  %0 = dlc.slice %x {starts = array<i64: 3, 0>, limits = array<i64: 2, 8>, strides = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<0x8xf32>
  return
}

// -----

func.func @slice_negative_start(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'dlc.slice' op dimension 1 of f32[4, 8]: needs 0 <= start <= limit <= 8 and stride >= 1, got start -2, limit 8, stride 1}}
  // expected-error @+1 {{'dlc.slice' op failed to infer returned types}}
  %0 = dlc.slice %x {starts = array<i64: 0, -2>, limits = array<i64: 4, 8>, strides = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<4x10xf32>
  return
}

// -----

func.func @slice_zero_stride(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'dlc.slice' op dimension 0 of f32[4, 8]: needs 0 <= start <= limit <= 4 and stride >= 1, got start 0, limit 4, stride 0}}
  // expected-error @+1 {{'dlc.slice' op failed to infer returned types}}
  %0 = dlc.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, strides = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_bounds_count_differs_from_rank(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'dlc.slice' op needs starts, limits and strides for each of the 2 dimensions of f32[4, 8]}}
  // expected-error @+1 {{'dlc.slice' op failed to infer returned types}}
  %0 = dlc.slice %x {starts = array<i64: 0>, limits = array<i64: 4>, strides = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @transpose_repeated_dimension(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'dlc.transpose' op perm [0, 2, 0] is not a permutation of the 3 dimensions of f32[2, 3, 4]}}
  // expected-error @+1 {{'dlc.transpose' op failed to infer returned types}}
  %0 = dlc.transpose %x {perm = array<i64: 0, 2, 0>} : tensor<2x3x4xf32> -> tensor<2x4x2xf32>
  return
}

// -----

func.func @transpose_perm_too_short(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'dlc.transpose' op perm [1, 0] is not a permutation of the 3 dimensions of f32[2, 3, 4]}}
  // expected-error @+1 {{'dlc.transpose' op failed to infer returned types}}
  %0 = dlc.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3x4xf32> -> tensor<3x2xf32>
  return
}

// -----

func.func @transpose_dimension_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'dlc.transpose' op perm [0, 2] is not a permutation of the 2 dimensions of f32[2, 3]}}
  // expected-error @+1 {{'dlc.transpose' op failed to infer returned types}}
  %0 = dlc.transpose %x {perm = array<i64: 0, 2>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @transpose_result_type_differs(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'dlc.transpose' op inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{'dlc.transpose' op failed to infer returned types}}
  %0 = dlc.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

func.func @cross_entropy_float_labels(%logits: tensor<64x10xf32>, %labels: tensor<64xf32>) {
  // expected-error @+1 {{'dlc.cross_entropy' op operand #1 must be ranked tensor of 64-bit signless integer or 32-bit signless integer values, but got 'tensor<64xf32>'}}
  %0 = dlc.cross_entropy %logits, %labels : (tensor<64x10xf32>, tensor<64xf32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_labels_shape(%logits: tensor<64x10xf32>, %labels: tensor<64x1xi32>) {
  // expected-error @+2 {{'dlc.cross_entropy' op logits f32[64, 10] need labels of shape [64] (one class index per row), got i32[64, 1]}}
  // expected-error @+1 {{'dlc.cross_entropy' op failed to infer returned types}}
  %0 = dlc.cross_entropy %logits, %labels : (tensor<64x10xf32>, tensor<64x1xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_scalar_logits(%logits: tensor<f32>, %labels: tensor<i32>) {
  // expected-error @+2 {{'dlc.cross_entropy' op logits f32[] need labels of shape [] (one class index per row), got i32[]}}
  // expected-error @+1 {{'dlc.cross_entropy' op failed to infer returned types}}
  %0 = dlc.cross_entropy %logits, %labels : (tensor<f32>, tensor<i32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_unreduced_result_is_per_example(%logits: tensor<64x10xf32>, %labels: tensor<64xi32>) {
  // expected-error @+2 {{'dlc.cross_entropy' op inferred type(s) 'tensor<64xf32>' are incompatible with return type(s) of operation 'tensor<f32>'}}
  // expected-error @+1 {{'dlc.cross_entropy' op failed to infer returned types}}
  %0 = dlc.cross_entropy %logits, %labels {reduction = #dlc<reduction none>} : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_label_smoothing_of_one(%logits: tensor<64x10xf32>, %labels: tensor<64xi32>) {
  // expected-error @+2 {{'dlc.cross_entropy' op label_smoothing must be in [0, 1), got 1.000000e+00}}
  // expected-error @+1 {{'dlc.cross_entropy' op failed to infer returned types}}
  %0 = dlc.cross_entropy %logits, %labels {label_smoothing = 1.0 : f64} : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_negative_label_smoothing(%logits: tensor<64x10xf32>, %labels: tensor<64xi32>) {
  // expected-error @+2 {{'dlc.cross_entropy' op label_smoothing must be in [0, 1), got -1.000000e-01}}
  // expected-error @+1 {{'dlc.cross_entropy' op failed to infer returned types}}
  %0 = dlc.cross_entropy %logits, %labels {label_smoothing = -0.1 : f64} : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_ignore_index_beyond_the_label_type(%logits: tensor<64x10xf32>, %labels: tensor<64xi32>) {
  // expected-error @+2 {{'dlc.cross_entropy' op ignore_index 4294967296 is not an i32 label}}
  // expected-error @+1 {{'dlc.cross_entropy' op failed to infer returned types}}
  %0 = dlc.cross_entropy %logits, %labels {ignore_index = 4294967296 : i64} : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_unknown_reduction(%logits: tensor<64x10xf32>, %labels: tensor<64xi32>) {
  // expected-error @+2 {{expected ::dlc::LossReduction to be one of: none, mean, sum}}
  // expected-error @+1 {{failed to parse Dlc_LossReductionAttr parameter 'value' which is to be a `::dlc::LossReduction`}}
  %0 = dlc.cross_entropy %logits, %labels {reduction = #dlc<reduction avg>} : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
  return
}

// -----

func.func @mse_shapes_differ(%p: tensor<64x1xf32>, %t: tensor<64xf32>) {
  // expected-error @+2 {{'dlc.mse' op prediction and target differ: f32[64, 1] vs f32[64]}}
  // expected-error @+1 {{'dlc.mse' op failed to infer returned types}}
  %0 = dlc.mse %p, %t : (tensor<64x1xf32>, tensor<64xf32>) -> tensor<f32>
  return
}

// -----

func.func @mse_element_types_differ(%p: tensor<64xf32>, %t: tensor<64xf16>) {
  // expected-error @+2 {{'dlc.mse' op prediction and target differ: f32[64] vs f16[64]}}
  // expected-error @+1 {{'dlc.mse' op failed to infer returned types}}
  %0 = dlc.mse %p, %t : (tensor<64xf32>, tensor<64xf16>) -> tensor<f32>
  return
}

// -----

func.func @mse_reduced_result_is_scalar(%p: tensor<64xf32>, %t: tensor<64xf32>) {
  // expected-error @+2 {{'dlc.mse' op inferred type(s) 'tensor<f32>' are incompatible with return type(s) of operation 'tensor<64xf32>'}}
  // expected-error @+1 {{'dlc.mse' op failed to infer returned types}}
  %0 = dlc.mse %p, %t {reduction = #dlc<reduction sum>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return
}
