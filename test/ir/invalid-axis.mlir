// RUN: dlc-opt %s --split-input-file --verify-diagnostics

// Regressions: negative axes print as signed numbers (I64Attr getters return
// uint64_t), and a non-integer softmax axis fails ODS's constraint instead of
// crashing shape inference during parsing.

func.func @iota_negative_axis_out_of_range() {
  // expected-error @+1 {{'dlc.iota' op axis -5 is out of range for i32[4, 4]}}
  %0 = dlc.iota -5 : tensor<4x4xi32>
  return
}

// -----

func.func @gather_negative_axis_out_of_range(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  // expected-error @+2 {{'dlc.gather' op axis -3 is out of range for f32[4, 8]}}
  // expected-error @+1 {{'dlc.gather' op failed to infer returned types}}
  %0 = dlc.gather %x, %i {axis = -3 : i64} : (tensor<4x8xf32>, tensor<3xi32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @concat_negative_axis_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'dlc.concat' op axis -3 is out of range for f32[4, 8]}}
  // expected-error @+1 {{'dlc.concat' op failed to infer returned types}}
  %0 = dlc.concat %x, %x {axis = -3 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @softmax_axis_not_an_integer(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dlc.softmax' op attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute}}
  %0 = dlc.softmax %x {axis = "last"} : tensor<4x8xf32>
  return
}
