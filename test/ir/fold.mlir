// RUN: dlc-opt %s --split-input-file --canonicalize | FileCheck %s

// A reshape to its operand's own type is the operand.

// CHECK-LABEL: func.func @reshape_to_same_type_folds_away
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x8xf32>)
//   CHECK-NOT:   dlc.reshape
//       CHECK:   return %[[X]] : tensor<4x8xf32>
func.func @reshape_to_same_type_folds_away(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = dlc.reshape %x : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// reshape(reshape(x)) reads x directly; the inner reshape is then dead.

// CHECK-LABEL: func.func @reshape_of_reshape_is_one_reshape
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x8xf32>)
//       CHECK:   %[[R:.+]] = dlc.reshape %[[X]] : tensor<4x8xf32> -> tensor<2x16xf32>
//   CHECK-NOT:   dlc.reshape
//       CHECK:   return %[[R]] : tensor<2x16xf32>
func.func @reshape_of_reshape_is_one_reshape(%x: tensor<4x8xf32>) -> tensor<2x16xf32> {
  %0 = dlc.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %1 = dlc.reshape %0 : tensor<32xf32> -> tensor<2x16xf32>
  return %1 : tensor<2x16xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_chain_is_one_reshape
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x8xf32>)
//       CHECK:   %[[R:.+]] = dlc.reshape %[[X]] : tensor<4x8xf32> -> tensor<8x4xf32>
//   CHECK-NOT:   dlc.reshape
//       CHECK:   return %[[R]] : tensor<8x4xf32>
func.func @reshape_chain_is_one_reshape(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = dlc.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %1 = dlc.reshape %0 : tensor<32xf32> -> tensor<2x16xf32>
  %2 = dlc.reshape %1 : tensor<2x16xf32> -> tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}

// -----

// Reshaping there and back again leaves x.

// CHECK-LABEL: func.func @reshape_there_and_back_folds_away
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x8xf32>)
//   CHECK-NOT:   dlc.reshape
//       CHECK:   return %[[X]] : tensor<4x8xf32>
func.func @reshape_there_and_back_folds_away(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = dlc.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %1 = dlc.reshape %0 : tensor<32xf32> -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// An inner reshape with another user stays for that user.

// CHECK-LABEL: func.func @shared_inner_reshape_stays
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x8xf32>)
//   CHECK-DAG:   %[[FLAT:.+]] = dlc.reshape %[[X]] : tensor<4x8xf32> -> tensor<32xf32>
//   CHECK-DAG:   %[[R:.+]] = dlc.reshape %[[X]] : tensor<4x8xf32> -> tensor<2x16xf32>
//       CHECK:   return %[[FLAT]], %[[R]] : tensor<32xf32>, tensor<2x16xf32>
func.func @shared_inner_reshape_stays(%x: tensor<4x8xf32>) -> (tensor<32xf32>, tensor<2x16xf32>) {
  %0 = dlc.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %1 = dlc.reshape %0 : tensor<32xf32> -> tensor<2x16xf32>
  return %0, %1 : tensor<32xf32>, tensor<2x16xf32>
}

// -----

// Constants fold to themselves: canonicalisation keeps them and their uses.

// CHECK-LABEL: func.func @constants_stay
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<4x10xf32>)
//   CHECK-DAG:   %[[HALF:.+]] = dlc.constant dense<5.000000e-01> : tensor<f32>
//   CHECK-DAG:   %[[IDS:.+]] = dlc.constant dense<[1, 2, 3]> : tensor<3xi32>
//       CHECK:   %[[Y:.+]] = dlc.mul %[[X]], %[[HALF]] : (tensor<4x10xf32>, tensor<f32>) -> tensor<4x10xf32>
//       CHECK:   return %[[Y]], %[[IDS]] : tensor<4x10xf32>, tensor<3xi32>
func.func @constants_stay(%x: tensor<4x10xf32>) -> (tensor<4x10xf32>, tensor<3xi32>) {
  %c = dlc.constant dense<5.000000e-01> : tensor<f32>
  %0 = dlc.mul %x, %c : (tensor<4x10xf32>, tensor<f32>) -> tensor<4x10xf32>
  %ids = dlc.constant dense<[1, 2, 3]> : tensor<3xi32>
  return %0, %ids : tensor<4x10xf32>, tensor<3xi32>
}

// -----

// Over a group of one rank (a mesh axis of size 1) every collective is its
// operand; over two it stays.

// CHECK-LABEL: func.func @single_rank_collectives_fold_away
//  CHECK-SAME:   (%[[X:[^:]+]]: tensor<2x3xf32>)
//   CHECK-NOT:   dlc.
//       CHECK:   return %[[X]] : tensor<2x3xf32>
func.func @single_rank_collectives_fold_away(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.shard %x {axis = 0 : i64, mesh_axes = ["data"], group_size = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = dlc.all_reduce %0 {kind = #dlc<collective_reduction avg>, mesh_axes = ["data"], group_size = 1 : i64} : tensor<2x3xf32>
  %2 = dlc.all_gather %1 {axis = 0 : i64, mesh_axes = ["data"], group_size = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  %3 = dlc.reduce_scatter %2 {kind = #dlc<collective_reduction sum>, axis = 1 : i64, mesh_axes = ["data"], group_size = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  %4 = dlc.all_to_all %3 {split_axis = 0 : i64, concat_axis = 1 : i64, mesh_axes = ["model"], group_size = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  %5 = dlc.broadcast %4 {root = 0 : i64, mesh_axes = ["data"], group_size = 1 : i64} : tensor<2x3xf32>
  return %5 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @two_rank_all_reduce_stays
//       CHECK:   dlc.all_reduce
func.func @two_rank_all_reduce_stays(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlc.all_reduce %x {kind = #dlc<collective_reduction sum>, mesh_axes = ["data"], group_size = 2 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
