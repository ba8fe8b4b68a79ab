// RUN: dlc-opt %s --split-input-file --dlc-precision=mode=bf16 | FileCheck %s --check-prefix=BF16
// RUN: dlc-opt %s --split-input-file --dlc-precision=mode=f16 | FileCheck %s --check-prefix=F16
// RUN: dlc-opt %s --split-input-file --dlc-precision=mode=tf32 | FileCheck %s --check-prefix=TF32
// RUN: dlc-opt %s --split-input-file --dlc-precision=mode=f32 | FileCheck %s --check-prefix=F32
// RUN: dlc-opt %s --split-input-file --dlc-precision | FileCheck %s --check-prefix=MODULE
// RUN: not dlc-opt %s --split-input-file --dlc-precision=mode=fp8 2>&1 | FileCheck %s --check-prefix=BAD

// The policy is the ops' (Dlc_ReducedPrecision): the matmul's operands are
// cast down and its result back up; the softmax after it stays f32.
// BF16-LABEL: func.func @mlp
//       BF16:   %[[X:.*]] = dlc.cast %arg0 : tensor<4x8xf32> -> tensor<4x8xbf16>
//       BF16:   %[[W:.*]] = dlc.cast %arg1 : tensor<8x2xf32> -> tensor<8x2xbf16>
//       BF16:   %[[M:.*]] = dlc.matmul %[[X]], %[[W]] : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
//       BF16:   %[[B:.*]] = dlc.cast %[[M]] : tensor<4x2xbf16> -> tensor<4x2xf32>
//       BF16:   %[[S:.*]] = dlc.softmax %[[B]] {{.*}}: tensor<4x2xf32>
//       BF16:   return %[[S]]
//        F16:   dlc.matmul {{.*}} -> tensor<4x2xf16>
//        F16:   dlc.softmax {{.*}}: tensor<4x2xf32>
// TF32 keeps the types and lets the products round their operands.
//       TF32:   dlc.matmul %arg0, %arg1 {precision = #dlc<precision tensorfloat32>} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
//   TF32-NOT:   dlc.cast
//        F32:   dlc.matmul %arg0, %arg1 : (tensor<4x8xf32>
//    F32-NOT:   #dlc<precision
//     MODULE:   dlc.matmul %arg0, %arg1 : (tensor<4x8xf32>
//        BAD: dlc-precision: mode must be f32, tf32, bf16 or f16, not 'fp8'
func.func @mlp(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %0 = dlc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %1 = dlc.softmax %0 {axis = -1 : i64} : tensor<4x2xf32>
  return %1 : tensor<4x2xf32>
}

// -----

// Convolutions too, bias included; a module's dlc.precision (the driver's
// --precision) is the mode when the pass is given none.
//  MODULE-LABEL: func.func @conv
//        MODULE:   dlc.cast %arg0 : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf16>
//        MODULE:   dlc.cast %arg1 : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf16>
//        MODULE:   dlc.cast %arg2 : tensor<4xf32> -> tensor<4xf16>
//        MODULE:   dlc.conv2d {{.*}} -> tensor<1x4x6x6xf16>
//        MODULE:   dlc.cast {{.*}} : tensor<1x4x6x6xf16> -> tensor<1x4x6x6xf32>
//     TF32-LABEL: func.func @conv
//           TF32:   dlc.conv2d {{.*}}precision = #dlc<precision tensorfloat32>
module attributes {dlc.precision = "f16"} {
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %0 = dlc.conv2d %x, %w, %b {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>,
      dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}
}

// -----

// Ops already in a low precision, and integer products, are left alone.
// BF16-LABEL: func.func @already_low
//   BF16-NOT:   dlc.cast
//       BF16:   dlc.matmul %arg0, %arg0 : (tensor<4x4xf16>
//       BF16:   dlc.matmul %arg1, %arg1 : (tensor<4x4xi32>
func.func @already_low(%h: tensor<4x4xf16>, %i: tensor<4x4xi32>) -> (tensor<4x4xf16>, tensor<4x4xi32>) {
  %0 = dlc.matmul %h, %h : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
  %1 = dlc.matmul %i, %i : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi32>
  return %0, %1 : tensor<4x4xf16>, tensor<4x4xi32>
}
