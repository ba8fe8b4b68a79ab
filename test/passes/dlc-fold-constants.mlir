// RUN: dlc-opt %s --split-input-file --verify-diagnostics --dlc-fold-constants | FileCheck %s

// The causal mask of attention is known at compile time: iota, iota, compare
// become one i1 constant, and the iotas go.

// CHECK-LABEL: func.func @causal_mask_folds_to_a_constant
//   CHECK-NOT:   dlc.iota
//   CHECK-NOT:   dlc.compare
//       CHECK:   %[[M:.+]] = dlc.constant dense<{{\[}}[true, false, false], [true, true, false], [true, true, true]]> : tensor<3x3xi1>
//       CHECK:   return %[[M]]
func.func @causal_mask_folds_to_a_constant() -> tensor<3x3xi1> {
  %r = dlc.iota 0 : tensor<3x3xi32>
  %c = dlc.iota 1 : tensor<3x3xi32>
  %m = dlc.compare ge, %r, %c : (tensor<3x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi1>
  return %m : tensor<3x3xi1>
}

// -----

// A chain folds op by op: each result is an operand of the next fold.

// CHECK-LABEL: func.func @chain_folds_to_one_constant
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<2xf32>)
//       CHECK:   %[[C:.+]] = dlc.constant dense<[2.000000e+00, 4.000000e+00]> : tensor<2xf32>
//       CHECK:   %[[Y:.+]] = dlc.mul %[[X]], %[[C]]
//       CHECK:   return %[[Y]]
func.func @chain_folds_to_one_constant(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = dlc.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %one = dlc.constant dense<1.0> : tensor<f32>
  %0 = dlc.add %a, %one : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %1 = dlc.log %0 : tensor<2xf32>
  %2 = dlc.exp %1 : tensor<2xf32>
  %3 = dlc.mul %x, %2 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %3 : tensor<2xf32>
}

// -----

// Results round to the declared type once, as the oracle does at run time:
// 0.1 is 0x3DCD in bf16 and 0x2E66 in f16; equal elements make a splat.

// CHECK-LABEL: func.func @half_precision_results_round_once
//   CHECK-DAG:   dlc.constant dense<[1.000000e+00, 1.000980e-01]> : tensor<2xbf16>
//   CHECK-DAG:   dlc.constant dense<[1.000000e+00, 9.997550e-02]> : tensor<2xf16>
//   CHECK-DAG:   dlc.constant dense<1.500000e+00> : tensor<4xf16>
//   CHECK-NOT:   dlc.cast
//   CHECK-NOT:   dlc.add
func.func @half_precision_results_round_once() -> (tensor<2xbf16>, tensor<2xf16>, tensor<4xf16>) {
  %a = dlc.constant dense<[1.0, 0.1]> : tensor<2xf32>
  %0 = dlc.cast %a : tensor<2xf32> -> tensor<2xbf16>
  %1 = dlc.cast %a : tensor<2xf32> -> tensor<2xf16>
  %h = dlc.constant dense<[0.5, 0.5, 0.5, 0.5]> : tensor<4xf16>
  %one = dlc.constant dense<1.0> : tensor<f16>
  %2 = dlc.add %h, %one : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  return %0, %1, %2 : tensor<2xbf16>, tensor<2xf16>, tensor<4xf16>
}

// -----

// Integers keep their width: i32 wraps, i64 holds what i32 cannot, and a
// cast to i1 is `x != 0`.

// CHECK-LABEL: func.func @integer_results_keep_their_width
//   CHECK-DAG:   dlc.constant dense<[-2147483648, 0]> : tensor<2xi32>
//   CHECK-DAG:   dlc.constant dense<[2147483648, 0]> : tensor<2xi64>
//   CHECK-DAG:   dlc.constant dense<[true, false]> : tensor<2xi1>
func.func @integer_results_keep_their_width() -> (tensor<2xi32>, tensor<2xi64>, tensor<2xi1>) {
  %a = dlc.constant dense<[2147483647, -1]> : tensor<2xi32>
  %one = dlc.constant dense<1> : tensor<i32>
  %0 = dlc.add %a, %one : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
  %b = dlc.constant dense<[2147483647, -1]> : tensor<2xi64>
  %one64 = dlc.constant dense<1> : tensor<i64>
  %1 = dlc.add %b, %one64 : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %2 = dlc.cast %1 : tensor<2xi64> -> tensor<2xi1>
  return %0, %1, %2 : tensor<2xi32>, tensor<2xi64>, tensor<2xi1>
}

// -----

// Parameters and inputs are not constants: nothing that reads them folds.
// An iota that only they read stays an iota (it costs nothing to compute).

// CHECK-LABEL: func.func @params_and_inputs_never_fold
//       CHECK:   dlc.param "w"
//       CHECK:   dlc.iota
//       CHECK:   dlc.add
//       CHECK:   dlc.add
//       CHECK:   dlc.mul
func.func @params_and_inputs_never_fold(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %w = dlc.param "w" {init = {kind = "ones"}} : tensor<4xf32>
  %i = dlc.iota 0 : tensor<4xf32>
  %one = dlc.constant dense<1.0> : tensor<f32>
  %0 = dlc.add %w, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = dlc.add %x, %i : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = dlc.mul %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0, %2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A result above max-elements (2^20 by default) stays computed.

// CHECK-LABEL: func.func @large_result_stays_computed
//       CHECK:   dlc.iota 0
//       CHECK:   dlc.iota 1
//       CHECK:   dlc.compare
//   CHECK-NOT:   dlc.constant
func.func @large_result_stays_computed() -> tensor<1024x1025xi1> {
  %r = dlc.iota 0 : tensor<1024x1025xi32>
  %c = dlc.iota 1 : tensor<1024x1025xi32>
  %m = dlc.compare ge, %r, %c : (tensor<1024x1025xi32>, tensor<1024x1025xi32>) -> tensor<1024x1025xi1>
  return %m : tensor<1024x1025xi1>
}

// -----

// An evaluation that fails (integer division by zero) is left for the run
// to report, at the op's location; folding neither fails nor prints anything.

// CHECK-LABEL: func.func @failing_evaluation_stays
//       CHECK:   dlc.div
func.func @failing_evaluation_stays() -> tensor<2xi32> {
  %a = dlc.constant dense<[1, 2]> : tensor<2xi32>
  %z = dlc.constant dense<[1, 0]> : tensor<2xi32>
  %0 = dlc.div %a, %z : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
