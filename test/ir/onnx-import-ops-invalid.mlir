// RUN: dlc-opt %s --split-input-file --verify-diagnostics

// Verifier cases of the ops the ONNX importer added.

func.func @erf_of_integers(%x: tensor<4xi32>) {
  // expected-error @+1 {{'dlc.erf' op needs a floating-point operand, got i32[4]}}
  %0 = dlc.erf %x : tensor<4xi32>
  return
}

// -----

func.func @reduce_prod_axis_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'dlc.reduce_prod' op axis 2 is out of range for f32[2, 3]}}
  // expected-error @+1 {{'dlc.reduce_prod' op failed to infer returned types}}
  %0 = dlc.reduce_prod %x {axes = array<i64: 2>} : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @data_param_without_value() {
  // expected-error @+1 {{'dlc.param' op initialiser 'data' needs 'value' (an elements attribute holding the parameter's value)}}
  %0 = dlc.param "w" {init = {kind = "data"}} : tensor<2xf32>
  return
}

// -----

func.func @data_param_of_another_type() {
  // expected-error @+1 {{'dlc.param' op initialiser 'data' holds f32[3], but the parameter is f32[2]}}
  %0 = dlc.param "w" {init = {kind = "data", value = dense<1.0> : tensor<3xf32>}} : tensor<2xf32>
  return
}
