// RUN: dlc-opt %s --split-input-file --canonicalize | FileCheck %s

// Multiplying by a splat of exactly one is the identity, on either side.

// CHECK-LABEL: func.func @mul_by_one_is_x
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x8xf32>)
//   CHECK-NOT:   dlc.mul
//       CHECK:   return %[[X]], %[[X]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @mul_by_one_is_x(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %one = dlc.constant dense<1.0> : tensor<f32>
  %0 = dlc.mul %x, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = dlc.mul %one, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @add_and_sub_zero_are_x
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x8xi32>)
//   CHECK-NOT:   dlc.add
//   CHECK-NOT:   dlc.sub
//       CHECK:   return %[[X]], %[[X]], %[[X]]
func.func @add_and_sub_zero_are_x(%x: tensor<4x8xi32>) -> (tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xi32>) {
  %zero = dlc.constant dense<0> : tensor<8xi32>
  %0 = dlc.add %x, %zero : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  %1 = dlc.add %zero, %x : (tensor<8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %2 = dlc.sub %x, %zero : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  return %0, %1, %2 : tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xi32>
}

// -----

// CHECK-LABEL: func.func @div_by_one_is_x
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4xbf16>)
//   CHECK-NOT:   dlc.div
//       CHECK:   return %[[X]] : tensor<4xbf16>
func.func @div_by_one_is_x(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %one = dlc.constant dense<1.0> : tensor<4xbf16>
  %0 = dlc.div %x, %one : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// The identity would drop a broadcast: x * ones(3, 4) is x repeated, not x.

// CHECK-LABEL: func.func @mul_by_one_that_broadcasts_x_stays
//       CHECK:   %[[Y:.+]] = dlc.mul
//       CHECK:   return %[[Y]] : tensor<3x4xf32>
func.func @mul_by_one_that_broadcasts_x_stays(%x: tensor<4xf32>) -> tensor<3x4xf32> {
  %one = dlc.constant dense<1.0> : tensor<3x4xf32>
  %0 = dlc.mul %x, %one : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Only splats of exactly the identity fold; 0 - x is not x, and x / 0 is not
// a rewrite of anything.

// CHECK-LABEL: func.func @non_identities_stay
//       CHECK:   dlc.mul
//       CHECK:   dlc.mul
//       CHECK:   dlc.sub
//       CHECK:   dlc.div
//       CHECK:   dlc.add
func.func @non_identities_stay(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %two = dlc.constant dense<2.0> : tensor<f32>
  %mixed = dlc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %zero = dlc.constant dense<0.0> : tensor<f32>
  %one = dlc.constant dense<1.0> : tensor<f32>
  %0 = dlc.mul %x, %two : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %1 = dlc.mul %x, %mixed : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = dlc.sub %zero, %x : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = dlc.div %x, %zero : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %4 = dlc.add %x, %one : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  return %0, %1, %2, %3, %4 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// A transpose and its inverse cancel.

// CHECK-LABEL: func.func @transpose_of_inverse_transpose_is_x
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<1x8x12x64xf32>)
//   CHECK-NOT:   dlc.transpose
//       CHECK:   return %[[X]]
func.func @transpose_of_inverse_transpose_is_x(%x: tensor<1x8x12x64xf32>) -> tensor<1x8x12x64xf32> {
  %0 = dlc.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<1x8x12x64xf32> -> tensor<1x12x8x64xf32>
  %1 = dlc.transpose %0 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x12x8x64xf32> -> tensor<1x8x12x64xf32>
  return %1 : tensor<1x8x12x64xf32>
}

// -----

// Two rotations compose into one transpose: result dimension i is x's
// dimension p[q[i]].

// CHECK-LABEL: func.func @transpose_chain_is_one_transpose
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<2x3x4xf32>)
//       CHECK:   %[[T:.+]] = dlc.transpose %[[X]] {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
//   CHECK-NOT:   dlc.transpose
//       CHECK:   return %[[T]]
func.func @transpose_chain_is_one_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = dlc.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = dlc.transpose %0 {perm = array<i64: 1, 2, 0>} : tensor<3x4x2xf32> -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// The inner transpose has another user, so it stays; the outer one still
// reads x directly.

// CHECK-LABEL: func.func @shared_inner_transpose_stays
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<2x3xf32>)
//       CHECK:   %[[T:.+]] = dlc.transpose %[[X]] {perm = array<i64: 1, 0>}
//       CHECK:   return %[[T]], %[[X]]
func.func @shared_inner_transpose_stays(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>) {
  %0 = dlc.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = dlc.transpose %0 {perm = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  return %0, %1 : tensor<3x2xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @identity_transpose_is_x
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<2x3xf32>)
//   CHECK-NOT:   dlc.transpose
//       CHECK:   return %[[X]]
func.func @identity_transpose_is_x(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.transpose %x {perm = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_and_cast_to_same_type_are_x
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<2x3xf16>)
//   CHECK-NOT:   dlc.broadcast_to
//   CHECK-NOT:   dlc.cast
//       CHECK:   return %[[X]], %[[X]]
func.func @broadcast_and_cast_to_same_type_are_x(%x: tensor<2x3xf16>) -> (tensor<2x3xf16>, tensor<2x3xf16>) {
  %0 = dlc.broadcast_to %x : tensor<2x3xf16> -> tensor<2x3xf16>
  %1 = dlc.cast %x : tensor<2x3xf16> -> tensor<2x3xf16>
  return %0, %1 : tensor<2x3xf16>, tensor<2x3xf16>
}

// -----

// CHECK-LABEL: func.func @cast_to_another_type_stays
//       CHECK:   dlc.cast %{{.+}} : tensor<2xf32> -> tensor<2xf16>
func.func @cast_to_another_type_stays(%x: tensor<2xf32>) -> tensor<2xf16> {
  %0 = dlc.cast %x : tensor<2xf32> -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

// The add broadcasts the bias itself: the explicit broadcast goes.

// CHECK-LABEL: func.func @broadcast_into_elementwise_op_is_dropped
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x8xf32>, %[[B:[^:]+]]: tensor<8xf32>, %[[M:[^:]+]]: tensor<4x8xi1>)
//   CHECK-NOT:   dlc.broadcast_to
//       CHECK:   %[[A:.+]] = dlc.add %[[B]], %[[X]] : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
//       CHECK:   %[[S:.+]] = dlc.select %[[M]], %[[X]], %[[B]] : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
//       CHECK:   return %[[A]], %[[S]]
func.func @broadcast_into_elementwise_op_is_dropped(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %m: tensor<4x8xi1>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %bb = dlc.broadcast_to %b : tensor<8xf32> -> tensor<4x8xf32>
  %0 = dlc.add %bb, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = dlc.select %m, %x, %bb : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Without the broadcast the add would compute an [8], not a [4, 8]: it stays.
// Of two broadcasts of the same shape, only the first goes.

// CHECK-LABEL: func.func @broadcast_that_sets_the_shape_stays
//  CHECK-SAME:   (%[[A:[^:]+]]: tensor<8xf32>, %[[B:[^:]+]]: tensor<8xf32>)
//   CHECK-DAG:   %[[BA:.+]] = dlc.broadcast_to %[[A]] : tensor<8xf32> -> tensor<4x8xf32>
//   CHECK-DAG:   %[[BB:.+]] = dlc.broadcast_to %[[B]] : tensor<8xf32> -> tensor<4x8xf32>
//       CHECK:   %[[S1:.+]] = dlc.add %[[BA]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
//       CHECK:   %[[S2:.+]] = dlc.add %[[A]], %[[BB]] : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
//       CHECK:   return %[[S1]], %[[S2]]
func.func @broadcast_that_sets_the_shape_stays(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %ba = dlc.broadcast_to %a : tensor<8xf32> -> tensor<4x8xf32>
  %bb = dlc.broadcast_to %b : tensor<8xf32> -> tensor<4x8xf32>
  %0 = dlc.add %ba, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = dlc.add %ba, %bb : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Broadcasting or reshaping a constant is a constant.

// CHECK-LABEL: func.func @constants_broadcast_and_reshape_at_compile_time
//   CHECK-DAG:   %[[S:.+]] = dlc.constant dense<2.000000e+00> : tensor<3x2xf32>
//   CHECK-DAG:   %[[R:.+]] = dlc.constant dense<{{\[}}[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
//   CHECK-NOT:   dlc.broadcast_to
//   CHECK-NOT:   dlc.reshape
//       CHECK:   return %[[S]], %[[R]]
func.func @constants_broadcast_and_reshape_at_compile_time() -> (tensor<3x2xf32>, tensor<2x3xi32>) {
  %two = dlc.constant dense<2.0> : tensor<f32>
  %0 = dlc.broadcast_to %two : tensor<f32> -> tensor<3x2xf32>
  %c = dlc.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
  %1 = dlc.reshape %c : tensor<6xi32> -> tensor<2x3xi32>
  return %0, %1 : tensor<3x2xf32>, tensor<2x3xi32>
}
